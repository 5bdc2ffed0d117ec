import CFaceTracking

/// A face found by the HOG detector, in frame pixels, with its detection score.
public struct FaceCandidate: Sendable, Equatable {
    public var box: Rect
    /// HOG score; higher is more face-like (real faces: about 0 to 3).
    public var score: Double
    /// The detector filter that found it (dlib's frontal detector has five: ahead, either side,
    /// tilted either way).
    public var filter: Int

    package init(box: Rect, score: Double, filter: Int) {
        self.box = box
        self.score = score
        self.filter = filter
    }

    init(_ c: ft_candidate) {
        self.init(box: Rect(x: c.x, y: c.y, width: c.w, height: c.h), score: c.score, filter: Int(c.filter))
    }
}

/// The model's HOG face detector for one stream: its filters with their own scanning buffers
/// (`ft_detector_new`). Not thread-safe: one per tracker or thread.
package final class FaceDetector {
    private let handle: OpaquePointer
    /// The model the filters come from (kept alive while the detector is).
    package let model: LandmarkModel
    /// The detector's filters (5 in dlib's frontal face detector).
    package let filterCount: Int

    package init(model: LandmarkModel) throws(FaceTrackingError) {
        var error = ft_error()
        var handle: OpaquePointer?
        try check(ft_detector_new(model.handle, &handle, &error), &error)
        guard let handle else { throw FaceTrackingError(kind: .internal, message: "no detector handle") }
        self.handle = handle
        self.model = model
        filterCount = model.detectorFilterCount
    }

    deinit { ft_detector_free(handle) }

    /// The faces in `region` of `image` (a grey frame from `Image.gray(into:)`, or BGR) scaled by
    /// `scale`, all filters at once on the cores, suppressed as dlib does; best first
    /// (`ft_detector_scan`).
    package func scan(_ image: Image, region: PixelRegion, scale: Double, threshold: Double, search: Bool = false,
                      pyramidLevels: Int = 0) throws(FaceTrackingError) -> [FaceCandidate] {
        try Self.candidates { out, capacity, count, error in
            ft_detector_scan(handle, image.handle, Int32(clamping: region.x), Int32(clamping: region.y),
                             Int32(clamping: region.width), Int32(clamping: region.height), scale, threshold, search ? 1 : 0,
                             Int32(clamping: pyramidLevels), out, capacity, &count, &error)
        }
    }

    /// Loads `region` of `image` scaled by `scale` for filter-by-filter scans; false when it is too
    /// small for a HOG window (`ft_detector_load`).
    package func load(_ image: Image, region: PixelRegion, scale: Double) throws(FaceTrackingError) -> Bool {
        var error = ft_error()
        var loaded: Int32 = 0
        try check(ft_detector_load(handle, image.handle, Int32(clamping: region.x), Int32(clamping: region.y),
                                   Int32(clamping: region.width), Int32(clamping: region.height), scale, &loaded, &error), &error)
        return loaded != 0
    }

    /// Runs filter `filter` (0 ..< `filterCount`) over the loaded region (`ft_detector_run_filter`).
    package func runFilter(_ filter: Int, threshold: Double) throws(FaceTrackingError) {
        var error = ft_error()
        try check(ft_detector_run_filter(handle, Int32(clamping: filter), threshold, &error), &error)
    }

    /// The detections of the filters run on the loaded region so far, suppressed as dlib does
    /// (`ft_detector_suppressed`).
    package func suppressed() throws(FaceTrackingError) -> [FaceCandidate] {
        try Self.candidates { out, capacity, count, error in ft_detector_suppressed(handle, out, capacity, &count, &error) }
    }

    /// The detections a shim call writes: `detect(buffer, capacity, &count, &error)`, called again
    /// with a larger buffer when there are more than fit.
    package static func candidates(
        _ detect: (UnsafeMutablePointer<ft_candidate>, Int32, inout Int32, inout ft_error) -> ft_status
    ) throws(FaceTrackingError) -> [FaceCandidate] {
        var capacity = 32
        while true {
            var error = ft_error()
            var count: Int32 = 0
            var buffer = [ft_candidate](repeating: ft_candidate(), count: capacity)
            let status = buffer.withUnsafeMutableBufferPointer { detect($0.baseAddress!, Int32($0.count), &count, &error) }
            try check(status, &error)
            if Int(count) <= capacity { return buffer.prefix(Int(count)).map(FaceCandidate.init) }
            capacity = Int(count)
        }
    }
}
