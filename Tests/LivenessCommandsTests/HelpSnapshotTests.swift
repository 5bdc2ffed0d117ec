import Foundation
import LivenessCommands
import LivenessKit
import TestSupport
import XCTest

/// The CLI's help texts, compared with the snapshots in Tests/LivenessCommandsTests/Snapshots.
/// Run with UPDATE_SNAPSHOTS=1 to rewrite them after an intended change (then read the diff).
final class HelpSnapshotTests: XCTestCase {
    private func check(_ arguments: [String], _ name: String) throws {
        let console = Console.capturing()
        XCTAssertEqual(LivenessCLI.run(arguments, console: console), 0)
        let url = Fixtures.packageRoot.appendingPathComponent("Tests/LivenessCommandsTests/Snapshots/\(name).txt")
        if ProcessInfo.processInfo.environment["UPDATE_SNAPSHOTS"] == "1" {
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try console.printed.write(to: url, atomically: true, encoding: .utf8)
        }
        let expected = try String(contentsOf: url, encoding: .utf8)
        XCTAssertEqual(console.printed, expected, "help of \(arguments) changed; UPDATE_SNAPSHOTS=1 rewrites \(url.path)")
    }

    func testTopLevelHelp() throws { try check(["--help"], "liveness") }
    func testTraceHelp() throws { try check(["trace", "--help"], "trace") }
    func testAnalyzeHelp() throws { try check(["analyze", "--help"], "analyze") }
    func testKeygenHelp() throws { try check(["keygen", "--help"], "keygen") }
    func testVerifyHelp() throws { try check(["verify", "--help"], "verify") }
    func testReplayHelp() throws { try check(["replay", "--help"], "replay") }
    func testRegressHelp() throws { try check(["regress", "--help"], "regress") }
    func testServeHelp() throws { try check(["serve", "--help"], "serve") }
    func testStreamHelp() throws { try check(["stream", "--help"], "stream") }
    /// liveness-bench's help, from the same spec that parses its arguments.
    func testBenchmarkHelp() throws {
        let url = Fixtures.packageRoot.appendingPathComponent("Tests/LivenessCommandsTests/Snapshots/liveness-bench.txt")
        let help = BenchmarkOptions.spec.help
        if ProcessInfo.processInfo.environment["UPDATE_SNAPSHOTS"] == "1" { try help.write(to: url, atomically: true, encoding: .utf8) }
        XCTAssertEqual(help, try String(contentsOf: url, encoding: .utf8), "UPDATE_SNAPSHOTS=1 rewrites \(url.path)")
    }
    /// Every subcommand has a snapshot test above, and the top-level help lists every one.
    func testEveryHelpTextHasASnapshot() throws {
        let folder = Fixtures.packageRoot.appendingPathComponent("Tests/LivenessCommandsTests/Snapshots")
        let snapshots = Set(try FileManager.default.contentsOfDirectory(atPath: folder.path).map { ($0 as NSString).deletingPathExtension })
        XCTAssertEqual(snapshots, Set(LivenessCLI.specs.keys).union(["liveness", "liveness-bench"]))
        for name in LivenessCLI.specs.keys { XCTAssertTrue(LivenessCLI.help.contains("\n  \(name) "), name) }
    }
    func testHelpSubcommandMatchesFlag() throws {
        let a = Console.capturing(), b = Console.capturing()
        _ = LivenessCLI.run(["help", "analyze"], console: a)
        _ = LivenessCLI.run(["analyze", "--help"], console: b)
        XCTAssertEqual(a.printed, b.printed)
    }
}
