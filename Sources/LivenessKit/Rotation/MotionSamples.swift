import Foundation

/// Device-motion samples recorded with a video: gyroscope rotation rate on three axes, in
/// rad/s, at timestamps in seconds on the video's clock (docs/motion-format.md).
public struct MotionSamples: Sendable, Equatable {
    /// One gyroscope sample.
    public struct Sample: Sendable, Equatable {
        /// Seconds on the video's clock (0 = the first frame).
        public var seconds: Double
        /// Rotation rate around the device's x, y, z axes, rad/s.
        public var x: Double, y: Double, z: Double
        /// The angular speed |ω| in degrees per second.
        public var degreesPerSecond: Double { (x * x + y * y + z * z).squareRoot() * 180 / .pi }

        public init(seconds: Double, x: Double, y: Double, z: Double) {
            self.seconds = seconds
            self.x = x
            self.y = y
            self.z = z
        }
    }

    /// The largest motion file read, in bytes (16 MiB: about 7 minutes of samples at 1 kHz, over
    /// an hour at 100 Hz; a session lasts at most 22.8 s).
    public static let maximumFileBytes = 16 << 20
    /// The longest line read, in bytes without its end (a sample line is under 100 bytes).
    public static let maximumLineBytes = 4 << 10
    /// Plausible timestamps, seconds on the video's clock: |t| ≤ 10¹⁰.
    public static let timeRange: ClosedRange<Double> = -1e10...1e10
    /// Plausible rotation rates per axis, rad/s: a phone gyroscope's full scale is 35–70 rad/s.
    public static let rateRange: ClosedRange<Double> = -100...100

    /// The samples, strictly increasing in time.
    public var samples: [Sample]
    /// The file the samples were read from, for messages; `nil` for samples made in memory.
    public var path: String?

    public init(samples: [Sample], path: String? = nil) {
        self.samples = samples
        self.path = path
    }

    /// Reads a CSV file (header naming `t`, `x`, `y`, `z`, in any order; `seconds`/`timestamp`
    /// for `t`, `rx`/`ry`/`rz` accepted) or a JSON Lines file (`{"t": 0.01, "rotationRate": [x, y, z]}`
    /// or `{"t":…, "x":…, "y":…, "z":…}`), LF or CRLF, in constant memory beyond the samples.
    ///
    /// - Throws: `InputError` naming the file (and the line, as `FILE:LINE`) for a missing,
    ///   unreadable or oversized file (`maximumFileBytes`), an overlong line, a missing column,
    ///   a field that is not a finite number or lies outside `timeRange`/`rateRange`, a timestamp
    ///   that does not increase, or a file without any sample. Quoted text is cut to 40 characters.
    public static func load(_ path: String) throws(InputError) -> MotionSamples {
        var reader: LineReader
        do {
            reader = try LineReader(path: path, maximumBytes: maximumFileBytes, maximumLineBytes: maximumLineBytes, noun: "motion file")
        } catch {
            throw InputError(path: error.line.map { "\(path):\($0)" } ?? path, problem: error.problem)
        }
        return try parse(&reader, path: path)
    }

    /// Parses motion samples held in memory (the contents of a motion file); `path` names them.
    public static func parse(_ bytes: [UInt8], path: String) throws(InputError) -> MotionSamples {
        var reader: LineReader
        do {
            reader = try LineReader(bytes: bytes, maximumBytes: maximumFileBytes, maximumLineBytes: maximumLineBytes, noun: "motion file")
        } catch {
            throw InputError(path: path, problem: error.problem)
        }
        return try parse(&reader, path: path)
    }

    private static func parse(_ reader: inout LineReader, path: String) throws(InputError) -> MotionSamples {
        var format: Format?
        var samples: [Sample] = []
        var previous = -Double.infinity
        while true {
            let bytes: ArraySlice<UInt8>?
            do {
                bytes = try reader.next()
            } catch {
                throw InputError(path: error.line.map { "\(path):\($0)" } ?? path, problem: error.problem)
            }
            guard let bytes else { break }
            let line = reader.lineNumber
            let at = "\(path):\(line)"
            guard let raw = LineReader.text(bytes) else { throw InputError(path: at, problem: "not UTF-8 text") }
            let text = raw.trimmingCharacters(in: .whitespaces)
            if text.isEmpty { continue }
            let sample: Sample
            switch format {
            case nil:
                if text.hasPrefix("{") {
                    format = .jsonLines
                    sample = try jsonSample(text, at)
                } else {
                    format = .csv(try CSVColumns(header: text, at: at))
                    continue
                }
            case .jsonLines?:
                sample = try jsonSample(text, at)
            case let .csv(columns)?:
                if text.hasPrefix("#") { continue }
                sample = try columns.sample(text, at)
            }
            guard sample.seconds > previous else {
                throw InputError(path: at, problem: "timestamp \(sample.seconds) s does not increase (previous \(previous) s)")
            }
            previous = sample.seconds
            samples.append(sample)
        }
        guard format != nil else { throw InputError(path: path, problem: "the motion file is empty") }
        guard !samples.isEmpty else { throw InputError(path: path, problem: "the motion file has a header but no samples") }
        return MotionSamples(samples: samples, path: path)
    }

