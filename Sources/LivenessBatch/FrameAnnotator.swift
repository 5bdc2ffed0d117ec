import FaceTracking
import LivenessCore
import LivenessEvidence
import LivenessKit

#if canImport(Glibc)
import Glibc
#endif

/// Writes the annotated video of `analyze --annotate`: each frame with its landmarks, face box,
/// the guide circle (green when the face is inside, amber outside), the HUD text, the phase,
/// the closure/yaw readings and the events so far.
///
/// It shows the face on every frame, so it is treated like the stills: written to a temporary
/// file created with mode 0600 in the input's folder (mode 0700), and released as
/// `annotated.mp4` by `finish(keep:)` only when the caller keeps it (a passed session, or
/// `--annotate-failed`); otherwise removed.
final class FrameAnnotator {
    private let writer: VideoWriter
    private let policy: LivenessPolicy
    private let canvas = Image()
    private var notes: [String] = []
    private let temporary: String
    /// Where the video is released.
    let path: String

    init(path: String, framesPerSecond: Double, width: Int, height: Int, policy: LivenessPolicy) throws(InputError) {
        self.path = path
        // OpenCV picks the container from the extension; the file exists with mode 0600 before
        // FFmpeg opens it (it keeps the mode of an existing file).
        temporary = TemporaryFiles.name(for: path, suffix: ".mp4")
        TemporaryFiles.removeStale(of: path)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw InputError(path: path, problem: "cannot write: \(String(cString: strerror(errno)))") }
        TemporaryFiles.register(temporary)
        fchmod(fd, 0o600)
        close(fd)
        do {
            writer = try VideoWriter(path: temporary, framesPerSecond: framesPerSecond > 0 ? framesPerSecond : 25,
                                     width: width, height: height)
        } catch {
            unlink(temporary)
            TemporaryFiles.forget(temporary)
            let problem = InputError(path: temporary, error).problem
            throw InputError(path: path, problem: problem.replacingOccurrences(of: temporary + ": ", with: ""))
        }
        self.policy = policy
    }

    deinit {
        unlink(temporary)
        TemporaryFiles.forget(temporary)
    }

    func add(_ step: AnalysisStep) throws(InputError) {
        step.frame.copy(into: canvas)
        let w = Double(canvas.width), h = Double(canvas.height)
        let scale = max(0.5, min(w, h) / 640)
        let guideCenter = Point(x: policy.guideCenterX * w, y: policy.guideCenterY * h)
        let inGuide = step.assessment.inGuide ?? false
        canvas.drawCircle(center: guideCenter, radius: policy.guideRadius * min(w, h),
                          color: inGuide ? .green : .yellow, thickness: max(1, Int(2 * scale)))
        if let face = step.measurement.face {
            canvas.drawRect(face.box, color: .blue, thickness: 1)
            canvas.drawPoints(face.landmarks, radius: max(1, 1.5 * scale), color: .green)
            canvas.drawCircle(center: Point(x: face.center.x * w, y: face.center.y * h), radius: 3 * scale, color: .red, thickness: -1)
        }
        for event in step.events {
            switch event {
            case .autoshot(let s): notes.append("autoshot \(s.framed ? "framed" : "fallback") @\(Self.time(s.timestampMicroseconds))")
            case .actionCredited(let a):
                notes.append("\(a.action == .blink ? "blink" : "turn \(a.direction?.rawValue ?? "")") @\(Self.time(a.timestampMicroseconds))")
            case .snapshot(let s): notes.append("snapshot @\(Self.time(s.timestampMicroseconds))")
            case .verdict(let v): notes.append("verdict \(v.status.rawValue)\(v.reason.map { " (\($0.rawValue))" } ?? "")")
            default: break
            }
        }
        let a = step.assessment
        var hud = a.hud.text.replacingOccurrences(of: "…", with: "...")
        if case .progress(let done, let total) = a.hud { hud += " \(done)/\(total)" }
        let line = 24 * scale
        func text(_ s: String, _ row: Double, _ color: Color = .white) {
            canvas.drawText(s, at: Point(x: 10 * scale + 1, y: row * line + 1), scale: scale, color: .black, thickness: max(1, Int(2 * scale)))
            canvas.drawText(s, at: Point(x: 10 * scale, y: row * line), scale: scale, color: color, thickness: max(1, Int(scale)))
        }
        text(hud, 1, .yellow)
        text("phase \(a.phase.rawValue)  t \(Self.time(a.timestampMicroseconds))  \(a.credited ? "credited" : (a.notCreditedReason?.rawValue ?? ""))", 2)
        var readings = ""
        if let c = a.eyeClosureMean { readings += "closure \(Self.fixed(c, 2))  " }
        if let y = a.relativeYawDegrees { readings += "yaw \(Self.fixed(y, 1)) deg  " }
        if let r = a.deviceRotation.degreesPerSecond { readings += "rotation \(Self.fixed(r, 1)) deg/s" }
        text(readings, 3)
        for (i, note) in notes.suffix(4).enumerated() { text(note, h / line - Double(min(notes.count, 4) - i) + 0.3, .green) }
        do {
            try writer.write(canvas)
        } catch {
            throw InputError(path: "annotated video", error)
        }
    }

    /// Closes the video; renames it to `path` when `keep`, otherwise removes it (and any
    /// `annotated.mp4` an earlier run left, which would no longer match the report).
    func finish(keep: Bool) throws(InputError) {
        writer.close()
        if keep {
            guard rename(temporary, path) == 0 else {
                throw InputError(path: path, problem: "cannot write: \(String(cString: strerror(errno)))")
            }
        } else {
            unlink(temporary)
            unlink(path)
        }
    }

    static func time(_ micros: Int64) -> String { fixed(Double(micros) / 1e6, 2) + " s" }

    static func fixed(_ value: Double, _ places: Int) -> String {
        let factor = places == 1 ? 10.0 : 100.0
        let scaled = (value * factor).rounded() / factor
        var text = "\(scaled)"
        if let dot = text.firstIndex(of: ".") {
            let decimals = text.distance(from: dot, to: text.endIndex) - 1
            if decimals < places { text += String(repeating: "0", count: places - decimals) }
        }
        return text
    }
}
