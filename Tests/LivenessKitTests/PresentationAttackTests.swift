import FaceTracking
import Foundation
import LivenessCore
import LivenessKit
import LivenessRegress
import TestSupport
import XCTest

/// The strongest generated attack, end to end: a print of a blinking face swung ±35° about its
/// vertical axis (Recordings/cases/attack-photo-swing-vertical, rendered by Tools/setup.sh).
/// The swing reads as a head turn, so the challenge alone passes it; the parallax check must
/// fail it, and so must the recapture check (the print's white border round the face), each on
/// its own. The generator's truth is the oracle: the picture is a plane (held-photo rendering)
/// with a paper border.
final class PresentationAttackTests: XCTestCase {
    func testTheSwungBlinkingPhotoPassesTheChallengeAloneAndFailsTheParallaxCheck() throws {
        let clip = try Fixtures.generated("cases/attack-photo-swing-vertical/video.mp4")
        let model = try LandmarkModel.load()
        var off = LivenessPolicy()
        off.parallaxCheck = 0
        off.recaptureCheck = 0
        let unchecked = try RecordingRun.analyse(path: clip, motion: nil, model: model, policy: off)
        XCTAssertEqual(unchecked.verdict.status, .passed, "without the parallax and recapture checks the swing is a turn")
        XCTAssertEqual(unchecked.evidence.parallax.status, .off)
        XCTAssertEqual(unchecked.evidence.recapture.status, .off)

        var parallaxOnly = LivenessPolicy()
        parallaxOnly.recaptureCheck = 0
        let checked = try RecordingRun.analyse(path: clip, motion: nil, model: model, policy: parallaxOnly)
        XCTAssertEqual(checked.verdict.status, .failed)
        XCTAssertEqual(checked.verdict.reason, .presentationAttack)
        XCTAssertEqual(checked.evidence.parallax.status, .flat)
        let residual = try XCTUnwrap(checked.evidence.parallax.residual)
        XCTAssertLessThan(residual, LivenessPolicy().parallaxMinResidual)
        XCTAssertNotNil(checked.action(.blink), "the face on the print blinks")
        XCTAssertNil(checked.action(.turnHead), "the flat turn is not credited")
    }

    func testTheSwungBlinkingPhotoFailsTheRecaptureCheckBeforeItTurns() throws {
        let clip = try Fixtures.generated("cases/attack-photo-swing-vertical/video.mp4")
        let model = try LandmarkModel.load()
        var recaptureOnly = LivenessPolicy()
        recaptureOnly.parallaxCheck = 0
        let run = try RecordingRun.analyse(path: clip, motion: nil, model: model, policy: recaptureOnly)
        XCTAssertEqual(run.verdict.reason, .presentationAttack)
        XCTAssertEqual(run.evidence.recapture.status, .recaptured)
        XCTAssertGreaterThanOrEqual(run.evidence.recapture.windowEnclosure, LivenessPolicy().recaptureMinEnclosure)
        XCTAssertLessThan(Double(run.verdict.timestampMicroseconds) / 1e6, 0.5, "decided on the face's first measured frames")
        XCTAssertNil(run.action(.turnHead))
        XCTAssertNil(run.evidence.snapshot, "no stills are released")
    }

    /// The recapture check on real footage (the shared folder's two replays and their live
    /// originals, labels.json): both replays fail with presentationAttack, recaptured; the live
    /// originals are never called recaptured, and every window of theirs reads far below the
    /// threshold.
    func testRealScreenReplaysAreRecapturedAndTheirLiveOriginalsAreNot() throws {
        let model = try LandmarkModel.load()
        for file in ["tl-monitor-replay-attack.mp4", "zc-phone-replay-attack.webm"] {
            let run = try RecordingRun.analyse(path: try Fixtures.shared(file), motion: nil, model: model)
            XCTAssertEqual(run.verdict.reason, .presentationAttack, file)
            XCTAssertEqual(run.evidence.recapture.status, .recaptured, file)
        }
        for file in ["tl-phone-selfie-turns-real.mp4", "zc-webcam-glasses-turns-real.webm"] {
            let run = try RecordingRun.analyse(path: try Fixtures.shared(file), motion: nil, model: model)
            XCTAssertNotEqual(run.verdict.reason, .presentationAttack, file)
            XCTAssertEqual(run.evidence.recapture.status, .live, file)
            XCTAssertLessThan(run.evidence.recapture.windowEnclosure, LivenessPolicy().recaptureMinEnclosure / 2, file)
        }
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