    private enum Format {
        case csv(CSVColumns)
        case jsonLines
    }

    /// The positions of t, x, y, z in a CSV header.
    private struct CSVColumns {
        let count: Int
        let t: Int, x: Int, y: Int, z: Int

        init(header: String, at: String) throws(InputError) {
            let names = header.lowercased().split(separator: ",", omittingEmptySubsequences: false)
                .map { $0.trimmingCharacters(in: .whitespaces) }
            func column(_ candidates: [String]) throws(InputError) -> Int {
                guard let index = names.firstIndex(where: { candidates.contains($0) }) else {
                    throw InputError(path: at, problem: "the CSV header needs a column named \(candidates[0]) (header: '\(MotionSamples.quoted(header))')")
                }
                return index
            }
            count = names.count
            t = try column(["t", "seconds", "timestamp"])
            x = try column(["x", "rx", "rotation_rate_x"])
            y = try column(["y", "ry", "rotation_rate_y"])
            z = try column(["z", "rz", "rotation_rate_z"])
        }

        func sample(_ text: String, _ at: String) throws(InputError) -> Sample {
            let fields = text.split(separator: ",", omittingEmptySubsequences: false)
            guard fields.count == count else {
                throw InputError(path: at, problem: "\(fields.count) fields, the header has \(count)")
            }
            func number(_ i: Int, _ what: String) throws(InputError) -> Double {
                let field = fields[i].trimmingCharacters(in: .whitespaces)
                guard let value = Double(field), value.isFinite else {
                    throw InputError(path: at, problem: "\(what) '\(MotionSamples.quoted(field))' is not a finite number")
                }
                return value
            }
            return try MotionSamples.checked(Sample(seconds: try number(t, "t"), x: try number(x, "x"), y: try number(y, "y"), z: try number(z, "z")), at)
        }
    }

    private static func jsonSample(_ text: String, _ at: String) throws(InputError) -> Sample {
        let value: JSONValue
        do {
            value = try JSONValue.parse(Substring(text))
        } catch {
            throw InputError(path: at, problem: error.message)
        }
        guard let object = value.members else {
            throw InputError(path: at, problem: "expected a JSON object, found \(value.typeName)")
        }
        func number(_ key: String) -> Double? { object[key]?.double }
        guard let t = number("t") ?? number("seconds") ?? number("timestamp") else {
            throw InputError(path: at, problem: "missing number \"t\"")
        }
        let rate: [Double]
        if case let .array(items)? = object["rotationRate"] {
            let numbers = items.compactMap(\.double)
            guard numbers.count == 3, items.count == 3 else {
                throw InputError(path: at, problem: "\"rotationRate\" must hold 3 numbers [x, y, z] in rad/s")
            }
            rate = numbers
        } else if let x = number("x"), let y = number("y"), let z = number("z") {
            rate = [x, y, z]
        } else {
            throw InputError(path: at, problem: "needs \"rotationRate\": [x, y, z] in rad/s")
        }
        return try checked(Sample(seconds: t, x: rate[0], y: rate[1], z: rate[2]), at)
    }

    /// `sample` when its time and rates are plausible.
    private static func checked(_ sample: Sample, _ at: String) throws(InputError) -> Sample {
        guard timeRange.contains(sample.seconds) else {
            throw InputError(path: at, problem: "t \(sample.seconds) s is outside the plausible range ±1e10 s")
        }
        for (axis, v) in [("x", sample.x), ("y", sample.y), ("z", sample.z)] where !rateRange.contains(v) {
            throw InputError(path: at, problem: "\(axis) \(v) rad/s is outside the plausible range ±100 rad/s of a gyroscope")
        }
        return sample
    }

    /// `text` cut to 40 characters for a message.
    private static func quoted(_ text: String) -> String {
        text.count <= 40 ? text : String(text.prefix(40)) + "…"
    }
}
