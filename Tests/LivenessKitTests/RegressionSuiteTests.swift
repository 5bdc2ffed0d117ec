import FaceTracking
import Foundation
import TestSupport
import XCTest

import LivenessCommands
@testable import LivenessKit
@testable import LivenessRegress

/// The regression suite in-process: every generated case of Recordings/cases (rendered by
/// Tools/generate_cases.py when missing or stale) must give its expected outcome, and, when
/// ../shared/recordings (or $LIVENESS_RECORDINGS) is present, every `must` of the real clips, and
/// the blink episodes of every labelled clip against the project's labels (issue 26's targets).
/// Skips only when the generated cases cannot be produced (no python3-opencv, ffmpeg or photo).
final class RegressionSuiteTests: XCTestCase {
    private var packageRoot: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
    }

    func testGeneratedCasesAndRealClipsGiveTheirExpectedOutcomes() throws {
        let cases = packageRoot + "/Recordings/cases"
        let model = try LandmarkModel.load()
        do {
            try RegressSuite.generate(directory: cases, model: model) { _ in }
        } catch {
            throw Skip.unavailable("the generated cases cannot be produced: \(error)")
        }
        let suite = RegressSuite(caseDirectories: [cases], realDirectory: RegressSuite.defaultRealDirectory(packageRoot: packageRoot))
        suite.generate = false
        suite.jobs = ProcessInfo.processInfo.activeProcessorCount
        try suite.run(model: model) { _ in }
        XCTAssertGreaterThanOrEqual(suite.caseResults.count, 25, "expected at least 25 generated runs")
        // A case whose output holds a prompt log is judged prompted, every other one passive.
        for r in suite.caseResults {
            XCTAssertEqual(r.challenge, r.name.hasPrefix("prompted-") ? "prompted" : "passive", r.name)
        }
        let report = suite.report()
        XCTAssertTrue(suite.passed, "regression mismatches:\n" + report)
        guard let real = suite.realDirectory else { return }
        // Issue 26's targets over every shared clip, whole clips, against the project's blink
        // labels (checked by eye, docs/blinks.md): precision at least 0.95, recall at least 0.90.
        let labels = try XCTUnwrap(try BlinkLabels.load(BlinkLabels.path(packageRoot: packageRoot)))
        let scores = suite.realResults.compactMap(\.projectBlinkScore)
        XCTAssertEqual(scores.count, labels.clips.count - labels.missingFiles(in: real).count, "every labelled clip in \(real) is scored")
        let total = BlinkScore.total(scores)
        XCTAssertGreaterThan(total.truePositives + total.falseNegatives, 0, "labelled blinks to find")
        XCTAssertGreaterThanOrEqual(total.precision ?? 0, 0.95, "blink precision against the project's labels:\n" + suite.projectBlinkReport())
        XCTAssertGreaterThanOrEqual(total.recall ?? 0, 0.90, "blink recall against the project's labels:\n" + suite.projectBlinkReport())
    }

    func testRegressRejectsMissingBlinkLabels() {
        let console = Console.capturing()
        XCTAssertEqual(LivenessCLI.run(["regress", packageRoot + "/Recordings/cases", "--blink-labels", "/nonexistent/labels.json"],
                                       console: console), 2)
        XCTAssertTrue(console.errors.contains("no blink labels at /nonexistent/labels.json"), console.errors)
    }

    func testRegressRejectsAMissingFolder() {
        let console = Console.capturing()
        XCTAssertEqual(LivenessCLI.run(["regress", "/nonexistent/cases"], console: console), 2)
        XCTAssertTrue(console.errors.contains("no case folder"))
    }
}
