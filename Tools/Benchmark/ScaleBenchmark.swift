// The engine against its floor and a naive baseline, at 480p, 720p and 1080p, side by side in
// one run: decode-only fps through the engine's own reader (libavcodec, as `ffmpeg -f null`
// decodes) and through OpenCV's VideoCapture (the reader before, frames to BGR), `analyze` fps (one input, stages
// overlapped, and with the stages in turn), a naive pipeline (full-resolution HOG + landmarks on
// every frame), the ratios; a clip that runs to the scan cap and one that passes early; the cost
// of a clip without a face against a tracked one; the model load time and peak memory.
import FaceTracking
import FaceTrackingReference
import Foundation
import LivenessCore
import LivenessKit

#if canImport(Glibc)
import Glibc
#endif

/// Runs ffmpeg with `arguments`; throws when it fails.
func ffmpeg(_ arguments: [String]) throws {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
    process.arguments = ["-v", "error", "-y"] + arguments
    try process.run()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else { throw InputError(path: "ffmpeg", problem: "failed: \(arguments.joined(separator: " "))") }
}

/// The clips of one resolution (portrait, width × 16/9 width, 30 or 25 fps, H.264 crf 18).
struct ScaleClips {
    var width: Int
    /// A real phone selfie (lp-d13) forward then backward, 23.4 s: a blink, no turn, so it runs to the cap.
    var cap: String
    /// A talking face that blinks and turns at once (st-ref2) on a blurred canvas: passes in 1 s.
    var early: String
    /// A scene without a face (opencv's tree clip), looped to 10 s.
    var noFace: String
}

func makeScaleClips(width: Int, in dir: URL) throws -> ScaleClips {
    let height = width * 16 / 9 / 2 * 2  // even: H.264 in 4:2:0 needs it (480 -> 852)
    let shared = "../shared/recordings/"
    let cap = dir.appendingPathComponent("cap-\(width).mp4").path
    let early = dir.appendingPathComponent("early-\(width).mp4").path
    let noFace = dir.appendingPathComponent("noface-\(width).mp4").path
    let encode = ["-an", "-c:v", "libx264", "-preset", "veryfast", "-crf", "18", "-pix_fmt", "yuv420p"]
    // Forward then backward: a plain loop (`-stream_loop`) is, rightly, failed as looped input
    // once it repeats for 2 s, which would end the clip before the cap.
    try ffmpeg(["-i", shared + "lp-d13-phone-selfie-glasses.mp4", "-filter_complex",
                "[0:v]scale=\(width):\(height),setsar=1,split[a][b];[b]reverse[r];[a][r]concat=n=2:v=1:a=0"] + encode + [cap])
    try ffmpeg(["-i", shared + "st-ref2-talking-turns.mp4", "-filter_complex",
                "[0]split[a][b];[a]scale=\(width):\(height),setsar=1,boxblur=20[bg];[b]scale=\(width * 9 / 10):-2,setsar=1[fg];[bg][fg]overlay=(W-w)/2:(H-h)/3"]
               + encode + [early])
    try ffmpeg(["-stream_loop", "2", "-i", shared + "opencv-tree-noface-truncated.avi", "-t", "10", "-vf",
                "scale=\(width):\(height),setsar=1,fps=30"] + encode + [noFace])
    return ScaleClips(width: width, cap: cap, early: early, noFace: noFace)
}

/// Frames per second of decoding `path` through the engine's reader, for at most `limit` frames.
func decodeRate(_ path: String, limit: Int) throws -> (fps: Double, frames: Int) {
    let reader = try VideoReader(path: path)
    let frame = Image()
    let clock = ContinuousClock()
    let start = clock.now
    var frames = 0
    while frames < limit, try reader.read(into: frame) != nil { frames += 1 }
    return (Double(frames) / (clock.now - start).inSeconds, frames)
}

/// Frames per second of decoding `path` with OpenCV's `VideoCapture` (frames converted to BGR):
/// the reader the engine used before it decoded videos itself, for reference.
func openCVDecodeRate(_ path: String, limit: Int) throws -> Double {
    let clock = ContinuousClock()
    let start = clock.now
    let frames = try OpenCVReferenceReader.decode(path: path, limit: limit)
    return Double(frames) / (clock.now - start).inSeconds
}

/// What `analyze` does for one input: the analysis session with the background rotation estimate,
/// passive (the spec, `analyze`'s default) or prompted (the service's default; seed 1 draws the
/// plan, and the session stops where the clip, made for neither, fails it).
func analyzeRate(_ path: String, model: LandmarkModel, parallel: Bool,
                 mode: ChallengeMode = .passive) throws -> (fps: Double, frames: Int, summary: String) {
    let source = try FrameSource(path: path)
    var policy = LivenessPolicy()
    policy.challengeMode = mode
    let session = try AnalysisSession(source: source, model: model, policy: policy, seed: 1,
                                      rotation: VideoRotationEstimator(width: source.width, height: source.height),
                                      parallelStages: parallel)
    let outcome = try session.run { _ in }
    let report = LivenessReport(machine: outcome.machine, input: ReportInput(source: source, framesDecoded: outcome.framesDecoded),
                                wallSeconds: outcome.wallSeconds, stills: (nil, nil), warnings: [])
    return (Double(outcome.framesDecoded) / outcome.wallSeconds, outcome.framesDecoded, report.summary)
}

