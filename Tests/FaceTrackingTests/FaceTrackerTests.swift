import FaceTracking
import Foundation
import TestSupport
import XCTest

final class FaceTrackerTests: XCTestCase {
    private func tracker(track: Bool = true) throws -> FaceTracker {
        var configuration = TrackerConfiguration()
        configuration.track = track
        return try FaceTracker(model: try LandmarkModel.load(), configuration: configuration)
    }

    func testAstronautHasExactlyOneFaceTheRealOne() throws {
        let image = try Image(contentsOfFile: try Fixtures.generated("astronaut.png"))
        let frame = try tracker().process(image)
        XCTAssertEqual(frame.faceCount, 1, "the badge and the mission patch are not faces: \(frame.candidates)")
        let face = try XCTUnwrap(frame.face)
        // The face is in the upper middle of the portrait (x 170-275, y 60-190 px), not on the suit.
        XCTAssertTrue((170...275).contains(face.box.center.x), "\(face.box)")
        XCTAssertTrue((60...190).contains(face.box.center.y), "\(face.box)")
        XCTAssertEqual(face.landmarks.count, 68)
        // A frontal face: both eyes open and similar, small yaw.
        XCTAssertGreaterThan(face.eyeAspectRatioLeft, 0.2)
        XCTAssertGreaterThan(face.eyeAspectRatioRight, 0.2)
        XCTAssertLessThan(abs(face.yawDegrees), 12)
        XCTAssertEqual(face.eyeDistancePixels, 40, accuracy: 12)
    }

    func testDogsHaveNoFace() throws {
        let image = try Image(contentsOfFile: try Fixtures.shared("dlib-dogs-noface.jpg"))
        let frame = try tracker().process(image)
        XCTAssertNil(frame.face)
        XCTAssertEqual(frame.faceCount, 0)
    }

    func testMirroringFlipsYawAndSwapsEyes() throws {
        let image = try Image(contentsOfFile: try Fixtures.generated("astronaut.png"))
        let original = try XCTUnwrap(try tracker().process(image).face)
        try image.flipHorizontally()
        let mirrored = try XCTUnwrap(try tracker().process(image).face)
        XCTAssertEqual(mirrored.yawDegrees, -original.yawDegrees, accuracy: 2.5)
        XCTAssertEqual(mirrored.rollDegrees, -original.rollDegrees, accuracy: 2.5)
        XCTAssertEqual(mirrored.eyeAspectRatioLeft, original.eyeAspectRatioRight, accuracy: 0.03)
        XCTAssertEqual(mirrored.center.x, 1 - original.center.x, accuracy: 0.01)
    }

    func testYawSignFollowsTheSubjectsOwnLeftOnRealTurns() throws {
        // lp-d3: at 8.6-9.0 s the woman turns her head towards the image's right (her own
        // left); at 10.2-10.6 s towards the image's left (her right). Looked at frame by frame.
        let reader = try VideoReader(path: try Fixtures.shared("lp-d3-winks-lookaway.mp4"))
        let tracker = try tracker()
        let frame = Image()
        var left: [Double] = [], right: [Double] = [], frontal: [Double] = []
        while let ms = try reader.read(into: frame) {
            let yaw = try tracker.process(frame).face?.yawDegrees
            guard let yaw else { continue }
            if (7_600...7_900).contains(ms) { frontal.append(yaw) }
            if (8_600...9_000).contains(ms) { left.append(yaw) }
            if (10_200...10_600).contains(ms) { right.append(yaw) }
            if ms > 10_700 { break }
        }
        let mean = { (v: [Double]) in v.reduce(0, +) / Double(max(1, v.count)) }
        XCTAssertFalse(left.isEmpty || right.isEmpty || frontal.isEmpty)
        XCTAssertGreaterThan(mean(left), 10, "turn to her left: \(left)")
        XCTAssertLessThan(mean(right), -7.5, "turn to her right: \(right)")
        XCTAssertLessThan(abs(mean(frontal)), 7.5, "looking at the camera: \(frontal)")
    }

