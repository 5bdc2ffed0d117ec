@testable import FaceTracking
import XCTest

/// The tracking policy without the model: a scripted world of faces stands in for the detector
/// and the landmark model, and each test's expectations come from the policy's stated rules
/// (`TrackingPolicy`'s documentation), worked out by hand for the scripted scene.
final class TrackingPolicyTests: XCTestCase {
    /// A scene for the policy: faces at known boxes (detector convention), each found by one
    /// filter with a score, and a landmark "model" that puts a fixed face shape on the face under
    /// the box it is given. It records what the policy asked.
    struct World: TrackingPrimitives {
        struct Face {
            var box: Rect
            var score = 2.0
            var filter = 0
        }
        var faces: [Face] = []
        var filterCount = 5
        /// Every call, in order: "scan(search|face, levels)", "load", "filter N", "fit".
        var calls: [String] = []
        var scans: [(region: PixelRegion, scale: Double, search: Bool, levels: Int)] = []
        private var loaded: (region: PixelRegion, scale: Double)?
        private var pending: [Face] = []
        var failNextFit = false

        init(faces: [Face] = []) {
            self.faces = faces
        }

        /// The faces a HOG scan of `region` at `scale` finds: those whose centre is in the region
        /// and that are at least 80 px once scaled, best first.
        func visible(in region: PixelRegion, scale: Double) -> [Face] {
            faces.filter { f in
                let cx = f.box.x + f.box.width / 2, cy = f.box.y + f.box.height / 2
                return cx >= Double(region.x) && cx < Double(region.x + region.width) && cy >= Double(region.y)
                    && cy < Double(region.y + region.height) && f.box.width * scale >= 80
            }.sorted { $0.score > $1.score }
        }

        mutating func scan(_ region: PixelRegion, scale: Double, threshold: Double, search: Bool,
                           pyramidLevels: Int) throws(FaceTrackingError) -> [FaceCandidate] {
            calls.append(search ? "search" : "scan")
            scans.append((region, scale, search, pyramidLevels))
            return visible(in: region, scale: scale).map { FaceCandidate(box: $0.box, score: $0.score, filter: $0.filter) }
        }

        mutating func load(_ region: PixelRegion, scale: Double) throws(FaceTrackingError) -> Bool {
            calls.append("load")
            loaded = (region, scale)
            pending = []
            return true
        }

        mutating func runFilter(_ filter: Int, threshold: Double) throws(FaceTrackingError) {
            calls.append("filter \(filter)")
            guard let loaded else { throw FaceTrackingError(kind: .argument, message: "no region") }
            pending += visible(in: loaded.region, scale: loaded.scale).filter { $0.filter == filter }
        }

        mutating func suppressed() throws(FaceTrackingError) -> [FaceCandidate] {
            pending.sorted { $0.score > $1.score }.map { FaceCandidate(box: $0.box, score: $0.score, filter: $0.filter) }
        }

        /// A face shape spanning the middle of the box of the face under `box` (or of `box` itself
        /// when no face is under it): its bounds are 80% of the box's width, from 20% to 100% of
        /// its height.
        mutating func fit(in box: Rect) throws(FaceTrackingError) -> [Point] {
            calls.append("fit")
            if failNextFit {
                failNextFit = false
                throw FaceTrackingError(kind: .internal, message: "scripted failure")
            }
            let under = faces.first { RectArithmetic.overlap($0.box, box) > 0.1 }?.box ?? box
            return Self.shape(on: under)
        }

        static func shape(on box: Rect) -> [Point] {
            (0..<68).map { i in
                let u = Double(i % 17) / 16, v = Double(i / 17) / 3
                return Point(x: box.x + box.width * (0.1 + 0.8 * u), y: box.y + box.height * (0.2 + 0.8 * v))
            }
        }
    }

    let width = 1280, height = 720

    private func run(_ policy: inout TrackingPolicy, _ world: inout World, at t: Double? = nil) throws -> TrackingStep {
        try policy.step(width: width, height: height, timestampMilliseconds: t, using: &world)
    }

