// swift-tools-version:6.0
// The liveness engine: a C shim over OpenCV and dlib, a Swift overlay, a pure-Swift
// state machine, the analysis front ends and the `liveness` command.
import Foundation
import PackageDescription

/// dlib's landmark fitting runs about 2x faster with AVX2/FMA (measured 2.0 -> 0.97 ms per fit).
/// dlib is a header library, so the shim's templates are compiled here: like -march=native,
/// use them when the building CPU has them. LIVENESS_PORTABLE=1 builds for baseline x86-64.
let vectorFlags: [String] = {
    if ProcessInfo.processInfo.environment["LIVENESS_PORTABLE"] != nil { return [] }
    #if arch(x86_64)
    guard let info = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8),
          let line = info.split(separator: "\n").first(where: { $0.hasPrefix("flags") })
    else { return [] }
    let flags = Set(line.split(separator: " ").map(String.init))
    return flags.contains("avx2") && flags.contains("fma") ? ["-mavx2", "-mfma"] : []
    #else
    return []
    #endif
}()

/// The OpenCV modules the shim uses. pkg-config would link all 57; we list the few we need.
let openCVModules = [
    "opencv_core", "opencv_imgproc", "opencv_imgcodecs", "opencv_videoio",
    "opencv_calib3d", "opencv_video",
]

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
    ],
    targets: [
        // C header + C++ implementation over OpenCV 4.6 and dlib 19.24. The only code that
        // touches either library. Built with -O2 even in debug builds: dlib's templates at
        // -O0 are ~150x slower.
        .target(
            name: "CFaceTracking",
            cxxSettings: [
                .define("DLIB_NO_GUI_SUPPORT"),
                .unsafeFlags(["-O2", "-I/usr/include/opencv4", "-fexceptions"] + vectorFlags),
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
            ] + openCVModules.map { .linkedLibrary($0) }
        ),
        // Swift overlay: the only module that imports CFaceTracking.
        .target(name: "FaceTracking", dependencies: ["CFaceTracking"]),
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
        // The command-line front ends (analyze, trace, replay, regress, serve, stream), apart from
        // the library API that integrators link (LivenessKit, LivenessService).
        .target(name: "LivenessCommands", dependencies: ["LivenessKit", "LivenessCore", "FaceTracking", "LivenessService",
                                                        "LivenessEvidence", "LivenessStore"]),
        .executableTarget(name: "liveness", dependencies: ["LivenessCommands"]),
        // Benchmarks: per-stage costs and speed ratios measured side by side in one run.
        .executableTarget(name: "liveness-bench", dependencies: ["LivenessKit", "LivenessCore", "FaceTracking", "LivenessService", "LivenessCommands",
                                                               "LivenessEvidence", "LivenessStore"],
                          path: "Tools/Benchmark"),
        // Paths of test inputs (generated samples, the shared real footage) for the test targets.
        .target(name: "TestSupport", path: "Tests/Support"),
        .testTarget(name: "FaceTrackingTests", dependencies: ["FaceTracking", "LivenessCore", "TestSupport"]),
        .testTarget(name: "LivenessCoreTests", dependencies: ["LivenessCore"]),
        .testTarget(name: "LivenessServiceTests", dependencies: ["LivenessService", "LivenessKit", "LivenessCore", "FaceTracking",
                                                                 "TestSupport", "LivenessStore", "LivenessEvidence"]),
        .testTarget(name: "LivenessStoreTests", dependencies: ["LivenessStore", "LivenessEvidence", "TestSupport"]),
        .testTarget(name: "LivenessEvidenceTests", dependencies: ["LivenessEvidence", "LivenessKit", "LivenessCommands", "TestSupport"]),
        .testTarget(name: "LivenessKitTests", dependencies: ["LivenessKit", "LivenessCore", "FaceTracking", "TestSupport",
                                                             "LivenessCommands"],
                    exclude: ["Snapshots"]),  // the help texts' snapshots, read from the source tree
    ],
    cxxLanguageStandard: .cxx17
)
