import Foundation
import LivenessKit
import TestSupport
import XCTest

@testable import LivenessRegress

/// The project's blink labels (`Recordings/blink-labels.json`) and the scoring `liveness regress`
/// runs with them. The oracle for the scoring is worked out by hand on intervals built for it;
/// for the label file, what the file says (read independently with JSONSerialization).
final class BlinkLabelsTests: XCTestCase {
    private typealias Span = BlinkLabels.Interval

    private func clip(_ blinks: [Span], excluded: [Span] = [], checked: ClosedRange<Double>? = nil) -> BlinkLabels.Clip {
        BlinkLabels.Clip(file: "x.mp4", blinks: blinks, excluded: excluded, checkedSeconds: checked)
    }

    func testEventsMatchBlinksOneToOneClosestFirst() {
        // Label A at 1.0-1.1 s, label B at 1.5-1.6 s. Event e1 (1.25-1.3) lies 0.15 s after A and
        // 0.2 s before B; e2 (1.6-1.7) overlaps B. Closest first: e2-B (gap 0), then e1-A (0.15).
        // Event e3 (3.0) is 1.4 s from anything: false. Label C (5.0) has no event: missed.
        let labels = clip([Span(start: 1.0, end: 1.1), Span(start: 1.5, end: 1.6), Span(start: 5.0, end: 5.1)])
        let events = [Span(start: 1.25, end: 1.3), Span(start: 1.6, end: 1.7), Span(start: 3.0, end: 3.05)]
        let s = BlinkScore(events: events, clip: labels, clipSeconds: 30)
        XCTAssertEqual([s.truePositives, s.falsePositives, s.falseNegatives], [2, 1, 1])
        XCTAssertEqual(s.falseEvents, [Span(start: 3.0, end: 3.05)])
        XCTAssertEqual(s.missed, [Span(start: 5.0, end: 5.1)])
        XCTAssertEqual(s.falsePerMinute!, 2.0, accuracy: 1e-12, "one false event in 30 s")
        XCTAssertEqual(s.precision!, 2.0 / 3.0, accuracy: 1e-12)
        XCTAssertEqual(s.recall!, 2.0 / 3.0, accuracy: 1e-12)
    }

    func testTwoEventsOnOneBlinkCountOneTrueAndOneFalse() {
        // One closure split in two: the nearer half matches, the other is a false event.
        let s = BlinkScore(events: [Span(start: 2.0, end: 2.1), Span(start: 2.25, end: 2.3)],
                           clip: clip([Span(start: 2.0, end: 2.2)]), clipSeconds: 10)
        XCTAssertEqual([s.truePositives, s.falsePositives, s.falseNegatives], [1, 1, 0])
        XCTAssertEqual(s.falseEvents, [Span(start: 2.25, end: 2.3)])
    }

    func testEventsOnAmbiguousClosuresAndWinksCountNeitherWay() {
        // Two events on the excluded interval (4.0-6.0): neither true nor false; the excluded
        // interval is not a blink to find either.
        let s = BlinkScore(events: [Span(start: 4.1, end: 4.2), Span(start: 6.15, end: 6.2)],
                           clip: clip([], excluded: [Span(start: 4.0, end: 6.0)]), clipSeconds: 10)
        XCTAssertEqual([s.truePositives, s.falsePositives, s.falseNegatives, s.onExcluded], [0, 0, 0, 2])
        XCTAssertNil(s.precision)
        XCTAssertNil(s.recall)
    }

    func testTheToleranceIsInclusiveAndNoWider() {
        let labels = clip([Span(start: 1.0, end: 1.0)])
        XCTAssertEqual(BlinkScore(events: [Span(start: 1.2, end: 1.3)], clip: labels, clipSeconds: 5).truePositives, 1, "0.2 s apart")
        XCTAssertEqual(BlinkScore(events: [Span(start: 1.21, end: 1.3)], clip: labels, clipSeconds: 5).falsePositives, 1, "0.21 s apart")
    }

    func testOnlyTheCheckedRangeIsScored() {
        // Checked 10-20 s of a 60 s clip: the event at 5 s is outside (not false); 10 s scored.
        let labels = clip([Span(start: 12, end: 12.1)], checked: 10...20)
        let s = BlinkScore(events: [Span(start: 5, end: 5.1), Span(start: 15, end: 15.1)], clip: labels, clipSeconds: 60)
        XCTAssertEqual([s.truePositives, s.falsePositives, s.falseNegatives], [0, 1, 1])
        XCTAssertEqual(s.seconds, 10, accuracy: 1e-12)
        XCTAssertEqual(s.falsePerMinute!, 6, accuracy: 1e-12)
    }

