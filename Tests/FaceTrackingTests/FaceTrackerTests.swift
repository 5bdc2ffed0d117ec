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

    func testAModelIsSharedWhileInUseAndFreedWithItsLastUser() throws {
        // The default model under a path of its own, so that no other test's model is this one.
        let path = "/usr/share/dlib/../dlib/shape_predictor_68_face_landmarks.dat"
        var model: LandmarkModel? = try LandmarkModel.load(path: path)
        XCTAssertTrue(try LandmarkModel.load(path: path) === model, "loading a path in use returns the same model")
        weak var released = model
        var tracker: FaceTracker? = try FaceTracker(model: XCTUnwrap(model))
        model = nil
        XCTAssertNotNil(released, "a tracker keeps its model")
        tracker = nil
        XCTAssertNil(released, "the model is freed with its last user")
        XCTAssertNil(tracker)
        // Loading it again loads it anew, and it works.
        let again = try LandmarkModel.load(path: path)
        let image = try Image(contentsOfFile: try Fixtures.generated("astronaut.png"))
        XCTAssertNotNil(try FaceTracker(model: again).process(image).face)
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
    /// The astronaut photo scaled by `k` on a 720×720 grey canvas, its face (landmarks 0–16 span
    /// x 179…272 in the photo: 93 px wide) at the canvas centre.
    private func canvas(_ photo: Image, scale k: Double) throws -> Image {
        let scaled = photo.copy()
        try scaled.scale(by: k)
        let side = 720
        var bytes = [UInt8](repeating: 120, count: side * side * 3)
        let ox = Int((Double(side) / 2 - 225 * k).rounded()), oy = Int((Double(side) / 2 - 135 * k).rounded())
        scaled.withBGRBytes { source, row in
            for y in 0..<side {
                let sy = y - oy
                guard sy >= 0, sy < scaled.height else { continue }
                for x in 0..<side {
                    let sx = x - ox
                    guard sx >= 0, sx < scaled.width else { continue }
                    for c in 0..<3 { bytes[(y * side + x) * 3 + c] = source[sy * row + sx * 3 + c] }
                }
            }
        }
        return try bytes.withUnsafeBytes { try Image(pixels: $0, width: side, height: side, bytesPerRow: side * 3, format: .bgr) }
    }

    func testAFullSearchFindsFacesOfEverySizeAcrossTheCoarseAndFinePasses() throws {
        // The fine pass scans only the sizes below the coarse pass's (about 30% of the shorter
        // side): faces on either side of that boundary, and well above and below it, are found,
        // at their size.
        let model = try LandmarkModel.load()
        let photo = try Image(contentsOfFile: try Fixtures.generated("astronaut.png"))
        for fraction in [0.15, 0.2, 0.25, 0.28, 0.3, 0.32, 0.36, 0.45, 0.6] {
            let jaw = fraction * 720
            let frame = try canvas(photo, scale: jaw / 93)
            let m = try FaceTracker(model: model).process(frame, timestampMilliseconds: 0)
            let face = try XCTUnwrap(m.face, "no face of \(fraction) of the frame")
            XCTAssertEqual(face.box.width / jaw, 1, accuracy: 0.35, "face of \(fraction): box \(face.box)")
            XCTAssertEqual(face.box.x + face.box.width / 2, 360, accuracy: 0.25 * jaw, "face of \(fraction): box \(face.box)")
        }
    }

    func testTheFramesGreyCopyGivesTheSameMeasurementsAsConvertingItHere() throws {
        let model = try LandmarkModel.load()
        let photo = try Image(contentsOfFile: try Fixtures.generated("astronaut.png"))
        let gray = Image()
        try photo.gray(into: gray)
        // The grey copy is cv::cvtColor's BT.601 luma: check a pixel against the formula.
        let (b, g, r) = photo.withBGRBytes { bytes, row in (Double(bytes[100 * row + 300]), Double(bytes[100 * row + 301]), Double(bytes[100 * row + 302])) }
        let y = gray.withBGRBytes { bytes, row in Double(bytes[100 * row + 100]) }
        XCTAssertEqual(y, 0.299 * r + 0.587 * g + 0.114 * b, accuracy: 1)
        let own = try FaceTracker(model: model), shared = try FaceTracker(model: model)
        for i in 0..<5 {
            let a = try own.process(photo, timestampMilliseconds: Double(i) * 33)
            let b = try shared.process(photo, gray: gray, timestampMilliseconds: Double(i) * 33)
            XCTAssertEqual(a.face?.landmarks, b.face?.landmarks)
            XCTAssertEqual(a.face?.yawDegrees, b.face?.yawDegrees)
            XCTAssertNotNil(b.face)
        }
        // A grey image of another size is refused, not read out of bounds.
        let small = Image()
        try photo.copy().gray(into: small)
        try small.scale(by: 0.5)
        XCTAssertThrowsError(try shared.process(photo, gray: small, timestampMilliseconds: 500)) { error in
            XCTAssertEqual((error as? FaceTrackingError)?.kind, .argument)
        }
    }

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
        // Coarse passes every 250 ms (8 in 2 s), full ones every 1000 ms among them: far fewer
        // than 200 searches, and at least one every 250 ms.
        let coarse = TrackerConfiguration().searchCoarseIntervalMilliseconds
        XCTAssertEqual(coarse, 250)
        XCTAssertGreaterThanOrEqual(searched, Int(2000 / coarse))
        XCTAssertLessThanOrEqual(searched, Int(2000 / coarse) + 4, "searched \(searched) of 200 frames")
        // Then the face: the astronaut's is 17% of the frame, below the coarse pass's 30%, so the
        // next full search finds it, at most one fine interval (1000 ms) of media time later.
        let fine = TrackerConfiguration().searchFineIntervalMilliseconds
        XCTAssertEqual(fine, 1000)
        var foundAfter: Double?
        for i in 0..<100 {
            let t = 2000 + Double(i) * 10
            if try tracker.process(photo, timestampMilliseconds: t).face != nil { foundAfter = t - 2000; break }
        }
        XCTAssertNotNil(foundAfter)
        XCTAssertLessThanOrEqual(foundAfter ?? .infinity, fine)
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