    private func assertBox(_ a: Rect?, _ b: Rect, accuracy: Double = 1e-9, file: StaticString = #filePath, line: UInt = #line) {
        guard let a else { return XCTFail("no box", file: file, line: line) }
        XCTAssertEqual(a.x, b.x, accuracy: accuracy, file: file, line: line)
        XCTAssertEqual(a.y, b.y, accuracy: accuracy, file: file, line: line)
        XCTAssertEqual(a.width, b.width, accuracy: accuracy, file: file, line: line)
        XCTAssertEqual(a.height, b.height, accuracy: accuracy, file: file, line: line)
    }

    func testAFaceIsDetectedThenTrackedConfirmedEveryFifthFrameAndScannedEveryThirtieth() throws {
        let face = Rect(x: 500, y: 200, width: 300, height: 300)
        var world = World(faces: [.init(box: face)])
        var policy = TrackingPolicy(configuration: TrackerConfiguration())
        var sources: [FaceSource] = []
        for _ in 0..<31 {
            let step = try run(&policy, &world)
            sources.append(step.source)
            // The landmarks sit on the face and the box derived from them is the detector's again.
            assertBox(step.face?.box, face, accuracy: 1e-6)
        }
        XCTAssertEqual(sources[0], .detected)
        // Frames 1...4 tracked, frame 5 confirmed near the box, and so on; frame 30 is a whole scan.
        for i in 1...30 { XCTAssertEqual(sources[i], i % 5 == 0 ? .verified : .tracked, "frame \(i)") }
        // One search at the first frame (the coarse pass finds the 300 px face: no fine pass), then
        // five confirmations near the box (all filters the first time, the finding filter alone
        // after: score 2 ≥ 1 at the same place) and the whole scan at the thirtieth frame.
        XCTAssertEqual(world.calls.filter { $0 == "search" }.count, 1)
        XCTAssertEqual(world.calls.filter { $0 == "load" }.count, 5)
        XCTAssertEqual(world.calls.filter { $0.hasPrefix("filter") }.count, 5 + 4)
        XCTAssertEqual(world.calls.filter { $0 == "scan" }.count, 1)
        let whole = try XCTUnwrap(world.scans.last)
        XCTAssertEqual(whole.region, PixelRegion.whole(width: width, height: height))
        XCTAssertEqual(whole.scale, 100.0 / 300, accuracy: 1e-12, "the whole scan is at the face's scale: 100 px")
    }

    func testTheSubjectIsTheFaceNearestTheGuideAndWeakSecondFacesAreNotCounted() throws {
        // (240 px: large enough for the coarse pass, 80 px at its scale of 80/216.)
        let centre = Rect(x: 520, y: 240, width: 240, height: 240)
        let big = Rect(x: 40, y: 40, width: 400, height: 400)
        // The larger, higher-scoring face off the guide loses to the one at its centre.
        var world = World(faces: [.init(box: big, score: 3), .init(box: centre, score: 1)])
        var policy = TrackingPolicy(configuration: TrackerConfiguration())
        var step = try run(&policy, &world)
        assertBox(step.face?.box, centre)
        XCTAssertEqual(step.faceCount, 2)
        // A second detection under a score of 0.5 is no face: one face, the best one.
        world = World(faces: [.init(box: centre, score: 1.2), .init(box: big, score: 0.4)])
        policy = TrackingPolicy(configuration: TrackerConfiguration())
        step = try run(&policy, &world)
        XCTAssertEqual(step.faceCount, 1)
        XCTAssertEqual(step.candidates.count, 1)
        // With the guide moved to the top left, the other face is the subject.
        var configuration = TrackerConfiguration()
        configuration.guide.centerX = 0.1
        configuration.guide.centerY = 0.2
        world = World(faces: [.init(box: big, score: 1), .init(box: centre, score: 3)])
        policy = TrackingPolicy(configuration: configuration)
        assertBox(try run(&policy, &world).face?.box, big)
    }

