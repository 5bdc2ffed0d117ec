import LivenessCore
import XCTest

/// What the user sees.
final class HUDTests: XCTestCase {
    func testTextsAreTheSpecs() {
        XCTAssertEqual(HUDState.noFace.text, "Position your face in the circle")
        XCTAssertEqual(HUDState.outsideGuide.text, "Move your face into the frame")
        XCTAssertEqual(HUDState.progress(done: 1, total: 2).text, "Almost there, keep going…")
        XCTAssertEqual(HUDState.verifying.text, "Verifying…")
        XCTAssertEqual([HUDState.noFace, .outsideGuide, .progress(done: 0, total: 2), .verifying].map(\.name),
                       ["noFace", "outsideGuide", "progress", "verifying"])
    }

    func testHUDSequenceOfAPassingSession() throws {
        var d = Driver()
        try d.frame(nil)                                  // noFace
        try d.frame(face(x: 0.1))                         // outsideGuide
        try d.frames(10, face())                          // progress 0/2, autoshot
        try d.frame(face(x: 0.95, closure: 0.8))          // blink while outside: outside, not progress
        try d.frame(face())                               // progress 1/2
        try d.frame(nil)                                  // noFace
        try d.frames(2, face(yaw: 10))                    // progress again, then verifying
        XCTAssertEqual(d.events.compactMap(\.hudState), [
            .noFace, .outsideGuide, .progress(done: 0, total: 2), .outsideGuide,
            .progress(done: 1, total: 2), .noFace, .progress(done: 1, total: 2), .verifying,
        ])
        XCTAssertEqual(d.machine.verdict?.status, .passed)
        XCTAssertEqual(d.steps.last?.frame.hud, .verifying)
    }

    func testHUDIsOnlyEmittedOnChange() throws {
        var d = Driver()
        try d.frames(5, face())
        XCTAssertEqual(d.events.compactMap(\.hudState).count, 1)
        XCTAssertTrue(d.steps.allSatisfy { $0.frame.hud == .progress(done: 0, total: 2) })
    }

    func testOutsideTheGuideNeverShowsProgressDuringTheScan() throws {
        var d = Driver()
        try d.startScan()
        try d.frame(face(closure: 0.5))
        for x in stride(from: 0.0, through: 1.0, by: 0.05) {
            let s = try d.frame(face(x: x, y: 0.9))
            XCTAssertEqual(s.frame.inGuide, false)
            XCTAssertEqual(s.frame.hud, .outsideGuide)
        }
    }

    func testPhaseEventsOfAPassingSession() throws {
        var d = Driver()
        try d.startScan()
        try d.frame(face(closure: 0.5))
        try d.frames(2, face(yaw: -9))
        let phases = d.events.compactMap { if case let .phase(p) = $0 { return p } else { return nil } }
        XCTAssertEqual(phases, [.settle, .framing, .scan, .verifying, .done])
    }
}
