import FaceTracking
import Foundation
import TestSupport
import XCTest

/// The shim's build (docs/building.md): optimised in the test build, and the HOG
/// detector's two code paths (dlib compiled for AVX2/FMA, chosen at run time, and for baseline
/// x86-64) give the same traces byte for byte.
final class SIMDPathTests: XCTestCase {
    /// The README's test command passes -Xcxx -O2: without it dlib runs ~150x slower and the
    /// suite's timings mean nothing.
    func testTheShimIsOptimisedInTheTestBuild() {
        XCTAssertTrue(ShimBuild.current.optimised,
                      "the C++ shim was compiled without optimisation: run `swift test -Xcxx -O2` (README) or a release build")
    }

    /// What the CPU offers, read from /proc/cpuinfo (not from the shim): AVX2 and FMA both.
    private func cpuHasAVX2AndFMA() throws -> Bool {
        #if arch(x86_64)
        let info = try String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)
        guard let line = info.split(separator: "\n").first(where: { $0.hasPrefix("flags") }) else { return false }
        let flags = Set(line.split(separator: " ").map(String.init))
        return flags.contains("avx2") && flags.contains("fma")
        #else
        return false
        #endif
    }

    /// Runs the engine with `environment` added; returns standard output.
    private func run(_ arguments: [String], environment: [String: String]) throws -> String {
        let run = try Fixtures.runLiveness(arguments, environment: environment)
        XCTAssertEqual(run.status, 0, "liveness \(arguments.joined(separator: " ")) with \(environment)")
        return run.output
    }

    func testTheCPUChoosesThePathAndTheEnvironmentCanForceTheBaseline() throws {
        let chosen = try run(["--version"], environment: [:])
        let forced = try run(["--version"], environment: ["LIVENESS_SIMD": "baseline"])
        let expected = try cpuHasAVX2AndFMA() ? "avx2" : "baseline"
        XCTAssertTrue(chosen.contains("HOG on \(expected)"), "this CPU (/proc/cpuinfo) should run the \(expected) path: \(chosen)")
        XCTAssertTrue(forced.contains("HOG on baseline"), forced)
    }

    /// Both paths over whole clips: faces found, lost and found again, two faces, none. The
    /// traces hold every detection's box and every landmark-derived value of every frame.
    func testBothPathsGiveTheSameTraces() throws {
        let directory = try Fixtures.temporaryDirectory(self)
        if try !cpuHasAVX2AndFMA() {
            print("SIMDPathTests: this CPU has no AVX2/FMA: both runs take the baseline path")
        }
        for name in ["blink-then-turn", "two-faces", "no-face", "face-slides-sideways", "attack-photo-pan-off-frame"] {
            let video = try Fixtures.generated("cases/\(name)/video.mp4")
            var traces: [Data] = []
            for (index, environment) in [[:], ["LIVENESS_SIMD": "baseline"]].enumerated() {
                let path = directory.appendingPathComponent("\(name)-\(index).csv").path
                _ = try run(["trace", video, "--output", path], environment: environment)
                traces.append(try Data(contentsOf: URL(fileURLWithPath: path)))
            }
            XCTAssertGreaterThan(traces[0].count, 1000, name)
            XCTAssertEqual(traces[0], traces[1], "\(name): the AVX2 and baseline paths give different traces")
        }
    }
}
