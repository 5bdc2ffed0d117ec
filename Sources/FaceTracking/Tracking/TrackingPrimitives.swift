/// What the tracking policy asks of the detector and the landmark model on one frame (the
/// current frame is the implementer's). `FaceTracker` implements it with dlib through the shim;
/// tests implement it from recorded or scripted measurements, without the model.
package protocol TrackingPrimitives {
    /// The detector's filters (5 in dlib's frontal face detector).
    var filterCount: Int { get }

    /// The faces in `region` of the frame scaled by `scale`, all filters at once, suppressed as
    /// dlib does; best first. `search`: the cheaper reduction of a search for a new face;
    /// `pyramidLevels`: 0 for the whole HOG pyramid, n > 0 for its first n levels
    /// (`ft_detector_scan`).
    mutating func scan(_ region: PixelRegion, scale: Double, threshold: Double, search: Bool,
                       pyramidLevels: Int) throws(FaceTrackingError) -> [FaceCandidate]

    /// Loads `region` of the frame scaled by `scale` for filter-by-filter scans; false when it
    /// is too small for a HOG window (`ft_detector_load`).
    mutating func load(_ region: PixelRegion, scale: Double) throws(FaceTrackingError) -> Bool
    /// Runs filter `filter` over the loaded region (`ft_detector_run_filter`).
    mutating func runFilter(_ filter: Int, threshold: Double) throws(FaceTrackingError)
    /// The detections of the filters run on the loaded region so far, suppressed as dlib does,
    /// best first (`ft_detector_suppressed`).
    mutating func suppressed() throws(FaceTrackingError) -> [FaceCandidate]

    /// The 68 landmarks fitted in `box` of the frame, pixels (`ft_fit_landmarks`).
    mutating func fit(in box: Rect) throws(FaceTrackingError) -> [Point]
}
