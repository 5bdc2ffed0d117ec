// swift-tools-version:6.0
// The liveness engine: a C shim over OpenCV and dlib, a Swift overlay, a pure-Swift
// state machine, the analysis front ends and the `liveness` command.
//
// Consumable by version: no target uses unsafe flags (SwiftPM refuses them in a package depended
// on by version), and each product links what it uses. Two consequences (docs/building.md):
// - SwiftPM compiles C++ at -O0 in debug builds, where dlib's templates run ~150x slower: pass
//   `-Xcxx -O2` to `swift build` / `swift test` in debug (the README's commands do), or build
//   with `-c release`. The shim warns at compile time when it is built unoptimised.
// - SIMD is chosen at run time, not from the building CPU: the HOG detector's dlib code is also
//   compiled for AVX2/FMA (hog_scan_avx2.cpp) and used when the CPU has them; a few integer
//   loops carry `target_clones`. One binary runs on any x86-64 and gives the same results on all.
import PackageDescription

let package = Package(
    name: "Liveness",
    products: [
        .executable(name: "liveness", targets: ["liveness"]),
        .library(name: "LivenessCore", targets: ["LivenessCore"]),
        .library(name: "FaceTracking", targets: ["FaceTracking"]),
        .library(name: "LivenessKit", targets: ["LivenessKit"]),
        .library(name: "LivenessService", targets: ["LivenessService"]),
        .library(name: "LivenessEvidence", targets: ["LivenessEvidence"]),
        .library(name: "LivenessStore", targets: ["LivenessStore"]),
        .library(name: "LivenessClient", targets: ["LivenessClient"]),
    ],
    targets: [
        // OpenCV 4.6 through pkg-config (Debian's libopencv-dev): the header search path
        // (/usr/include/opencv4) and the libraries. Debian's opencv4.pc lists all 56 modules, so
        // programs load them all at start: measured +0.12 s and +40 MB of mapped libraries per
        // process against the six the shim uses (docs/building.md).
        .systemLibrary(name: "COpenCV", path: "Sources/COpenCV", pkgConfig: "opencv4", providers: [.apt(["libopencv-dev"])]),
        // C header + C++ implementation over OpenCV 4.6 and dlib 19.24. The only code that
        // touches either library.
        .target(
            name: "CFaceTracking",
            dependencies: ["COpenCV"],
            cxxSettings: [
                .define("DLIB_NO_GUI_SUPPORT"),
            ],
            linkerSettings: [
                .linkedLibrary("dlib"),
                // dlib's .pc lists BLAS/LAPACK as absolute paths, which SwiftPM drops.
                .linkedLibrary("blas"), .linkedLibrary("lapack"), .linkedLibrary("m"),
                .linkedLibrary("stdc++"),
                // libavformat and libavcodec read and decode videos (the display matrix, timestamps, the luma
                // plane as the grey frame); libswscale converts a picture to BGR when its colour is read.
                .linkedLibrary("avformat"), .linkedLibrary("avcodec"), .linkedLibrary("avutil"), .linkedLibrary("swscale"),
                .linkedLibrary("png16"), .linkedLibrary("jpeg"),  // image headers and PNG decoding, see png.cpp, jpeg.cpp
            ]
        ),
        // Swift overlay: the only library module that imports CFaceTracking.
        .target(name: "FaceTracking", dependencies: ["CFaceTracking", "LivenessCore"]),
        // The references the tests and benchmarks compare the engine with (dlib's own shape
        // predictor and object detector, OpenCV's own video reader), kept out of the products.
        // It reads the shim's internal C++ headers.
        .target(
            name: "CFaceTrackingReference",
            dependencies: ["CFaceTracking", "COpenCV"],
            cxxSettings: [.headerSearchPath("../CFaceTracking"), .define("DLIB_NO_GUI_SUPPORT")]
        ),
        .target(name: "FaceTrackingReference", dependencies: ["FaceTracking", "CFaceTracking", "CFaceTrackingReference"]),
        // Pure Swift: observations, policy, the state machine, events, verdict. No C, no I/O.
        // Foundation-free rounding (`rounded()`, `round`, `ceil`) lives in libm, which a package
        // using LivenessCore alone must be told to link (the shim's link line hid it here).
        .target(name: "LivenessCore", linkerSettings: [.linkedLibrary("m")]),
        // libsodium (Debian's libsodium-dev), imported by LivenessEvidence only.
        .systemLibrary(name: "CSodium", path: "Sources/CSodium", providers: [.apt(["libsodium-dev"])]),
        // Signed reports: Ed25519 keys, the canonical JSON form, report.sig, verification.
        .target(name: "LivenessEvidence", dependencies: ["CSodium"]),
        // Front ends: video analysis, trace I/O, reports. Depends on the core and the overlay.
        .target(name: "LivenessKit", dependencies: ["LivenessCore", "FaceTracking", "LivenessEvidence"]),
        // The batch layer of `liveness analyze`: jobs over many inputs, sharding (Slurm, Kubernetes,
        // AWS Batch), timeline plots and annotated videos. Apart from LivenessKit, the library a
        // camera service embeds.
        .target(name: "LivenessBatch", dependencies: ["LivenessKit", "LivenessCore", "FaceTracking", "LivenessEvidence"]),
        // The regression harness (`liveness regress`, RegressionSuiteTests): renders the generated
        // cases (python3 Tools/generate_cases.py) and judges them and the labelled shared clips.
        // Apart from LivenessKit, the library a camera service embeds.
        .target(name: "LivenessRegress", dependencies: ["LivenessKit", "LivenessCore", "FaceTracking"]),
        // libwebsockets 4.1 (Debian's libwebsockets-dev), imported by LivenessService only.
        .systemLibrary(name: "CWebSockets", path: "Sources/CWebSockets", providers: [.apt(["libwebsockets-dev"])]),
        // SQLite 3 (Debian's libsqlite3-dev), imported by LivenessStore only.
        .systemLibrary(name: "CSQLite", path: "Sources/CSQLite", providers: [.apt(["libsqlite3-dev"])]),
        // The durable session store of `liveness serve --data-dir` / `--store` (docs/store.md): one
        // protocol, the SQLite and PostgreSQL backends. Stills are sealed with LivenessEvidence's StoreKey (libsodium).
        // libpq (Debian's libpq-dev), imported by LivenessStore only: the PostgreSQL backend.
        .systemLibrary(name: "CPostgres", path: "Sources/CPostgres", providers: [.apt(["libpq-dev"])]),
        .target(name: "LivenessStore", dependencies: ["CSQLite", "CPostgres", "LivenessEvidence"]),
        // The network service: HTTP API and the WebSocket stream on libwebsockets.
        // The hosted page's script, style sheet and HTML are real files, embedded at build time.
        .target(name: "LivenessService", dependencies: ["CWebSockets", "LivenessKit", "LivenessCore", "FaceTracking", "LivenessEvidence",
                                                        "LivenessStore"],
                resources: [.embedInCode("WebFlow/Resources/app.js"), .embedInCode("WebFlow/Resources/app.css"),
                            .embedInCode("WebFlow/Resources/index.html")]),
        // The reference client of `liveness-stream/1`: the HTTP client, the WebSocket connection
        // and the recording streamer behind `liveness stream`, the tests and the benchmark.
        // libwebsockets' client side; apart from the service.
        .target(name: "LivenessClient", dependencies: ["CWebSockets", "LivenessKit", "LivenessCore", "FaceTracking"]),
        // The command-line front ends (analyze, trace, replay, regress, serve, stream), apart from
        // the library API that integrators link (LivenessKit, LivenessService, LivenessClient).
        .target(name: "LivenessCommands", dependencies: ["LivenessKit", "LivenessCore", "FaceTracking", "LivenessService", "LivenessRegress", "LivenessBatch", "LivenessClient",
                                                        "LivenessEvidence", "LivenessStore"]),
        .executableTarget(name: "liveness", dependencies: ["LivenessCommands"]),
        // Benchmarks: per-stage costs and speed ratios measured side by side in one run.
        .executableTarget(name: "liveness-bench", dependencies: ["LivenessKit", "LivenessCore", "FaceTracking", "FaceTrackingReference", "LivenessService", "LivenessClient", "LivenessCommands",
                                                               "LivenessEvidence", "LivenessStore"],
                          path: "Tools/Benchmark"),
        // Paths of test inputs (generated samples, the shared real footage) for the test targets.
        .target(name: "TestSupport", path: "Tests/Support"),
        .testTarget(name: "FaceTrackingTests", dependencies: ["FaceTracking", "FaceTrackingReference", "LivenessCore", "TestSupport"],
                    exclude: ["Fixtures"]),
        .testTarget(name: "LivenessCoreTests", dependencies: ["LivenessCore"]),
        .testTarget(name: "LivenessServiceTests", dependencies: ["LivenessService", "LivenessClient", "LivenessKit", "LivenessCore", "FaceTracking",
                                                                 "TestSupport", "LivenessStore", "LivenessEvidence"]),
        .testTarget(name: "LivenessStoreTests", dependencies: ["LivenessStore", "LivenessEvidence", "TestSupport"]),
        .testTarget(name: "LivenessEvidenceTests", dependencies: ["LivenessEvidence", "LivenessKit", "LivenessCommands", "TestSupport"]),
        .testTarget(name: "LivenessKitTests", dependencies: ["LivenessKit", "LivenessCore", "FaceTracking", "TestSupport",
                                                             "LivenessCommands", "LivenessRegress", "LivenessBatch"]),
        // The command line: each command's options and outputs, its help texts, the files it
        // writes, and the built `liveness` executable run as a user runs it.
        .testTarget(name: "LivenessCommandsTests", dependencies: ["LivenessCommands", "LivenessKit", "LivenessCore", "FaceTracking",
                                                                  "LivenessRegress", "LivenessBatch", "TestSupport"],
                    exclude: ["Snapshots"]),  // the help texts' snapshots, read from the source tree
    ],
    cxxLanguageStandard: .cxx17
)
