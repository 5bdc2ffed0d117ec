import Foundation
import LivenessKit

/// The project's hand-checked blink labels of the shared real recordings
/// (`Recordings/blink-labels.json`, docs/blinks.md): for every clip with a face, each blink of
/// both eyes from the first frame where the lids visibly drop to the last before they are open
/// again, checked by eye on the frames. Ambiguous cases (a squint, a look down, glare, blur) and
/// one-eye winks count neither way. Times only, never footage. `liveness regress` scores the
/// engine's blink episodes of whole clips against them; Tools/measure_blinks.py does the same with
/// the independent peer beside it (the matching rule is the same: Tools/blinks/events.py).
public struct BlinkLabels: Sendable {
    /// A labelled interval of one clip, seconds from the first frame.
    public struct Interval: Sendable, Equatable {
        public var start: Double
        public var end: Double
        public init(start: Double, end: Double) {
            self.start = start
            self.end = end
        }

        /// Seconds between two intervals (0 when they overlap).
        public func gap(to other: Interval) -> Double {
            max(0, max(start, other.start) - min(end, other.end))
        }
    }

    /// One clip's labels.
    public struct Clip: Sendable {
        public var file: String
        /// Blinks that count.
        public var blinks: [Interval]
        /// Ambiguous closures and winks: an event on one is neither true nor false.
        public var excluded: [Interval]
        /// The range scored (`checkedSeconds`), nil: the whole clip.
        public var checkedSeconds: ClosedRange<Double>?
    }

    /// The checked clips (`checked` not false), by file name.
    public var clips: [String: Clip]

    private struct File: Decodable {
        struct Span: Decodable {
            var start: Double
            var end: Double
            var ambiguous: Bool?
        }
        struct Entry: Decodable {
            var file: String
            var checked: Bool?
            var checkedSeconds: [Double]?
            var blinks: [Span]?
            var winks: [Span]?
        }
        var clips: [Entry]
    }

    /// The label file of the package at `packageRoot`.
    public static func path(packageRoot: String) -> String {
        packageRoot + "/Recordings/blink-labels.json"
    }

    /// Reads `path`; nil when there is no file there, an error when it cannot be read as labels
    /// (malformed JSON, an interval whose end is before its start, a bad `checkedSeconds`).
    public static func load(_ path: String) throws -> BlinkLabels? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        guard let data = FileManager.default.contents(atPath: path) else { throw InputError(path: path, problem: "cannot read the blink labels") }
        let file = try decodeJSON(File.self, from: data, path: path, what: "the blink labels")
        var clips: [String: Clip] = [:]
        for entry in file.clips where entry.checked != false {
            func interval(_ s: File.Span) throws -> Interval {
                guard s.start.isFinite, s.end.isFinite, s.start <= s.end else {
                    throw InputError(path: path, problem: "\(entry.file): the interval \(s.start)-\(s.end) ends before it starts")
                }
                return Interval(start: s.start, end: s.end)
            }
            var clip = Clip(file: entry.file, blinks: [], excluded: [], checkedSeconds: nil)
            for b in entry.blinks ?? [] {
                if b.ambiguous == true { clip.excluded.append(try interval(b)) } else { clip.blinks.append(try interval(b)) }
            }
            for w in entry.winks ?? [] { clip.excluded.append(try interval(w)) }
            if let range = entry.checkedSeconds {
                guard range.count == 2, range[0].isFinite, range[1].isFinite, range[0] <= range[1] else {
                    throw InputError(path: path, problem: "\(entry.file): checkedSeconds must be [from, to] with from <= to")
                }
                clip.checkedSeconds = range[0]...range[1]
            }
            clips[entry.file] = clip
        }
        return BlinkLabels(clips: clips)
    }
}

/// The engine's blink events of one clip scored against its labels.
public struct BlinkScore: Sendable, Equatable {
    public var truePositives = 0
    public var falsePositives = 0
    public var falseNegatives = 0
    /// Events on an excluded interval (ambiguous, wink): neither true nor false.
    public var onExcluded = 0
    /// The false events and the missed blinks.
    public var falseEvents: [BlinkLabels.Interval] = []
    public var missed: [BlinkLabels.Interval] = []
    /// The seconds scored.
    public var seconds = 0.0

