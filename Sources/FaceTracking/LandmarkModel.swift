import CFaceTracking

#if canImport(Glibc)
import Glibc
#endif

/// dlib's 68-point landmark model, loaded once per process and shared by every tracker
/// (`ft_model_load`). Loading the same path again returns the already loaded model.
public final class LandmarkModel: @unchecked Sendable {
    // The shim keeps loaded models for the life of the process and only reads them after
    // loading, so sharing across threads is safe.
    let handle: OpaquePointer
    /// The model file.
    public let path: String

    /// Where Debian's `libdlib-data` installs the model.
    public static let defaultPath = "/usr/share/dlib/shape_predictor_68_face_landmarks.dat"

    /// Loads (or returns the cached) model at `path`; the environment variable
    /// `LIVENESS_LANDMARK_MODEL` overrides the default path.
    public static func load(path: String? = nil) throws(FaceTrackingError) -> LandmarkModel {
        let chosen = path ?? environment("LIVENESS_LANDMARK_MODEL") ?? defaultPath
        var error = ft_error()
        var handle: OpaquePointer?
        try check(ft_model_load(chosen, &handle, &error), &error)
        guard let handle else { throw FaceTrackingError(kind: .model, message: "\(chosen): no model handle") }
        return LandmarkModel(handle: handle, path: chosen)
    }

    private init(handle: OpaquePointer, path: String) {
        self.handle = handle
        self.path = path
    }

    /// Runs only the HOG detector on the whole image at `scale` (upsampling when > 1) and
    /// returns every face with its score, best first (`ft_detect_faces`). HOG finds faces of
    /// about 80 px and more in the scanned image, so choose `scale` from the face size.
    package func detectFaces(in image: Image, scale: Double = 1, threshold: Double = 0) throws(FaceTrackingError) -> [FaceCandidate] {
        try candidates { ft_detect_faces(handle, image.handle, scale, threshold, $0, $1, &$2, &$3) }
    }

    /// As `detectFaces(in:scale:threshold:)`, the way the tracker searches a frame: the
    /// detector's filters run at once on the cores over one HOG pyramid, their detections
    /// gathered and suppressed as dlib does (`ft_detect_faces_on_cores`); the same detections.
    package func detectFacesOnCores(in image: Image, scale: Double = 1, threshold: Double = 0) throws(FaceTrackingError) -> [FaceCandidate] {
        try candidates { ft_detect_faces_on_cores(handle, image.handle, scale, threshold, $0, $1, &$2, &$3) }
    }

    /// The number of filters in the HOG detector (`ft_detector_filter_count`): five in dlib's
    /// frontal face detector (a face looking ahead, to either side, and tilted either way).
    public var detectorFilterCount: Int { Int(ft_detector_filter_count(handle)) }

    /// As `detectFaces(in:scale:threshold:)` with only the detector's filter number `filter`
    /// (0 ..< `detectorFilterCount`): its detections after non-maximum suppression, scored as
    /// the whole detector scores them (`ft_detect_faces_with_filter`). The tracker confirms a
    /// face with the filter that found it the last time.
    package func detectFaces(in image: Image, scale: Double = 1, threshold: Double = 0, filter: Int) throws(FaceTrackingError) -> [FaceCandidate] {
        let chosen = Int32(clamping: filter)
        return try candidates { ft_detect_faces_with_filter(handle, image.handle, scale, threshold, chosen, $0, $1, &$2, &$3) }
    }

    /// Fits the 68 landmarks in `box` of `image` with no tracking (`ft_fit_landmarks`); for
    /// baselines and tools.
    public func fitLandmarks(in image: Image, box: Rect) throws(FaceTrackingError) -> [Point] {
        try landmarks { ft_fit_landmarks(handle, image.handle, box.x, box.y, box.width, box.height, $0, &$1) }
    }

    /// The same fit by dlib's own `shape_predictor` (`ft_reference_dlib_fit`; it loads the model
    /// file again on first use, about 100 MB and 0.5 s): the reference `fitLandmarks` must equal.
    /// For tests and benchmarks.
    package func referenceDlibLandmarks(in image: Image, box: Rect) throws(FaceTrackingError) -> [Point] {
        try landmarks { ft_reference_dlib_fit(handle, image.handle, box.x, box.y, box.width, box.height, $0, &$1) }
    }
    /// The detections a shim call writes: `detect(buffer, capacity, &count, &error)`, 32 at most.
    private func candidates(
        _ detect: (UnsafeMutablePointer<ft_candidate>, Int32, inout Int32, inout ft_error) -> ft_status
    ) throws(FaceTrackingError) -> [FaceCandidate] {
        var error = ft_error()
        var count: Int32 = 0
        var buffer = [ft_candidate](repeating: ft_candidate(), count: 32)
        let status = buffer.withUnsafeMutableBufferPointer { detect($0.baseAddress!, Int32($0.count), &count, &error) }
        try check(status, &error)
        return buffer.prefix(Int(count)).map(FaceCandidate.init)
    }

    /// The 68 points a shim fit writes: `fit(xy, &error)` into 136 values (x0, y0, x1, ...).
    private func landmarks(_ fit: (UnsafeMutablePointer<Double>, inout ft_error) -> ft_status) throws(FaceTrackingError) -> [Point] {
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