    func testTotalsAddClipsAndTheirSeconds() {
        var a = BlinkScore()
        a.truePositives = 3; a.falsePositives = 1; a.seconds = 30
        var b = BlinkScore()
        b.truePositives = 5; b.falseNegatives = 2; b.seconds = 90
        let t = BlinkScore.total([a, b])
        XCTAssertEqual([t.truePositives, t.falsePositives, t.falseNegatives], [8, 1, 2])
        XCTAssertEqual(t.falsePerMinute!, 0.5, accuracy: 1e-12, "one false event in two minutes")
    }

    func testTheProjectsLabelFileReadsAsItsJSONSays() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
        let path = BlinkLabels.path(packageRoot: root)
        let labels = try XCTUnwrap(try BlinkLabels.load(path), "Recordings/blink-labels.json is part of the repository")
        let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])
        let entries = try XCTUnwrap(json["clips"] as? [[String: Any]])
        let checked = entries.filter { ($0["checked"] as? Bool) != false }
        XCTAssertEqual(Set(labels.clips.keys), Set(checked.map { $0["file"] as! String }))
        for entry in checked {
            let file = entry["file"] as! String
            let blinks = (entry["blinks"] as? [[String: Any]]) ?? []
            let counted = blinks.filter { ($0["ambiguous"] as? Bool) != true }
            let clip = try XCTUnwrap(labels.clips[file])
            XCTAssertEqual(clip.blinks.count, counted.count, file)
            XCTAssertEqual(clip.excluded.count, blinks.count - counted.count + ((entry["winks"] as? [Any])?.count ?? 0), file)
            XCTAssertEqual(clip.blinks.first?.start, counted.first?["start"] as? Double, file)
        }
    }

    func testMalformedLabelFilesAreClearErrors() throws {
        let dir = try Fixtures.temporaryDirectory(self).path
        XCTAssertNil(try BlinkLabels.load(dir + "/absent.json"), "no file: no labels")
        let cases = [
            ("not-json.json", "{\"clips\": ["),
            ("backwards.json", "{\"clips\": [{\"file\": \"a.mp4\", \"blinks\": [{\"start\": 2.0, \"end\": 1.0}]}]}"),
            ("range.json", "{\"clips\": [{\"file\": \"a.mp4\", \"checkedSeconds\": [5]}]}"),
        ]
        for (name, text) in cases {
            let path = dir + "/" + name
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
            XCTAssertThrowsError(try BlinkLabels.load(path), name) { error in
                XCTAssertTrue(String(describing: error).contains(path), "the error names the file: \(error)")
            }
        }
    }

    func testUncheckedClipsAreNotScoredAndLabelledClipsBeyondLabelsJsonAreAdded() throws {
        let dir = try Fixtures.temporaryDirectory(self).path
        let path = dir + "/labels.json"
        try Data("""
        {"clips": [{"file": "soak.mp4", "blinks": [{"start": 1, "end": 1.1}]},
                   {"file": "draft.mp4", "checked": false, "blinks": [{"start": 1, "end": 1.1}]},
                   {"file": "elsewhere.mp4", "blinks": []},
                   {"file": "known.mp4", "winks": [{"start": 3, "end": 3.4}]}]}
        """.utf8).write(to: URL(fileURLWithPath: path))
        for file in ["soak.mp4", "draft.mp4", "known.mp4"] {
            XCTAssertTrue(FileManager.default.createFile(atPath: dir + "/" + file, contents: Data()))
        }
        let labels = try XCTUnwrap(try BlinkLabels.load(path))
        XCTAssertEqual(Set(labels.clips.keys), ["soak.mp4", "elsewhere.mp4", "known.mp4"])
        let known = RealClip(file: "known.mp4", path: dir + "/known.mp4", blinks: nil, checked: false, must: ["verdict": .string("passed")])
        let clips = labels.apply(to: [known], directory: dir)
        XCTAssertEqual(clips.map(\.file), ["known.mp4", "soak.mp4"], "the soak clip is added; elsewhere.mp4 is not in the folder")
        XCTAssertEqual(clips[0].projectBlinks?.excluded, [Span(start: 3, end: 3.4)])
        XCTAssertEqual(clips[1].projectBlinks?.blinks, [Span(start: 1, end: 1.1)])
        XCTAssertEqual(labels.missingFiles(in: dir), ["elsewhere.mp4"])
    }
}