    func testATrackWhoseFaceHOGNoLongerSeesIsLostAtTheThirdFailedConfirmation() throws {
        let face = Rect(x: 500, y: 200, width: 300, height: 300)
        var world = World(faces: [.init(box: face)])
        var policy = TrackingPolicy(configuration: TrackerConfiguration())
        _ = try run(&policy, &world)
        // The face turns away from HOG: the detector finds nothing, the landmarks still fit.
        world.faces = []
        var lostAt: Int?
        for frame in 1...20 {
            let step = try run(&policy, &world)
            if step.face == nil {
                lostAt = frame
                XCTAssertEqual(step.source, .none)
                break
            }
        }
        // Confirmations at frames 5, 10 and 15 fail (each looks over the whole frame too).
        XCTAssertEqual(lostAt, 15)
        XCTAssertFalse(policy.tracking)
    }

    func testADriftedTrackIsReanchoredOnTheDetectorsBox() throws {
        // A landmark model that puts the face 70 px left of the box it is given, after an exact
        // first fit: the track drifts, and HOG, which sees the face where it is, re-anchors it.
        struct Drifting: TrackingPrimitives {
            var world: World
            var filterCount: Int { world.filterCount }
            var fits = 0
            mutating func scan(_ r: PixelRegion, scale: Double, threshold: Double, search: Bool,
                               pyramidLevels: Int) throws(FaceTrackingError) -> [FaceCandidate] {
                try world.scan(r, scale: scale, threshold: threshold, search: search, pyramidLevels: pyramidLevels)
            }
            mutating func load(_ r: PixelRegion, scale: Double) throws(FaceTrackingError) -> Bool { try world.load(r, scale: scale) }
            mutating func runFilter(_ f: Int, threshold: Double) throws(FaceTrackingError) { try world.runFilter(f, threshold: threshold) }
            mutating func suppressed() throws(FaceTrackingError) -> [FaceCandidate] { try world.suppressed() }
            mutating func fit(in box: Rect) throws(FaceTrackingError) -> [Point] {
                fits += 1
                return World.shape(on: fits == 1 ? box : Rect(x: box.x - 70, y: box.y, width: box.width, height: box.height))
            }
        }
        let face = Rect(x: 500, y: 200, width: 300, height: 300)
        var configuration = TrackerConfiguration()
        configuration.verifyInterval = 1
        var primitives = Drifting(world: World(faces: [.init(box: face)]))
        var policy = TrackingPolicy(configuration: configuration)
        _ = try policy.step(width: width, height: height, timestampMilliseconds: nil, using: &primitives)
        let step = try policy.step(width: width, height: height, timestampMilliseconds: nil, using: &primitives)
        // The fit moves the box 70 px, more than 3% of its width, so it is fitted again where the
        // first fit put it: 140 px left, at x = 360. Its overlap with the face is 160·300 /
        // (2·90000 − 48000) = 0.36: the same face (> 0.3) but below 0.7, so the track is
        // re-anchored on the detector's box and the landmarks fitted there again (4 fits).
        XCTAssertEqual(step.source, .verified)
        assertBox(step.face?.box, face)
        XCTAssertEqual(primitives.fits, 4)
        XCTAssertEqual(step.face?.landmarks.first?.x ?? 0, 500 - 70 + 0.1 * 300, accuracy: 1e-9)
        // Without a confirmation on that frame, the drifted box stays.
        configuration.verifyInterval = 5
        primitives = Drifting(world: World(faces: [.init(box: face)]))
        policy = TrackingPolicy(configuration: configuration)
        _ = try policy.step(width: width, height: height, timestampMilliseconds: nil, using: &primitives)
        let tracked = try policy.step(width: width, height: height, timestampMilliseconds: nil, using: &primitives)
        XCTAssertEqual(tracked.source, .tracked)
        assertBox(tracked.face?.box, Rect(x: 360, y: 200, width: 300, height: 300), accuracy: 1e-9)
    }

