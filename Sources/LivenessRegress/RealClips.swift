import LivenessKit
import FaceTracking
import Foundation
import LivenessCore

/// The labelled real recordings (`labels.json` in ../shared/recordings or $LIVENESS_RECORDINGS):
/// their `must` outcomes, their `target` outcomes (checked like a `must` once the project's
/// annotations say the engine reaches them, reported otherwise), and the blink precision/recall
/// of the engine against the labels.
public struct RealClip: Sendable {
    public var file: String
    public var path: String
    public var blinks: [Double]?
    public var checked: Bool
    public var must: [String: MustValue]
    /// Outcomes a correct engine must reach that this one may not reach yet (labels.json's
    /// `target`). Besides `must`'s keys, `notReason`: the failure reason the verdict must not give.
    public var target: [String: MustValue] = [:]
    /// The project's annotations say the engine reaches `target`: a miss fails the suite.
    public var targetReached = false
    /// Blinks labels.json lacks, from the project's annotations (seconds; each checked by eye).
    public var annotatedBlinks: [Double] = []
    /// One-eye winks from the project's annotations (seconds): an episode overlapping one is a
    /// blink by the spec's mean-closure rule, not a false one.
    public var winks: [ClosedRange<Double>] = []
    /// The project's blink labels of the clip (`Recordings/blink-labels.json`), scored whole clip.
    public var projectBlinks: BlinkLabels.Clip?

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
            var target: [String: MustValue]?
        }
        var recordings: [Recording]
    }

    /// The clips of `labels.json` in `directory` that have a `must`, a `target` or labelled blinks
    /// (the 200 s soak clip without any is left out).
    public static func load(directory: String) throws -> [RealClip] {
        let path = directory + "/labels.json"
        guard let data = FileManager.default.contents(atPath: path) else { throw InputError(path: path, problem: "cannot read the labels") }
        let labels = try decodeJSON(Labels.self, from: data, path: path, what: "the labels")
        return labels.recordings.compactMap { r in
            guard r.must?.isEmpty == false || r.target?.isEmpty == false || r.blinks != nil else { return nil }
            var clip = RealClip(file: r.file, path: directory + "/" + r.file, blinks: r.blinks, checked: r.checked ?? false, must: r.must ?? [:])
            clip.target = r.target ?? [:]
            return clip
        }
    }
}

/// The project's own annotations of the real recordings (`Recordings/real-clip-annotations.json`):
/// winks and blinks that labels.json lacks, checked frame by frame. Times only, never footage.
public enum RealClipAnnotations {
    private struct File: Decodable {
        struct Clip: Decodable {
            struct Wink: Decodable { var from: Double; var to: Double }
            struct Blink: Decodable { var at: Double }
            var file: String
            var winks: [Wink]?
            var blinks: [Blink]?
            /// The engine reaches the clip's labels.json `target` (checked like a `must` from then on).
            var targetReached: Bool?
        }
        var clips: [Clip]
    }

    /// The annotation file of the package at `packageRoot`.
    public static func path(packageRoot: String) -> String {
        packageRoot + "/Recordings/real-clip-annotations.json"
    }

