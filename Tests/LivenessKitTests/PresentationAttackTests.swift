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
}