/// The naive pipeline: dlib's HOG detector over the whole frame at full resolution and dlib's
/// shape predictor on the best face, on every frame (the first `limit` frames).
func naiveRate(_ path: String, model: LandmarkModel, limit: Int) throws -> Double {
    let reader = try VideoReader(path: path)
    let frame = Image()
    let clock = ContinuousClock()
    let start = clock.now
    var frames = 0
    while frames < limit, try reader.read(into: frame) != nil {
        if let best = try model.detectFaces(in: frame, scale: 1).max(by: { $0.score < $1.score }) {
            _ = try model.referenceDlibLandmarks(in: frame, box: best.box)
        }
        frames += 1
    }
    return Double(frames) / (clock.now - start).inSeconds
}

/// The middle value (the mean of the two middle values of an even count).
func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return .nan }
    let middle = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

/// A ratio's median over the rounds and its range: "0.62 (0.58-0.70)".
func ratioText(_ values: [Double], digits: Int) -> String {
    let f = "%.\(digits)f"
    return String(format: "\(f) (\(f)-\(f))", median(values), values.min() ?? .nan, values.max() ?? .nan)
}

/// Decoding, `analyze` (overlapped and in turn) and the naive pipeline on one clip, `rounds` times
/// in turn, so that each round's ratios are measured side by side and a slow spell of this
/// shared machine spoils one round, not one column: medians, and the ratios' ranges.
func measureClip(_ path: String, label: String, model: LandmarkModel, rounds: Int) throws {
    var decode: [Double] = [], openCV: [Double] = [], overlapped: [Double] = [], inTurn: [Double] = [], naive: [Double] = []
    var toDecode: [Double] = [], toOpenCV: [Double] = [], toNaive: [Double] = [], promptedToDecode: [Double] = []
    var frames = 0, summary = ""
    for _ in 0..<rounds {
        let analyzed = try analyzeRate(path, model: model, parallel: true)
        let turn = try analyzeRate(path, model: model, parallel: false)
        let prompted = try analyzeRate(path, model: model, parallel: true, mode: .prompted)
        let promptedDecoded = try decodeRate(path, limit: prompted.frames)
        let decoded = try decodeRate(path, limit: analyzed.frames)
        let reference = try openCVDecodeRate(path, limit: analyzed.frames)
        let baseline = try naiveRate(path, model: model, limit: min(60, analyzed.frames))
        frames = analyzed.frames
        summary = analyzed.summary
        decode.append(decoded.fps); openCV.append(reference); overlapped.append(analyzed.fps); inTurn.append(turn.fps)
        naive.append(baseline)
        toDecode.append(analyzed.fps / decoded.fps); toOpenCV.append(analyzed.fps / reference); toNaive.append(analyzed.fps / baseline)
        promptedToDecode.append(prompted.fps / promptedDecoded.fps)
    }
    print(label.padding(toLength: 16, withPad: " ", startingAt: 0)
          + String(format: " %6d  %10.1f  %10.1f  %11.1f  %16.1f  %9.1f  ", frames, median(decode), median(openCV),
                   median(overlapped), median(inTurn), median(naive))
          + ratioText(toDecode, digits: 2).padding(toLength: 18, withPad: " ", startingAt: 0) + "  "
          + ratioText(toOpenCV, digits: 2).padding(toLength: 18, withPad: " ", startingAt: 0) + "  "
          + ratioText(toNaive, digits: 1).padding(toLength: 18, withPad: " ", startingAt: 0) + "  "
          + ratioText(promptedToDecode, digits: 2).padding(toLength: 18, withPad: " ", startingAt: 0) + "  " + summary)
}

func scaleBenchmark(widths: [Int], rounds: Int) throws {
    let clock = ContinuousClock()
    let loadStart = clock.now
    let model = try LandmarkModel.load()
    let load = (clock.now - loadStart).inSeconds
    // dlib's own shape predictor, the naive pipeline's, is loaded now, outside every timing.
    let blank = try [UInt8](repeating: 0, count: 64 * 64).withUnsafeBytes {
        try Image(pixels: $0, width: 64, height: 64, bytesPerRow: 64, format: .gray)
    }
    _ = try model.referenceDlibLandmarks(in: blank, box: Rect(x: 8, y: 8, width: 48, height: 48))
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("liveness-bench-scale-\(getpid())")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: dir) }
    print("model load: \(String(format: "%.2f", load)) s; \(ProcessInfo.processInfo.activeProcessorCount) cores; release build, \(ShimBuild.current.summary); "
          + "\(rounds) rounds in turn: medians, ratios as median (range)")
    print("decode: the engine's reader (libavcodec, no colour conversion); OpenCV: cv::VideoCapture, frames to BGR (the reader before)")
    print("analyze: passive (the spec); prompted/decode: the same clip judged prompted (seed 1's plan) against decoding its frames")
    print("clip             frames  decode fps  OpenCV fps  analyze fps  (stages in turn)  naive fps  analyze/decode      analyze/OpenCV      analyze/naive       prompted/decode     verdict (passive)")
    for width in widths {
        let clips = try makeScaleClips(width: width, in: dir)
        for (name, path) in [("cap", clips.cap), ("early", clips.early)] {
            try measureClip(path, label: "\(width)x\(width * 16 / 9 / 2 * 2) \(name)", model: model, rounds: rounds)
        }
        var costs: [Double] = []
        var tracked: [Double] = [], empty: [Double] = []
        for _ in 0..<rounds {
            let withFace = try analyzeRate(clips.cap, model: model, parallel: true)
            let without = try analyzeRate(clips.noFace, model: model, parallel: true)
            tracked.append(1000 / withFace.fps); empty.append(1000 / without.fps)
            costs.append(withFace.fps / without.fps)
        }
        print(String(format: "  %dp: a frame without a face costs %.2f ms, a tracked frame %.2f ms: ", width, median(empty), median(tracked))
              + ratioText(costs, digits: 2) + "x")
    }
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    print("peak resident memory: \(usage.ru_maxrss / 1024) MiB")
}