    func testTrackingAgreesWithDetectingEveryFrame() throws {
        let path = try Fixtures.shared("vr-face3-talking-blinks.mp4")
        let tracked = try tracker(track: true), detected = try tracker(track: false)
        let reader = try VideoReader(path: path)
        let frame = Image()
        var errors: [Double] = []
        var sources: [FaceSource: Int] = [:]
        while try reader.read(into: frame) != nil {
            let a = try tracked.process(frame), b = try detected.process(frame)
            sources[a.source, default: 0] += 1
            guard let fa = a.face, let fb = b.face else {
                XCTFail("a face on every frame of this clip")
                continue
            }
            let mean = zip(fa.landmarks, fb.landmarks).map { hypot($0.x - $1.x, $0.y - $1.y) }.reduce(0, +) / 68
            errors.append(mean / fb.eyeDistancePixels)
        }
        XCTAssertEqual(errors.count, 125)
        // Most frames are tracked, not detected: that is where the speed comes from.
        XCTAssertGreaterThan(sources[.tracked, default: 0], 60, "\(sources)")
        let average = errors.reduce(0, +) / Double(errors.count)
        XCTAssertLessThan(average, 0.05, "landmarks of the tracked face are within 5% of the eye distance on average")
    }

    func testAMissingModelIsAModelError() {
        XCTAssertThrowsError(try LandmarkModel.load(path: "/nonexistent/model.dat")) { error in
            XCTAssertEqual((error as? FaceTrackingError)?.kind, .model)
            XCTAssertTrue("\(error)".contains("libdlib-data"), "\(error)")
        }
    }

    func testBackgroundMotionOfAShiftedFrame() throws {
        let image = try Image(contentsOfFile: try Fixtures.generated("astronaut.png"))
        let shifted = try Image(contentsOfFile: try Fixtures.generated("astronaut.png"))
        // Mirror twice is the identity: motion zero. (Real motion is covered by the rotation tests.)
        try shifted.flipHorizontally()
        try shifted.flipHorizontally()
        let motion = try BackgroundMotion.estimate(from: image, to: shifted, excluding: nil)
        XCTAssertTrue(motion.isValid)
        XCTAssertEqual(motion.dx, 0, accuracy: 0.2)
        XCTAssertEqual(motion.rotationDegrees, 0, accuracy: 0.1)
    }
}

/// Searches without a face are paced by media time (`process(_:timestampMilliseconds:)`).
final class FaceSearchPacingTests: XCTestCase {
    func testFramesWithoutAFaceAreSearchedAtACadenceAndAFaceIsStillFoundPromptly() throws {
        let model = try LandmarkModel.load()
        let photo = try Image(contentsOfFile: try Fixtures.generated("astronaut.png"))
        let blank = try Image(width: 512, height: 512, color: Color(red: 90, green: 110, blue: 100))
        let tracker = try FaceTracker(model: model)
        // 2 s without a face at 100 frames per second.
        var searched = 0
        for i in 0..<200 {
            let m = try tracker.process(blank, timestampMilliseconds: Double(i) * 10)
            XCTAssertNil(m.face)
            if m.detectMilliseconds > 0 { searched += 1 }
        }
        // Coarse passes every 100 ms (20), full ones every 300 ms among them: far fewer than 200
        // searches, and at least one every 100 ms.
        XCTAssertGreaterThanOrEqual(searched, 20)
        XCTAssertLessThanOrEqual(searched, 30, "searched \(searched) of 200 frames")
        // Then the face: the astronaut's is 17% of the frame, below the coarse pass's 30%, so the
        // next full search finds it, at most 300 ms of media time later.
        var foundAfter: Double?
        for i in 0..<40 {
            let t = 2000 + Double(i) * 10
            if try tracker.process(photo, timestampMilliseconds: t).face != nil { foundAfter = t - 2000; break }
        }
        XCTAssertNotNil(foundAfter)
        XCTAssertLessThanOrEqual(foundAfter ?? .infinity, 300)
        // Every frame is searched without timestamps (the old entry point), and with intervals 0.
        var configuration = TrackerConfiguration()
        configuration.searchCoarseIntervalMilliseconds = 0
        configuration.searchFineIntervalMilliseconds = 0
        let eager = try FaceTracker(model: model, configuration: configuration)
        var eagerSearches = 0
        for i in 0..<10 where try eager.process(blank, timestampMilliseconds: Double(i) * 10).detectMilliseconds > 0 { eagerSearches += 1 }
        XCTAssertEqual(eagerSearches, 10)
    }
}
