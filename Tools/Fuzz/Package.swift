// swift-tools-version:6.0
// libFuzzer targets for every parser of outside input (docs/hardening.md, "Fuzzing"). A package
// of its own so that `swift build` and `swift test` of the engine never see them; it depends on
// the engine's package by path. Build and run with Tools/fuzz.sh, which passes
// `-Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library`.
import Foundation
import PackageDescription

/// The engine's package: two folders up. SwiftPM names a path dependency after its folder.
let engine = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()
let engineName = engine.lastPathComponent

/// One executable per parser; each defines `LLVMFuzzerTestOneInput`.
let fuzzers = ["fuzz-trace-csv", "fuzz-trace-jsonl", "fuzz-arkit-trace", "fuzz-motion", "fuzz-policy", "fuzz-stream"]

let package = Package(
    name: "LivenessFuzz",
    dependencies: [.package(path: engine.path)],
    targets: [
        // What every fuzz target does with an input, and the properties it checks.
        .target(name: "FuzzSupport", dependencies: [
            .product(name: "LivenessKit", package: engineName),
            .product(name: "LivenessCore", package: engineName),
            .product(name: "FaceTracking", package: engineName),
            .product(name: "LivenessService", package: engineName),
        ]),
    ] + fuzzers.map { name in
        .executableTarget(name: name, dependencies: ["FuzzSupport"], path: "Sources/\(name)")
    }
)
