import FaceTracking
import Foundation
import LivenessCore

/// The labelled real recordings (`labels.json` in ../shared/recordings or $LIVENESS_RECORDINGS):
/// their `must` outcomes, and the blink precision/recall of the engine against the labels.
public struct RealClip: Sendable {
    public var file: String
    public var path: String
    public var blinks: [Double]?
    public var checked: Bool
    public var must: [String: MustValue]

    /// A `must` value: a boolean, a string or a number.
    public enum MustValue: Sendable, CustomStringConvertible {
        case bool(Bool), string(String), number(Double)
        public var description: String {
            switch self {
            case .bool(let b): return String(b)
            case .string(let s): return s
            case .number(let n): return n == n.rounded() ? String(Int(n)) : String(n)
            }
        }
    }

    private struct Labels: Decodable {
        struct Recording: Decodable {
            var file: String
            var blinks: [Double]?
            var checked: Bool?
            var must: [String: MustValue]?
        }
        var recordings: [Recording]
    }

    /// The clips of `labels.json` in `directory` that have a `must` or labelled blinks (the 200 s
    /// soak clip without either is left out).
    public static func load(directory: String) throws -> [RealClip] {
        let path = directory + "/labels.json"
        guard let data = FileManager.default.contents(atPath: path) else { throw InputError(path: path, problem: "cannot read the labels") }
        let labels: Labels
        do {
            labels = try JSONDecoder().decode(Labels.self, from: data)
        } catch {
            throw InputError(path: path, problem: "cannot read the labels: \(error)")
        }
        return labels.recordings.compactMap { r in
            guard r.must?.isEmpty == false || r.blinks != nil else { return nil }
            return RealClip(file: r.file, path: directory + "/" + r.file, blinks: r.blinks, checked: r.checked ?? false, must: r.must ?? [:])
        }
    }
}

extension RealClip.MustValue: Decodable {
    public init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if let b = try? c.decode(Bool.self) { self = .bool(b) }
        else if let n = try? c.decode(Double.self) { self = .number(n) }
        else { self = .string(try c.decode(String.self)) }
    }
}

/// The outcome of one real clip.
public struct RealClipResult: Sendable {
    public var file: String
    public var expected: String
    public var got: String
    public var mismatches: [String]
    /// Blink episodes found (start times) and labelled blinks matched, for precision/recall.
    public var episodes: [Double] = []
    public var labelled: [Double] = []
    public var matchedEpisodes = 0
    public var matchedLabels = 0
    public var checked = false
    public var ok: Bool { mismatches.isEmpty }
}

enum RealClipCheck {
    /// A blink episode: a run of frames whose mean closure is ≥ `threshold`; it matches a label
    /// when the label lies within ±`tolerance` s of the run.
    static func episodes(_ run: RecordingRun, threshold: Double) -> [(start: Double, end: Double)] {
        var result: [(Double, Double)] = []
        var start: Double?
        var last = 0.0
        for f in run.frames {
            if let c = f.closureMean, c >= threshold {
                if start == nil { start = f.seconds }
                last = f.seconds
            } else if let s = start {
                result.append((s, last))
                start = nil
            }
        }
        if let s = start { result.append((s, last)) }
        return result
    }

    static func run(_ clip: RealClip, model: LandmarkModel) -> RealClipResult {
        let expected = clip.must.keys.sorted().map { "\($0)=\(clip.must[$0]!)" }.joined(separator: " ")
        var result = RealClipResult(file: clip.file, expected: expected.isEmpty ? "(blinks only)" : expected, got: "", mismatches: [])
        let run: RecordingRun
        do {
            run = try RecordingRun.analyse(path: clip.path, motion: nil, model: model)
        } catch {
            result.got = "error"
            result.mismatches = ["\(error)"]
            return result
        }
        var got: [String: String] = [
            "verdict": run.verdict.status.rawValue,
            "reason": run.verdict.reason?.rawValue ?? "-",
            "blinkCredited": String(run.action(.blink) != nil),
            "turnCredited": String(run.action(.turnHead) != nil),
            "faces": String(run.frames.first?.faces ?? 0),
        ]
        if clip.must.isEmpty {
            result.got = "\(got["verdict"]!) blink=\(got["blinkCredited"]!) turn=\(got["turnCredited"]!)"
        } else {
            result.got = clip.must.keys.sorted().map { "\($0)=\(got[$0] ?? "?")" }.joined(separator: " ")
        }
        for (key, value) in clip.must where got[key] != value.description {
            got[key] = got[key] ?? "unknown key"
            result.mismatches.append("\(key)=\(got[key]!), must be \(value)")
        }
        if let labels = clip.blinks {
            let tolerance = 0.2
            let found = episodes(run, threshold: LivenessPolicy().blinkClosureThreshold)
            result.episodes = found.map(\.start)
            result.labelled = labels
            result.checked = clip.checked
            result.matchedEpisodes = found.filter { e in labels.contains { $0 >= e.start - tolerance && $0 <= e.end + tolerance } }.count
            result.matchedLabels = labels.filter { l in found.contains { l >= $0.start - tolerance && l <= $0.end + tolerance } }.count
        }
        return result
    }
}