    func testAFastFaceIsFittedASecondTimeWhereTheFirstFitPutIt() throws {
        var world = World(faces: [.init(box: Rect(x: 300, y: 200, width: 300, height: 300))])
        var policy = TrackingPolicy(configuration: TrackerConfiguration())
        _ = try run(&policy, &world)
        // 6 px a frame is under 3% of 300 px: one fit a frame.
        world.calls = []
        world.faces[0].box.x += 6
        _ = try run(&policy, &world)
        XCTAssertEqual(world.calls, ["fit"])
        // 12 px is over it: a second fit.
        world.calls = []
        world.faces[0].box.x += 12
        let step = try run(&policy, &world)
        XCTAssertEqual(world.calls, ["fit", "fit"])
        XCTAssertEqual(step.face?.box.x ?? 0, 318, accuracy: 1e-6)
    }

    func testAnImplausibleBoxIsNotFollowedTheFrameIsSearchedAtTheFacesScale() throws {
        let face = Rect(x: 500, y: 200, width: 300, height: 300)
        var world = World(faces: [.init(box: face)])
        var policy = TrackingPolicy(configuration: TrackerConfiguration())
        _ = try run(&policy, &world)
        // The face doubles in size between two frames: the fitted box grows by more than a quarter.
        world.faces = [.init(box: Rect(x: 350, y: 100, width: 600, height: 600))]
        world.scans = []
        let step = try run(&policy, &world)
        XCTAssertEqual(world.scans.count, 1)
        XCTAssertFalse(world.scans[0].search)
        XCTAssertEqual(world.scans[0].scale, 100.0 / 300, accuracy: 1e-12)
        XCTAssertEqual(step.source, .detected)
        assertBox(step.face?.box, Rect(x: 350, y: 100, width: 600, height: 600))
    }

    func testSearchesWithoutAFaceArePacedByMediaTimeCoarseAndFine() throws {
        var world = World()
        var policy = TrackingPolicy(configuration: TrackerConfiguration())
        // 720p: coarse scale 80/216, fine scale 80/86.4, so two passes.
        let fine = 80.0 / (0.12 * 720), coarse = 80.0 / (0.3 * 720)
        var passes: [(t: Double, coarse: Bool, fine: Bool)] = []
        for frame in 0..<75 {
            let t = Double(frame) * 1000 / 30
            world.scans = []
            let step = try run(&policy, &world, at: t)
            XCTAssertNil(step.face)
            let ran = world.scans
            if ran.isEmpty { continue }
            XCTAssertTrue(ran.allSatisfy(\.search))
            passes.append((t, ran.contains { abs($0.scale - coarse) < 1e-12 && $0.levels == 0 },
                           ran.contains { abs($0.scale - fine) < 1e-12 && $0.levels > 0 }))
        }
        // Both passes at 0 ms; the coarse pass alone from 250 ms on (frames at 266.7, 533.3, 800);
        // both at 1000 ms and later (frame at 1000, then coarse at 1266.7, 1533.3, 1800, both at 2000).
        let expected: [(Double, Bool, Bool)] = [
            (0, true, true), (266.67, true, false), (533.33, true, false), (800, true, false), (1000, true, true),
            (1266.67, true, false), (1533.33, true, false), (1800, true, false), (2000, true, true), (2266.67, true, false),
        ]
        XCTAssertEqual(passes.count, expected.count, "\(passes)")
        for (got, want) in zip(passes, expected) {
            XCTAssertEqual(got.t, want.0, accuracy: 0.01)
            XCTAssertEqual(got.coarse, want.1, "t \(got.t)")
            XCTAssertEqual(got.fine, want.2, "t \(got.t)")
        }
        // The fine pass scans only the levels above the coarse scale: from 0.926 down by 5/6 while
        // above 1.1 × 0.370 = 0.407: 0.926, 0.772, 0.643, 0.536, 0.447 — five levels.
        XCTAssertEqual(DetectionLadder.finePyramidLevels(fine: fine, coarse: coarse), 5)
        // Without timestamps every frame is searched in full.
        world.scans = []
        policy = TrackingPolicy(configuration: TrackerConfiguration())
        for _ in 0..<3 { _ = try run(&policy, &world) }
        XCTAssertEqual(world.scans.count, 6)
    }

