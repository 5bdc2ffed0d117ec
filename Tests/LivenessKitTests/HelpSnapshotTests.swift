import Foundation
import LivenessCommands
import LivenessKit
import TestSupport
import XCTest

/// The CLI's help texts, compared with the snapshots in Tests/LivenessKitTests/Snapshots.
/// Run with UPDATE_SNAPSHOTS=1 to rewrite them after an intended change (then read the diff).
final class HelpSnapshotTests: XCTestCase {
    private func check(_ arguments: [String], _ name: String) throws {
        let console = Console.capturing()
        XCTAssertEqual(LivenessCLI.run(arguments, console: console), 0)
        let url = Fixtures.packageRoot.appendingPathComponent("Tests/LivenessKitTests/Snapshots/\(name).txt")
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
    func testHelpSubcommandMatchesFlag() throws {
        let a = Console.capturing(), b = Console.capturing()
        _ = LivenessCLI.run(["help", "analyze"], console: a)
        _ = LivenessCLI.run(["analyze", "--help"], console: b)
        XCTAssertEqual(a.printed, b.printed)
    }
}