    /// `clips` with the annotations of `path` applied (matched by file name). A missing file
    /// leaves them unchanged; an unreadable one is an error.
    public static func apply(_ path: String, to clips: [RealClip]) throws -> [RealClip] {
        guard let data = FileManager.default.contents(atPath: path) else { return clips }
        let file = try decodeJSON(File.self, from: data, path: path, what: "the annotations")
        return clips.map { clip in
            var c = clip
            for a in file.clips where a.file == clip.file {
                c.annotatedBlinks += (a.blinks ?? []).map(\.at)
                c.winks += (a.winks ?? []).filter { $0.from <= $0.to }.map { $0.from...$0.to }
                if a.targetReached == true { c.targetReached = true }
            }
            return c
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
    /// Targets (labels.json) the engine does not reach yet, on clips not marked as reached: reported, not failed.
    public var targetsMissed: [String] = []
    /// Blink episodes found (start times) and labelled blinks matched, for precision/recall.
    public var episodes: [Double] = []
    public var labelled: [Double] = []
    public var matchedEpisodes = 0
    public var matchedLabels = 0
    /// With the project's annotations: blinks added, episodes that match a label, an added
    /// blink or a wink, and labels plus added blinks that an episode matches.
    public var annotatedBlinks: [Double] = []
    public var matchedEpisodesAnnotated = 0
    public var matchedLabelsAnnotated = 0
    /// Start times (s) of the episodes that match nothing (with the annotations), and the labelled
    /// or added blinks that no episode matches.
    public var falseEpisodes: [Double] = []
    public var missedBlinks: [Double] = []
    public var checked = false
    /// The blink episodes scored against the project's labels (`BlinkLabels`), nil when the clip
    /// has none.
    public var projectBlinkScore: BlinkScore?
    public var ok: Bool { mismatches.isEmpty }
}

enum RealClipCheck {
    /// A blink episode: a run of frames in one of the machine's blink episodes (`BlinkEpisode`:
    /// from a frame whose closure reaches the threshold and whose eye edges do not show open
    /// eyes, until the eyes look open again); it matches a label when the label lies within
    /// ±`tolerance` s of the run.
    static func episodes(_ run: RecordingRun) -> [(start: Double, end: Double)] {
        var result: [(Double, Double)] = []
        var start: Double?
        var last = 0.0
        for f in run.frames {
            if f.eyesClosed {
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
        let expected = (clip.must.keys.sorted().map { "\($0)=\(clip.must[$0]!)" }
            + clip.target.keys.sorted().map { "target \($0)=\(clip.target[$0]!)" }).joined(separator: " ")
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
        if clip.must.isEmpty && clip.target.isEmpty {
            result.got = "\(got["verdict"]!) blink=\(got["blinkCredited"]!) turn=\(got["turnCredited"]!)"
        } else {
            result.got = (clip.must.keys.sorted().map { "\($0)=\(got[$0] ?? "?")" }
                + clip.target.keys.sorted().map { $0 == "notReason" ? "reason=\(got["reason"]!)" : "\($0)=\(got[$0] ?? "?")" })
                .joined(separator: " ")
        }
        for (key, value) in clip.target {
            let missed: String?
            if key == "notReason" {
                missed = got["reason"] == value.description ? "reason=\(value), target: never \(value)" : nil
            } else {
                missed = got[key] == value.description ? nil : "\(key)=\(got[key] ?? "unknown key"), target \(value)"
            }
            guard let missed else { continue }
            if clip.targetReached { result.mismatches.append(missed) } else { result.targetsMissed.append(missed) }
        }
        for (key, value) in clip.must where got[key] != value.description {
            got[key] = got[key] ?? "unknown key"
            result.mismatches.append("\(key)=\(got[key]!), must be \(value)")
        }
        let found = episodes(run)
        if let labelled = clip.projectBlinks {
            var seconds = run.frames.last?.seconds ?? 0
            if run.frames.count > 1 { seconds += seconds - run.frames[run.frames.count - 2].seconds }
            result.projectBlinkScore = BlinkScore(events: found.map { BlinkLabels.Interval(start: $0.start, end: $0.end) },
                                                  clip: labelled, clipSeconds: seconds)
        }
        if let labels = clip.blinks {
            let tolerance = 0.2
            result.episodes = found.map(\.start)
            result.labelled = labels
            result.checked = clip.checked
            func near(_ l: Double, _ e: (start: Double, end: Double)) -> Bool { l >= e.start - tolerance && l <= e.end + tolerance }
            result.matchedEpisodes = found.filter { e in labels.contains { near($0, e) } }.count
            result.matchedLabels = labels.filter { l in found.contains { near(l, $0) } }.count
            let all = labels + clip.annotatedBlinks
            result.annotatedBlinks = clip.annotatedBlinks
            let good = found.map { e in
                all.contains { near($0, e) } || clip.winks.contains { $0.lowerBound <= e.end + tolerance && $0.upperBound >= e.start - tolerance }
            }
            result.matchedEpisodesAnnotated = good.filter { $0 }.count
            result.falseEpisodes = zip(found, good).filter { !$0.1 }.map(\.0.start)
            result.missedBlinks = all.filter { l in !found.contains { near(l, $0) } }
            result.matchedLabelsAnnotated = all.count - result.missedBlinks.count
        }
        return result
    }
}
