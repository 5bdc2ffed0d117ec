import CFaceTracking
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// dlib's 68-point landmark model and its HOG face detector (`ft_model_load`), shared by every
/// tracker that uses it and freed with the last of them (`ft_model_free`). Loading a path that is
/// still loaded returns the same model. Keep a reference for as long as sessions may come (a
/// service holds its model for its whole life): once freed, the next load reads the file again,
/// about 0.7 s.
public final class LandmarkModel: @unchecked Sendable {
    // The shim only reads a model after loading it, so sharing across threads is safe.
    package let handle: OpaquePointer
    /// The model file.
    public let path: String

    /// Where Debian's `libdlib-data` installs the model.
    public static let defaultPath = "/usr/share/dlib/shape_predictor_68_face_landmarks.dat"

    /// The models in use, by path: each held weakly, so that a model no tracker uses any longer is
    /// freed (about 100 MB) rather than kept for the life of the process.
    private static let loaded = ModelCache()

    /// Loads (or returns the model already loaded from) `path`; the environment variable
    /// `LIVENESS_LANDMARK_MODEL` overrides the default path. Loading takes about 0.7 s.
    public static func load(path: String? = nil) throws(FaceTrackingError) -> LandmarkModel {
        let chosen = path ?? environment("LIVENESS_LANDMARK_MODEL") ?? defaultPath
        return try loaded.model(at: chosen) { () throws(FaceTrackingError) in
            var error = ft_error()
            var handle: OpaquePointer?
            try check(ft_model_load(chosen, &handle, &error), &error)
            guard let handle else { throw FaceTrackingError(kind: .model, message: "\(chosen): no model handle") }
            return LandmarkModel(handle: handle, path: chosen)
        }
    }

    private init(handle: OpaquePointer, path: String) {
        self.handle = handle
        self.path = path
    }

    deinit { ft_model_free(handle) }

    /// As `detectFaces(in:scale:threshold:)`, the way the tracker searches a frame: the
    /// detector's filters run at once on the cores over one HOG pyramid, their detections
    /// gathered and suppressed as dlib does (`ft_detector_scan`); the same detections.
    package func detectFacesOnCores(in image: Image, scale: Double = 1, threshold: Double = 0) throws(FaceTrackingError) -> [FaceCandidate] {
        try FaceDetector(model: self).scan(image, region: .whole(width: image.width, height: image.height), scale: scale,
                                           threshold: threshold)
    }

    /// The number of filters in the HOG detector (`ft_detector_filter_count`): five in dlib's
    /// frontal face detector (a face looking ahead, to either side, and tilted either way).
    public var detectorFilterCount: Int { Int(ft_detector_filter_count(handle)) }

    /// As `detectFaces(in:scale:threshold:)` with only the detector's filter number `filter`
    /// (0 ..< `detectorFilterCount`): its detections after non-maximum suppression, scored as
    /// the whole detector scores them (`ft_detector_load`, `ft_detector_run_filter`,
    /// `ft_detector_suppressed`). The tracker confirms a face with the filter that found it the
    /// last time.
    package func detectFaces(in image: Image, scale: Double = 1, threshold: Double = 0, filter: Int) throws(FaceTrackingError) -> [FaceCandidate] {
        guard (0..<detectorFilterCount).contains(filter) else {
            throw FaceTrackingError(kind: .argument, message: "detect: filter \(filter) not in 0...\(detectorFilterCount - 1)")
        }
        let detector = try FaceDetector(model: self)
        guard try detector.load(image, region: .whole(width: image.width, height: image.height), scale: scale) else { return [] }
        try detector.runFilter(filter, threshold: threshold)
        return try detector.suppressed()
    }

    /// Fits the 68 landmarks in `box` of `image` with no tracking (`ft_fit_landmarks`); for
    /// baselines and tools.
    public func fitLandmarks(in image: Image, box: Rect) throws(FaceTrackingError) -> [Point] {
        try landmarks { ft_fit_landmarks(handle, image.handle, box.x, box.y, box.width, box.height, $0, &$1) }
    }

    /// The 68 points a shim fit writes: `fit(xy, &error)` into 136 values (x0, y0, x1, ...).
    package func landmarks(_ fit: (UnsafeMutablePointer<Double>, inout ft_error) -> ft_status) throws(FaceTrackingError) -> [Point] {
        var error = ft_error()
        var xy = [Double](repeating: 0, count: 136)
        let status = xy.withUnsafeMutableBufferPointer { fit($0.baseAddress!, &error) }
        try check(status, &error)
        return (0..<68).map { Point(x: xy[2 * $0], y: xy[2 * $0 + 1]) }
    }
}

private func environment(_ name: String) -> String? {
    guard let value = getenv(name) else { return nil }
    let string = String(cString: value)
    return string.isEmpty ? nil : string
}

/// Models by path, held weakly.
private final class ModelCache: Sendable {
    private struct Weak {
        weak var model: LandmarkModel?
    }
    private let models = Mutex<[String: Weak]>([:])

    /// The live model loaded from `path`, or a new one from `load` (under the lock: two threads
    /// asking for the same path load it once).
    func model(at path: String, load: () throws(FaceTrackingError) -> LandmarkModel) throws(FaceTrackingError) -> LandmarkModel {
        try models.withLock { (models: inout [String: Weak]) throws(FaceTrackingError) -> LandmarkModel in
            if let model = models[path]?.model { return model }
            models = models.filter { $0.value.model != nil }
            let model = try load()
            models[path] = Weak(model: model)
            return model
        }
    }
}
