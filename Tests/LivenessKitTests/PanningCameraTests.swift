import FaceTracking
import Foundation
import LivenessCore
import LivenessKit
import LivenessRegress
import TestSupport
import XCTest

/// Issue 9, part 2: a still frame filmed by a panning camera must not pass as a head turn.
///
/// The clip is made here with ffmpeg from the shared footage: the first frame of
/// clm-cap12-webcam-turns.mp4 (400×300) scaled to 520×390 and seen through a 400×300 window
/// that slides ±60 px (sinusoidally, 2–6 s) for 8 s at 25 fps. The face's image moves by
/// about 0.3 of the frame width with no head rotation; the background estimate cannot measure
/// the motion (too little background once head, hair and body are masked), so the rotation is
/// unknown and every frame is credited: the yaw alone must not make a turn.
final class PanningCameraTests: XCTestCase {
    private func panningClip() throws -> String {
        let source = try Fixtures.shared("clm-cap12-webcam-turns.mp4")
        let dir = try Fixtures.temporaryDirectory(self)
        let still = dir.appendingPathComponent("still.png").path
        let clip = dir.appendingPathComponent("pan.mp4").path
        try Fixtures.ffmpeg(["-i", source, "-frames:v", "1", still])
        try Fixtures.ffmpeg(["-loop", "1", "-framerate", "25", "-i", still, "-t", "8",
                             "-vf", "scale=520:390,crop=400:300:x='if(between(t,2,6),60-60*sin(2*PI*(t-2)/4),60)':y=45",
                             "-c:v", "libx264", "-pix_fmt", "yuv420p", "-crf", "18", clip])
        return clip
    }

    func testAPanningCameraOverAStillFaceCreditsNoTurn() throws {
        let clip = try panningClip()
        let model = try LandmarkModel.load()
        for estimate in [true, false] {
            let run = try RecordingRun.analyse(path: clip, motion: nil, model: model, estimateFromVideo: estimate)
            let label = estimate ? "video rotation estimate" : "rotation unknown"
            let tracked = run.frames.filter(\.face)
            XCTAssertGreaterThan(Double(tracked.count), 0.95 * Double(run.frames.count), label)
            // The clip does what it should: the camera-axis yaw sweeps past the turn threshold
            // (it reads the angle of the line of sight as the face slides across the frame).
            let cameraYaw = tracked.compactMap(\.yawDegrees)
            let sweep = (cameraYaw.max() ?? 0) - (cameraYaw.min() ?? 0)
            XCTAssertGreaterThan(sweep, 2 * LivenessPolicy().turnYawDegrees, "\(label): the camera-axis yaw must sweep")
            let sight = tracked.compactMap(\.lineOfSightYawDegrees)
            let sightRange = (sight.max() ?? 0) - (sight.min() ?? 0)
            XCTAssertNil(run.action(.turnHead), "\(label): a turn credited; camera-axis yaw swept \(sweep)°, line-of-sight yaw \(sightRange)°")
            XCTAssertLessThan(sightRange, 4, "\(label): the line-of-sight yaw of a still face")
        }
    }
}