    func testAFaceAppearingIsFoundAtTheNextDuePassAndALostTrackIsSearchedAtOnce() throws {
        var world = World()
        var policy = TrackingPolicy(configuration: TrackerConfiguration())
        _ = try run(&policy, &world, at: 0)
        world.faces = [.init(box: Rect(x: 500, y: 200, width: 300, height: 300))]
        // Not due at 100 ms: no face yet, although it is there; found by the coarse pass at 250 ms.
        XCTAssertNil(try run(&policy, &world, at: 100).face)
        XCTAssertEqual(try run(&policy, &world, at: 250).source, .detected)
        // The face goes; the track is lost at the third failed confirmation (15 frames on), and
        // that frame is searched in full at once; the next one is not (the pacing starts again).
        world.faces = []
        for frame in 1...14 { XCTAssertNotNil(try run(&policy, &world, at: 250 + Double(frame) * 10).face) }
        world.scans = []
        XCTAssertNil(try run(&policy, &world, at: 400).face)
        XCTAssertEqual(world.scans.filter(\.search).count, 2, "both passes of a search on the frame the track is lost")
        world.scans = []
        XCTAssertNil(try run(&policy, &world, at: 410).face)
        XCTAssertTrue(world.scans.isEmpty)
        _ = try run(&policy, &world, at: 650)
        XCTAssertEqual(world.scans.count, 1, "the coarse pass again 250 ms after the search")
    }

    func testAPrimitiveFailureResetsThePolicyAndTheNextFrameSearchesAgain() throws {
        let face = Rect(x: 500, y: 200, width: 300, height: 300)
        var world = World(faces: [.init(box: face)])
        var policy = TrackingPolicy(configuration: TrackerConfiguration())
        _ = try run(&policy, &world)
        world.failNextFit = true
        XCTAssertThrowsError(try run(&policy, &world)) { error in
            XCTAssertEqual((error as? FaceTrackingError)?.kind, .internal)
        }
        XCTAssertFalse(policy.tracking)
        XCTAssertEqual(try run(&policy, &world).source, .detected)
    }

    func testDetectingEveryFrameNeverTracks() throws {
        var configuration = TrackerConfiguration()
        configuration.track = false
        var world = World(faces: [.init(box: Rect(x: 500, y: 200, width: 300, height: 300))])
        var policy = TrackingPolicy(configuration: configuration)
        for t in [0.0, 10, 20, 30] {
            XCTAssertEqual(try run(&policy, &world, at: t).source, .detected)
        }
        XCTAssertEqual(world.calls.filter { $0 == "search" }.count, 4)
    }

    func testRectangleArithmeticIsOpenCVs() {
        // cv::Rect2d(0,0,10,10) & cv::Rect2d(5,5,10,10) == (5,5,5,5); disjoint gives an empty rectangle.
        let a = Rect(x: 0, y: 0, width: 10, height: 10), b = Rect(x: 5, y: 5, width: 10, height: 10)
        XCTAssertEqual(RectArithmetic.intersection(a, b), Rect(x: 5, y: 5, width: 5, height: 5))
        XCTAssertEqual(RectArithmetic.intersection(a, Rect(x: 20, y: 0, width: 5, height: 5)), Rect(x: 0, y: 0, width: 0, height: 0))
        XCTAssertEqual(RectArithmetic.overlap(a, b), 25.0 / 175, accuracy: 1e-15)
        // A negative origin: cv::Rect2d(-5,-5,10,10) & (0,0,10,10) == (0,0,5,5).
        XCTAssertEqual(RectArithmetic.intersection(Rect(x: -5, y: -5, width: 10, height: 10), a), Rect(x: 0, y: 0, width: 5, height: 5))
        // contains: left and top edges in, right and bottom out.
        XCTAssertTrue(RectArithmetic.contains(a, x: 0, y: 0))
        XCTAssertFalse(RectArithmetic.contains(a, x: 10, y: 5))
        XCTAssertEqual(PixelRegion(truncating: Rect(x: -2.7, y: 3.9, width: 10.5, height: 7.99)), PixelRegion(x: -2, y: 3, width: 10, height: 7))
    }
}
