import FaceTracking
import Foundation
import LivenessCore
import LivenessKit
import TestSupport
import XCTest

/// The strongest generated attack, end to end: a print of a blinking face swung ±35° about its
/// vertical axis (Recordings/cases/attack-photo-swing-vertical, rendered by Tools/setup.sh).
/// The swing reads as a head turn, so the challenge alone passes it; the parallax check must
/// fail it. The generator's truth is the oracle: the picture is a plane (held-photo rendering).
final class PresentationAttackTests: XCTestCase {
    func testTheSwungBlinkingPhotoPassesTheChallengeAloneAndFailsTheParallaxCheck() throws {
        let clip = try Fixtures.generated("cases/attack-photo-swing-vertical/video.mp4")
        let model = try LandmarkModel.load()
        var off = LivenessPolicy()
        off.parallaxCheck = 0
        let unchecked = try RecordingRun.analyse(path: clip, motion: nil, model: model, policy: off)
        XCTAssertEqual(unchecked.verdict.status, .passed, "without the parallax check the swing is a turn")
        XCTAssertEqual(unchecked.evidence.parallax.status, .off)

        let checked = try RecordingRun.analyse(path: clip, motion: nil, model: model)
        XCTAssertEqual(checked.verdict.status, .failed)
        XCTAssertEqual(checked.verdict.reason, .presentationAttack)
        XCTAssertEqual(checked.evidence.parallax.status, .flat)
        let residual = try XCTUnwrap(checked.evidence.parallax.residual)
        XCTAssertLessThan(residual, LivenessPolicy().parallaxMinResidual)
        XCTAssertNotNil(checked.action(.blink), "the face on the print blinks")
        XCTAssertNil(checked.action(.turnHead), "the flat turn is not credited")
    }

    /// The frozen-input check (on by default) on real footage: the shared freeze clip (the first
    /// frame of clm-cap12 re-encoded for 5 s) is frozen after 1.5 s; a real clip of the same
    /// webcam (clm-cap13), which duplicates frames for up to 0.44 s, is not.
    func testAFrozenRealClipIsCaughtAndItsLiveSourceIsNot() throws {
        let frozenClip = try Fixtures.shared("clm-cap12-freeze-5s.mp4")
        let liveClip = try Fixtures.shared("clm-cap13-webcam-turns.mp4")
        let model = try LandmarkModel.load()
        let on = LivenessPolicy()
        let frozen = try RecordingRun.analyse(path: frozenClip, motion: nil, model: model, policy: on)
        XCTAssertEqual(frozen.verdict.reason, .presentationAttack)
        XCTAssertEqual(frozen.evidence.frozen.status, .frozen)
        XCTAssertEqual(Double(frozen.verdict.timestampMicroseconds) / 1e6, 1.56, accuracy: 0.1,
                       "frozen from the first frame: caught 1.5 s later")
        let live = try RecordingRun.analyse(path: liveClip, motion: nil, model: model, policy: on)
        XCTAssertNotEqual(live.verdict.reason, .presentationAttack)
        XCTAssertEqual(live.evidence.frozen.status, .live)
        XCTAssertLessThan(live.evidence.frozen.longestRunSeconds, on.frozenSeconds)
    }
}
