import CFaceTracking
import CFaceTrackingReference
import FaceTracking

// The reference implementations the tests and benchmarks compare the engine with, in a module of
// their own so that the library products carry none of them.

extension LandmarkModel {
    /// dlib's object_detector as it is, on one thread, over the whole image at `scale`
    /// (upsampling when > 1): every face with its score, best first (`ft_reference_detect_faces`).
    /// HOG finds faces of about 80 px and more in the scanned image, so choose `scale` from the
    /// face size.
    package func detectFaces(in image: Image, scale: Double = 1, threshold: Double = 0) throws(FaceTrackingError) -> [FaceCandidate] {
        try FaceDetector.candidates { ft_reference_detect_faces(handle, image.handle, scale, threshold, $0, $1, &$2, &$3) }
    }

    /// The fit of `fitLandmarks(in:box:)` by dlib's own `shape_predictor` (`ft_reference_dlib_fit`;
    /// it loads the model file again on first use, about 100 MB and 0.5 s): the reference the
    /// engine's packed evaluation must equal.
    package func referenceDlibLandmarks(in image: Image, box: Rect) throws(FaceTrackingError) -> [Point] {
        try landmarks { ft_reference_dlib_fit(handle, image.handle, box.x, box.y, box.width, box.height, $0, &$1) }
    }
}

/// OpenCV's own video reader (`cv::VideoCapture`, frames converted to BGR), kept as a reference
/// for benchmarks: the engine decoded through it before it read videos itself.
package enum OpenCVReferenceReader {
    /// Decodes up to `limit` frames of `path` (`ft_reference_opencv_decode`); returns how many.
    package static func decode(path: String, limit: Int) throws(FaceTrackingError) -> Int {
        var error = ft_error()
        var frames: Int64 = 0
        try check(ft_reference_opencv_decode(path, Int64(limit), &frames, &error), &error)
        return Int(frames)
    }
}
