import FaceTracking
import LivenessCore
import LivenessKit
import LivenessRegress
import TestSupport
import XCTest

/// The eye conditioning on real footage that defeated it: lp-d14 (one-eye winks, slow closures,
/// eye rolls) read closure 0.00 at its clear closures.
///
/// The oracle is what the frames show, checked by eye on frames decoded with ffmpeg (30 fps,
/// frames counted from 0): frame 207 (6.90 s) and frame 211 (7.03 s) show both eyes closed
/// between open frames, after 2.6 s (frames 130-206) of eyes fluttering between half-closed and
/// closed; frames 284-285 (9.47-9.50 s) show both eyes closed after 15 open frames (269-283).
final class BlinkFootageTests: XCTestCase {
    func testTheClearClosuresOfLpD14AfterRunsOfClosuresReadAsBlinks() throws {
        let clip = try Fixtures.shared("lp-d14-winks-closures.mp4")
        let run = try RecordingRun.analyse(path: clip, motion: nil, model: try LandmarkModel.load())
        let threshold = LivenessPolicy().blinkClosureThreshold
        func peak(_ from: Double, _ to: Double) -> Double {
            run.frames.filter { $0.seconds >= from && $0.seconds <= to }.compactMap(\.closureMean).max() ?? 0
        }
        XCTAssertGreaterThan(run.frames.count, 500, "the whole clip is read")
        // After the flutter: the closed frames at 6.90 / 7.03 s.
        XCTAssertGreaterThanOrEqual(peak(6.85, 7.10), threshold, "closure around 7.0 s")
        // After an eye roll (wide open, EAR 0.38) and 15 frames of the normal open eye (0.31).
        XCTAssertGreaterThanOrEqual(peak(9.43, 9.57), threshold, "closure at 9.47 s")
    }
}
