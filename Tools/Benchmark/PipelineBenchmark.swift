// The tracking pipeline's per-stage costs, measured side by side in one run (release build):
// decode only; HOG detection on every frame; the tracked pipeline (detect once, then landmarks in
// the previous box); the tracked pipeline with the device-rotation estimate; the recapture check's
// border measurement (FaceEnclosure) timed on every tracked frame, and its share of a frame at the
// sampler's cadence.
import FaceTracking
import FaceTrackingReference
import Foundation
import LivenessCore
import LivenessKit

#if canImport(Glibc)
import Glibc
#endif

func seconds(_ d: Duration) -> Double { d.inSeconds }

struct Run {
    var name: String
    var frames = 0
    var wall = 0.0
    var decode = 0.0, detect = 0.0, landmarks = 0.0, pose = 0.0, rotation = 0.0, faces = 0
    /// Seconds spent in FaceEnclosure.measure and how many measurements (every tracked frame).
    var enclosure = 0.0, enclosures = 0
    var msPerFrame: Double { wall * 1000 / Double(max(frames, 1)) }
    var fps: Double { Double(frames) / max(wall, 1e-9) }
}

func measure(_ name: String, video: String, repeats: Int, track: Bool?, rotation: Bool, enclosure: Bool = false) throws -> Run {
    var run = Run(name: name)
    let model = try LandmarkModel.load()
    let clock = ContinuousClock()
    for _ in 0..<repeats {
        let reader = try VideoReader(path: video)
        var configuration = TrackerConfiguration()
        configuration.track = track ?? true
        let tracker = try FaceTracker(model: model, configuration: configuration)
        let estimator = VideoRotationEstimator(width: reader.info.width, height: reader.info.height)
        let frame = Image()
        let gray = Image()
        let start = clock.now
        while true {
            let t0 = clock.now
            guard let ms = try reader.read(into: frame) else { break }
            run.decode += seconds(clock.now - t0)
            run.frames += 1
            if rotation {
                let t1 = clock.now
                _ = try estimator.rotation(for: frame, timestampMicroseconds: Int64(ms * 1000))
                run.rotation += seconds(clock.now - t1)
            }
            if track != nil {
                let m = try tracker.process(frame)
                run.detect += m.detectMilliseconds / 1000
                run.landmarks += m.landmarksMilliseconds / 1000
                run.pose += m.poseMilliseconds / 1000
                if m.face != nil { run.faces += 1 }
                if rotation { estimator.didObserve(m) }
                if enclosure, let face = m.face {
                    try frame.gray(into: gray)
                    let t2 = clock.now
                    _ = try? FaceEnclosure.measure(gray: gray, box: face.box, landmarks: face.landmarks)
                    run.enclosure += seconds(clock.now - t2)
                    run.enclosures += 1
                }
            }
        }
        run.wall += seconds(clock.now - start)
    }
    return run
}

func pipelineBenchmark(video: String, repeats: Int) throws {
    let info = try VideoReader(path: video).info
    print("video: \(video) (\(info.width)x\(info.height), \(info.frameCount) frames, \(String(format: "%.1f", info.framesPerSecond)) fps), \(repeats) pass(es), \(ProcessInfo.processInfo.activeProcessorCount) cores")
    let runs = [
        try measure("decode only", video: video, repeats: repeats, track: nil, rotation: false),
        try measure("HOG on every frame", video: video, repeats: repeats, track: false, rotation: false),
        try measure("tracked", video: video, repeats: repeats, track: true, rotation: false),
        try measure("tracked + rotation estimate", video: video, repeats: repeats, track: true, rotation: true),
        try measure("tracked + border enclosure", video: video, repeats: repeats, track: true, rotation: false, enclosure: true),
    ]
    func ms(_ total: Double, _ frames: Int) -> String { String(format: "%7.2f", total * 1000 / Double(max(frames, 1))) }
    print("pipeline                      ms/frame     fps   decode   detect  landmarks   pose  rotation  face%")
    for r in runs {
        print(r.name.padding(toLength: 28, withPad: " ", startingAt: 0) + String(format: " %9.2f %7.1f", r.msPerFrame, r.fps),
              ms(r.decode, r.frames), ms(r.detect, r.frames), "  ", ms(r.landmarks, r.frames), ms(r.pose, r.frames),
              ms(r.rotation, r.frames), String(format: "%6.1f", 100 * Double(r.faces) / Double(max(r.frames, 1))))
    }
    let every = runs[1], tracked = runs[2], full = runs[3]
    print(String(format: "tracked vs HOG on every frame: %.1fx faster; rotation estimate adds %.0f%% (%.2f ms/frame)",
                 every.msPerFrame / tracked.msPerFrame, 100 * (full.msPerFrame / tracked.msPerFrame - 1),
                 full.rotation * 1000 / Double(max(full.frames, 1))))
    // The sampler measures the first 8 frames of a face, then one frame every 0.2 s of media time.
    let withEnclosure = runs[4]
    let perMeasurement = withEnclosure.enclosure * 1000 / Double(max(withEnclosure.enclosures, 1))
    let perSecond = min(info.framesPerSecond, 1 / 0.2)
    let perFrame = perMeasurement * perSecond / max(info.framesPerSecond, 1)
    print(String(format: "border enclosure: %.2f ms per measurement (%d measured); at 5 per second of %.0f fps video %.3f ms per frame, %.1f%% of a tracked frame",
                 perMeasurement, withEnclosure.enclosures, info.framesPerSecond, perFrame, 100 * perFrame / tracked.msPerFrame))
    try compareLandmarkFits(video: video)
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    print("peak resident memory: \(usage.ru_maxrss / 1024) MiB (the landmark model alone is ~95 MiB on disk)")
}

/// The engine's landmark fit (dlib's model with its leaves packed, `fitLandmarks`) against dlib's
/// own `shape_predictor` (`referenceDlibLandmarks`) on the same grey frames and boxes, in turn
/// over 3 rounds: the time of each and whether every fit gives the same 68 points.
func compareLandmarkFits(video: String, frames limit: Int = 60) throws {
    let model = try LandmarkModel.load()
    let reader = try VideoReader(path: video)
    let tracker = try FaceTracker(model: model)
    let frame = Image()
    var fits: [(gray: Image, box: Rect)] = []
    while fits.count < limit, let ms = try reader.read(into: frame) {
        guard let face = try tracker.process(frame, timestampMilliseconds: ms).face else { continue }
        let gray = Image()
        try frame.gray(into: gray)
        fits.append((gray, face.box))
    }
    guard let first = fits.first else { return print("landmark fits: no face in the first frames") }
    _ = try model.referenceDlibLandmarks(in: first.gray, box: first.box)  // loads dlib's copy of the model
    let clock = ContinuousClock()
    var engine: [Double] = [], dlib: [Double] = []
    var differing = 0
    for _ in 0..<3 {
        var start = clock.now
        let ours = try fits.map { try model.fitLandmarks(in: $0.gray, box: $0.box) }
        engine.append((clock.now - start).inSeconds * 1000 / Double(fits.count))
        start = clock.now
        let theirs = try fits.map { try model.referenceDlibLandmarks(in: $0.gray, box: $0.box) }
        dlib.append((clock.now - start).inSeconds * 1000 / Double(fits.count))
        differing += zip(ours, theirs).filter { $0 != $1 }.count
    }
    print(String(format: "landmark fit (%d fits x 3 rounds): engine %.3f ms, dlib's shape_predictor %.3f ms (%.2fx); %d fits differ",
                 fits.count, median(engine), median(dlib), median(dlib) / median(engine), differing))
}
