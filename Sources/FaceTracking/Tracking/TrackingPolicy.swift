#if canImport(Glibc)
import Glibc
#endif

/// The primary face the policy follows on a frame: its box (detector convention) and the 68
/// landmarks fitted in it, pixels.
package struct TrackedFace: Sendable, Equatable {
    package var box: Rect
    package var landmarks: [Point]
}

/// What the policy decided on one frame.
package struct TrackingStep: Sendable, Equatable {
    /// The primary face, or nil.
    package var face: TrackedFace?
    /// Faces on the frame: counted by this frame's detection, else carried over from the last.
    package var faceCount: Int
    /// How the face was obtained (`.none` without one).
    package var source: FaceSource
    /// The detections of a search or scan on this frame (at most `maxCandidates`, best first);
    /// empty when the frame was only tracked or confirmed near the face.
    package var candidates: [FaceCandidate]
}

/// Which face is the subject, when a track is lost or re-anchored, when the landmarks are fitted
/// again, and when the detector runs: a value that keeps the track from frame to frame and calls
/// the detector and the landmark model through `TrackingPrimitives`. It never reads a clock: the
/// searches without a face are paced by the frames' media time.
///
/// The rules, per frame:
/// - **No face tracked: search.** The whole frame is scanned at a coarse scale (faces of 30% of
///   the shorter side and more) and, when nothing is found, at the fine scale (down to
///   `minFaceFraction`). With timestamps, after a search that found nothing, the coarse pass runs
///   again after `searchCoarseIntervalMilliseconds` of media time and the fine one after
///   `searchFineIntervalMilliseconds` (a fine search runs the coarse pass too); a frame with no
///   pass due has no face at almost no cost.
/// - **Subject choice.** The best detection counts at the configured threshold; any further one
///   only from a HOG score of 0.5 (a weak hit on a badge is no second face). The subject is the
///   detection overlapping the tracked face (IoU > 0.3), else the one nearest the guide circle's
///   centre.
/// - **Tracking.** The landmarks are fitted in the last frame's box; the new box follows from
///   them (with the offsets learnt at the last detection). A box that moved by more than 3% of its
///   width is fitted a second time where the first fit put it (a fast face would otherwise lag
///   and squash the eyes). A box under 20 px, changing width by more than a quarter, or mostly off
///   the frame is implausible: the frame is searched at the face's scale instead.
/// - **Confirmation.** Every `verifyInterval` frames HOG confirms the face near its box (the
///   filter that found it last first, all filters when that one is not sure); every 30 frames over
///   the whole frame at the face's scale, which also counts the faces. A face HOG sees where the
///   track is resets the failures; below an overlap of 0.7 the track is re-anchored on the
///   detector's box. Not seen near the box: the whole frame is looked at before a failure counts.
///   Three failures in a row: the track is lost and the frame searched.
package struct TrackingPolicy: Sendable {
    /// Frames between whole-frame HOG scans at the tracked face's scale.
    static let scanInterval = 30
    /// Confirmations in a row that do not find the face before the track is lost.
    static let maxFailedConfirmations = 3
    /// HOG score a detection needs to count as a face when a better one exists on the frame
    /// (real faces here: 0.6 to 3.0).
    static let secondaryFaceScore = 0.5
    /// A confirmed track is re-anchored on the detector's box only below this overlap (IoU).
    static let reanchorOverlap = 0.7
    /// Movement of the box between frames, as a fraction of its width, above which the landmarks
    /// are fitted a second time in the box the first fit found.
    static let refitMotion = 0.03
    /// Score above which the first filter's detection of the tracked face is taken without
    /// running the others.
    static let sureFilterScore = 1.0
    /// Width a tracked face is scaled to for its confirmations and scans, pixels.
    static let targetFacePixels = 100.0
    /// Overlap (IoU) above which a detection is the face already tracked.
    static let sameFaceOverlap = 0.3
    /// Detections a step reports.
    package static let maxCandidates = 8

    package let configuration: TrackerConfiguration

    /// Whether a face is being followed.
    package private(set) var tracking = false
    /// The followed face's box, detector convention, frame pixels.
    package private(set) var box = Rect(x: 0, y: 0, width: 0, height: 0)
    // The detector box relative to the landmarks' bounding box, learnt at each detection, so that
    // a box derived from landmarks stays in the convention the shape predictor expects.
    private var offsetX = 0.0, offsetY = -0.1, scaleWidth = 1.0, scaleHeight = 1.0
    private var framesSinceConfirmation = 0, framesSinceScan = 0, failedConfirmations = 0
    private var lastFaceCount = 0
    /// The filter that found the tracked face at the last confirmation (nil: none yet).
    private var lastFilter: Int?
    /// Media time of the last coarse and fine searches that found nothing, milliseconds.
    private var lastCoarseSearch: Double?, lastFineSearch: Double?

    package init(configuration: TrackerConfiguration) {
        self.configuration = configuration
    }

    /// Forgets the tracked face: the next frame is searched at once.
    package mutating func reset() {
        tracking = false
        lastFaceCount = 0
        lastFilter = nil
        lastCoarseSearch = nil
        lastFineSearch = nil
    }

    /// Finds or follows the primary face on a `width` × `height` frame at `timestampMilliseconds`
    /// of media time (nil: every frame without a face is searched in full). A primitive's error
    /// leaves the policy reset.
    package mutating func step<P: TrackingPrimitives>(width: Int, height: Int, timestampMilliseconds: Double?,
                                                       using primitives: inout P) throws(FaceTrackingError) -> TrackingStep {
        do {
            return try advance(width: width, height: height, timestampMilliseconds: timestampMilliseconds, using: &primitives)
        } catch {
            reset()
            throw error
        }
    }

    /// Which passes of a search run: the coarse one (large faces), the fine one (all sizes).
    private struct Passes {
        var coarse = true, fine = true
    }

    private mutating func advance<P: TrackingPrimitives>(width: Int, height: Int, timestampMilliseconds: Double?,
                                                         using primitives: inout P) throws(FaceTrackingError) -> TrackingStep {
        var passes = Passes()
        let following = tracking && configuration.track
        if !following, let now = timestampMilliseconds, lastFineSearch != nil {
            // No face since the last search: search again only when a pass is due.
            let intervals = configuration.searchIntervals
            passes.coarse = lastCoarseSearch.map { !(now - $0 < intervals.coarse) } ?? true
            passes.fine = lastFineSearch.map { !(now - $0 < intervals.fine) } ?? true
            passes.coarse = passes.coarse || passes.fine  // the fine pass leaves the large faces to it
            if !passes.coarse && !passes.fine {
                tracking = false
                return TrackingStep(face: nil, faceCount: 0, source: .none, candidates: [])
            }
        }
        let step: TrackingStep
        if following {
            step = try follow(width: width, height: height, using: &primitives)
        } else {
            tracking = false
            step = try search(width: width, height: height, passes: passes, using: &primitives)
        }
        if step.face != nil {
            lastCoarseSearch = nil
            lastFineSearch = nil
        } else if let now = timestampMilliseconds {
            // A search ran on this frame (the passes due, or all of them after a lost track).
            if passes.coarse { lastCoarseSearch = now }
            if passes.fine { lastFineSearch = now }
        }
        return step
    }

    /// Looks for faces over the whole frame: at the followed face's scale while one is followed
    /// (cheap, and finds faces of a similar size, a second person), else the search ladder.
    private mutating func search<P: TrackingPrimitives>(width: Int, height: Int, passes: Passes = Passes(),
                                                        using primitives: inout P) throws(FaceTrackingError) -> TrackingStep {
        let whole = PixelRegion.whole(width: width, height: height)
        let threshold = configuration.detectionThreshold
        var candidates: [FaceCandidate] = []
        if tracking {
            candidates = try primitives.scan(whole, scale: faceScale, threshold: threshold, search: false, pyramidLevels: 0)
        } else {
            let ladder = DetectionLadder.scales(width: width, height: height, minFraction: configuration.minFaceFraction)
            for (i, scale) in ladder.enumerated() {
                // One scale only (a small frame): it runs when either pass is due.
                let due = ladder.count == 1 ? (passes.coarse || passes.fine) : (i == 0 ? passes.coarse : passes.fine)
                guard due else { continue }
                // The fine pass scans only the sizes the coarse pass does not (faces from the
                // minimum up to about 30% of the shorter side); it always runs after the coarse
                // pass, so the pair costs what the whole pyramid at the fine scale alone cost.
                let levels = i == 1 ? DetectionLadder.finePyramidLevels(fine: ladder[1], coarse: ladder[0]) : 0
                candidates = try primitives.scan(whole, scale: scale, threshold: threshold, search: true, pyramidLevels: levels)
                if !candidates.isEmpty { break }
            }
        }
        candidates = Self.confident(candidates)
        lastFaceCount = candidates.count
        let reported = Array(candidates.prefix(Self.maxCandidates))
        guard let primary = primary(of: candidates, width: width, height: height) else {
            tracking = false
            return TrackingStep(face: nil, faceCount: lastFaceCount, source: .none, candidates: reported)
        }
        let sameFace = tracking && RectArithmetic.overlap(primary.box, box) > Self.sameFaceOverlap
        if !sameFace { lastFilter = nil }
        box = primary.box
        let landmarks = try primitives.fit(in: box)
        learnOffsets(box: box, landmarks: landmarks)
        tracking = true
        failedConfirmations = 0
        framesSinceConfirmation = 0
        framesSinceScan = 0
        return TrackingStep(face: TrackedFace(box: box, landmarks: landmarks), faceCount: lastFaceCount, source: .detected,
                            candidates: reported)
    }

    /// Follows the face from the last frame's box, confirming it with HOG now and then.
    private mutating func follow<P: TrackingPrimitives>(width: Int, height: Int,
                                                        using primitives: inout P) throws(FaceTrackingError) -> TrackingStep {
        var landmarks = try primitives.fit(in: box)
        var next = boxFromLandmarks(landmarks)
        let moved = hypot(next.x + next.width / 2 - (box.x + box.width / 2), next.y + next.height / 2 - (box.y + box.height / 2))
        if moved > Self.refitMotion * box.width && Self.plausible(next, after: box, width: width, height: height) {
            landmarks = try primitives.fit(in: next)
            next = boxFromLandmarks(landmarks)
        }
        guard Self.plausible(next, after: box, width: width, height: height) else {
            return try search(width: width, height: height, using: &primitives)
        }
        box = next
        var source = FaceSource.tracked
        var reported: [FaceCandidate] = []
        framesSinceScan += 1
        framesSinceConfirmation += 1
        let scan = framesSinceScan >= Self.scanInterval
        let confirm = framesSinceConfirmation >= max(1, configuration.verifyInterval)
        guard scan || confirm else {
            return TrackingStep(face: TrackedFace(box: box, landmarks: landmarks), faceCount: lastFaceCount, source: source, candidates: [])
        }
        framesSinceConfirmation = 0
        let whole = PixelRegion.whole(width: width, height: height)
        let threshold = configuration.detectionThreshold
        var found: [FaceCandidate]
        if scan {
            framesSinceScan = 0
            found = Self.confident(try primitives.scan(whole, scale: faceScale, threshold: threshold, search: false, pyramidLevels: 0))
            reported = Array(found.prefix(Self.maxCandidates))
            lastFaceCount = max(1, found.count)
        } else {
            let near = PixelRegion(truncating: Rect(x: box.x - 0.5 * box.width, y: box.y - 0.5 * box.height,
                                                    width: 2 * box.width, height: 2 * box.height))
            found = try confirmNear(near, using: &primitives)
        }
        var match = Self.sameFace(in: found, as: box)
        if match == nil && !scan {
            // HOG does not see the face where the track is. Either the face is turned too far for
            // HOG (the track is fine) or the track has drifted off the face: look over the whole
            // frame at the face's scale before counting a failure.
            found = try primitives.scan(whole, scale: faceScale, threshold: threshold, search: false, pyramidLevels: 0)
            match = Self.sameFace(in: found, as: box)
        }
        if let match {
            failedConfirmations = 0
            source = .verified
            if RectArithmetic.overlap(found[match].box, box) < Self.reanchorOverlap {
                // The track has drifted from where HOG sees the face: re-anchor on the detector's
                // box. (Re-anchoring on every confirmation would make the landmarks, and the yaw,
                // jump by a degree or two every few frames.)
                box = found[match].box
                landmarks = try primitives.fit(in: box)
                learnOffsets(box: box, landmarks: landmarks)
            }
        } else {
            failedConfirmations += 1
            if failedConfirmations >= Self.maxFailedConfirmations {
                // HOG has not seen a face near the box for a while: the track is lost.
                tracking = false
                return try search(width: width, height: height, using: &primitives)
            }
        }
        return TrackingStep(face: TrackedFace(box: box, landmarks: landmarks), faceCount: lastFaceCount, source: source,
                            candidates: reported)
    }

    /// Confirms the track with HOG over `region` at the face's scale, filter by filter: the filter
    /// that found the face at the last confirmation runs first, and when it alone finds the face
    /// where the track is (overlap at least `reanchorOverlap`, score at least `sureFilterScore`)
    /// its detections are the result. Otherwise all filters run and the result is the whole
    /// detector's.
    private mutating func confirmNear<P: TrackingPrimitives>(_ region: PixelRegion,
                                                             using primitives: inout P) throws(FaceTrackingError) -> [FaceCandidate] {
        guard try primitives.load(region, scale: faceScale) else { return [] }
        let threshold = configuration.detectionThreshold
        let filters = primitives.filterCount
        let first = lastFilter.flatMap { (0..<filters).contains($0) ? $0 : nil }
        if let first {
            try primitives.runFilter(first, threshold: threshold)
            let found = try primitives.suppressed()
            if let match = Self.sameFace(in: found, as: box), RectArithmetic.overlap(found[match].box, box) >= Self.reanchorOverlap,
               found[match].score >= Self.sureFilterScore {
                return found
            }
        }
        for filter in 0..<filters where filter != first { try primitives.runFilter(filter, threshold: threshold) }
        let found = try primitives.suppressed()
        if let match = Self.sameFace(in: found, as: box) { lastFilter = found[match].filter }
        return found
    }

    /// The scale at which the followed face is about `targetFacePixels` wide (2 at most).
    private var faceScale: Double { min(2.0, Self.targetFacePixels / max(1.0, box.width)) }

    /// The best detection, and the others only when confident.
    private static func confident(_ candidates: [FaceCandidate]) -> [FaceCandidate] {
        guard let best = candidates.first else { return [] }
        return [best] + candidates.dropFirst().filter { !($0.score < secondaryFaceScore) }
    }

    /// The candidate to follow: the one overlapping the face already tracked (stability), else
    /// the one whose centre is nearest the guide circle's centre (a larger face-like object
    /// elsewhere in the frame loses to a face in the guide).
    private func primary(of candidates: [FaceCandidate], width: Int, height: Int) -> FaceCandidate? {
        var best: FaceCandidate?
        var bestCost = 1e18
        let shorter = Double(min(width, height))
        for c in candidates {
            let dx = c.box.x + c.box.width / 2 - configuration.guide.centerX * Double(width)
            let dy = c.box.y + c.box.height / 2 - configuration.guide.centerY * Double(height)
            var cost = hypot(dx, dy) / shorter
            if tracking && RectArithmetic.overlap(c.box, box) > Self.sameFaceOverlap { cost -= 10 }  // keep following the same face
            if cost < bestCost {
                bestCost = cost
                best = c
            }
        }
        return best
    }

    /// The detection that is the tracked face: the best overlap above 0.3, or else one whose centre
    /// lies inside the track's box at a size within a factor 2 (a drifted box overlaps little).
    static func sameFace(in found: [FaceCandidate], as box: Rect) -> Int? {
        var match: Int?
        var best = sameFaceOverlap
        for (i, c) in found.enumerated() {
            let overlap = RectArithmetic.overlap(c.box, box)
            if overlap > best {
                best = overlap
                match = i
            }
        }
        if match != nil { return match }
        for (i, c) in found.enumerated() {
            let ratio = c.box.width / max(1.0, box.width)
            if RectArithmetic.contains(box, x: c.box.x + c.box.width / 2, y: c.box.y + c.box.height / 2) && ratio > 0.5 && ratio < 2 {
                return i
            }
        }
        return nil
    }

    /// Whether a box derived from landmarks can be the face that was at `previous`: at least 20 px,
    /// within a quarter of its width (a face changes size by a few percent between frames; more is
    /// the fit running away), and mostly on the frame.
    static func plausible(_ box: Rect, after previous: Rect, width: Int, height: Int) -> Bool {
        if box.width < 20 || box.height < 20 { return false }
        let ratio = box.width / max(1.0, previous.width)
        if ratio < 0.8 || ratio > 1.25 { return false }
        let frame = Rect(x: 0, y: 0, width: Double(width), height: Double(height))
        return RectArithmetic.area(RectArithmetic.intersection(box, frame)) > 0.5 * RectArithmetic.area(box)
    }

    private mutating func learnOffsets(box: Rect, landmarks: [Point]) {
        let bounds = RectArithmetic.bounds(of: landmarks)
        guard !(bounds.width < 4 || bounds.height < 4) else { return }
        offsetX = (box.x - bounds.x) / bounds.width
        offsetY = (box.y - bounds.y) / bounds.height
        scaleWidth = box.width / bounds.width
        scaleHeight = box.height / bounds.height
    }

    private func boxFromLandmarks(_ landmarks: [Point]) -> Rect {
        let b = RectArithmetic.bounds(of: landmarks)
        return Rect(x: b.x + offsetX * b.width, y: b.y + offsetY * b.height, width: scaleWidth * b.width, height: scaleHeight * b.height)
    }
}