    public init() {}

    /// Matches `events` to `clip`'s blinks one to one, closest pairs first; a pair matches when
    /// its gap is at most `tolerance` seconds. Unmatched events on an excluded interval count
    /// neither way; the others are false. Only events inside `checkedSeconds` are scored.
    /// `clipSeconds`: the clip's length (for the false events per minute).
    public init(events all: [BlinkLabels.Interval], clip: BlinkLabels.Clip, clipSeconds: Double, tolerance: Double = 0.2) {
        let range = clip.checkedSeconds ?? 0...max(0, clipSeconds)
        let events = all.filter { $0.end >= range.lowerBound && $0.start <= range.upperBound }
        seconds = max(0, min(clipSeconds, range.upperBound) - range.lowerBound)
        var candidates: [(gap: Double, event: Int, label: Int)] = []
        for (i, e) in events.enumerated() {
            for (j, l) in clip.blinks.enumerated() where e.gap(to: l) <= tolerance + 1e-9 {
                candidates.append((e.gap(to: l), i, j))
            }
        }
        candidates.sort { ($0.gap, $0.event, $0.label) < ($1.gap, $1.event, $1.label) }
        var usedEvents = Set<Int>(), usedLabels = Set<Int>()
        for c in candidates where !usedEvents.contains(c.event) && !usedLabels.contains(c.label) {
            usedEvents.insert(c.event)
            usedLabels.insert(c.label)
        }
        truePositives = usedEvents.count
        for (i, e) in events.enumerated() where !usedEvents.contains(i) {
            if clip.excluded.contains(where: { e.gap(to: $0) <= tolerance + 1e-9 }) {
                onExcluded += 1
            } else {
                falseEvents.append(e)
            }
        }
        falsePositives = falseEvents.count
        missed = clip.blinks.enumerated().filter { !usedLabels.contains($0.offset) }.map(\.element)
        falseNegatives = missed.count
    }

    /// False events per minute of the seconds scored (nil for an empty clip).
    public var falsePerMinute: Double? { seconds > 0 ? Double(falsePositives) / seconds * 60 : nil }

    /// Sums of several clips' scores (their seconds added).
    public static func total(_ scores: [BlinkScore]) -> BlinkScore {
        var t = BlinkScore()
        for s in scores {
            t.truePositives += s.truePositives
            t.falsePositives += s.falsePositives
            t.falseNegatives += s.falseNegatives
            t.onExcluded += s.onExcluded
            t.seconds += s.seconds
        }
        return t
    }

    /// TP / (TP + FP), nil without events.
    public var precision: Double? {
        truePositives + falsePositives == 0 ? nil : Double(truePositives) / Double(truePositives + falsePositives)
    }

    /// TP / (TP + FN), nil without labelled blinks.
    public var recall: Double? {
        truePositives + falseNegatives == 0 ? nil : Double(truePositives) / Double(truePositives + falseNegatives)
    }
}

extension BlinkLabels {
    /// `clips` (labels.json's) with each labelled clip's labels attached; labelled clips of
    /// `directory` that labels.json leaves out (no `must`, no blinks: the 200 s soak clip) are
    /// added, scored for blinks only. Labelled files not in `directory` are left out.
    public func apply(to clips: [RealClip], directory: String) -> [RealClip] {
        var result = clips.map { clip -> RealClip in
            var c = clip
            c.projectBlinks = self.clips[clip.file]
            return c
        }
        let known = Set(clips.map(\.file))
        for file in self.clips.keys.sorted() where !known.contains(file) {
            let path = directory + "/" + file
            guard FileManager.default.fileExists(atPath: path) else { continue }
            var clip = RealClip(file: file, path: path, blinks: nil, checked: false, must: [:])
            clip.projectBlinks = self.clips[file]
            result.append(clip)
        }
        return result
    }

    /// The labelled files that `directory` lacks.
    public func missingFiles(in directory: String) -> [String] {
        clips.keys.sorted().filter { !FileManager.default.fileExists(atPath: directory + "/" + $0) }
    }
}
