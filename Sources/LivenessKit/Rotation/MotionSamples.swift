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

    /// The samples, strictly increasing in time.
    public var samples: [Sample]

    public init(samples: [Sample]) { self.samples = samples }

    /// Reads a CSV file (header naming `t`, `x`, `y`, `z`, in any order; `seconds`/`timestamp`
    /// for `t`, `rx`/`ry`/`rz` accepted) or a JSON Lines file (`{"t": 0.01, "rotationRate": [x, y, z]}`
    /// or `{"t":…, "x":…, "y":…, "z":…}`). Errors name the file and line.
    public static func load(_ path: String) throws(InputError) -> MotionSamples {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw InputError(path: path, problem: FileManager.default.fileExists(atPath: path)
                ? "cannot read the motion file" : "no such motion file")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw InputError(path: path, problem: "the motion file is not UTF-8 text")
        }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map {
            $0.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        guard let first = lines.firstIndex(where: { !$0.isEmpty }) else {
            throw InputError(path: path, problem: "the motion file is empty")
        }
        let samples = lines[first].hasPrefix("{")
            ? try parseJSONLines(lines, path: path)
            : try parseCSV(lines, header: first, path: path)
        var previous = -Double.infinity
        for (line, sample) in samples {
            guard sample.seconds > previous else {
                throw InputError(path: "\(path):\(line)", problem: "timestamp \(sample.seconds) s does not increase (previous \(previous) s)")
            }
            previous = sample.seconds
        }
        return MotionSamples(samples: samples.map(\.1))
    }

    private static func number(_ text: Substring, _ what: String, _ path: String, _ line: Int) throws(InputError) -> Double {
        guard let value = Double(text.trimmingCharacters(in: .whitespaces)), value.isFinite else {
            throw InputError(path: "\(path):\(line)", problem: "\(what) '\(text)' is not a finite number")
        }
        return value
    }

    private static func parseCSV(_ lines: [String], header: Int, path: String) throws(InputError) -> [(Int, Sample)] {
        let names = lines[header].lowercased().split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        func column(_ candidates: [String]) throws(InputError) -> Int {
            guard let index = names.firstIndex(where: { candidates.contains($0) }) else {
                throw InputError(path: "\(path):\(header + 1)", problem: "the CSV header needs a column named \(candidates[0]) (header: \(lines[header]))")
            }
            return index
        }
        let t = try column(["t", "seconds", "timestamp"]), x = try column(["x", "rx", "rotation_rate_x"])
        let y = try column(["y", "ry", "rotation_rate_y"]), z = try column(["z", "rz", "rotation_rate_z"])
        var result: [(Int, Sample)] = []
        for index in (header + 1)..<lines.count where !lines[index].isEmpty && !lines[index].hasPrefix("#") {
            let fields = lines[index].split(separator: ",", omittingEmptySubsequences: false)
            guard fields.count == names.count else {
                throw InputError(path: "\(path):\(index + 1)", problem: "\(fields.count) fields, the header has \(names.count)")
            }
            let line = index + 1
            result.append((line, Sample(seconds: try number(fields[t], "t", path, line), x: try number(fields[x], "x", path, line),
                                        y: try number(fields[y], "y", path, line), z: try number(fields[z], "z", path, line))))
        }
        return result
    }

    private static func parseJSONLines(_ lines: [String], path: String) throws(InputError) -> [(Int, Sample)] {
        var result: [(Int, Sample)] = []
        for (index, text) in lines.enumerated() where !text.isEmpty {
            let line = index + 1
            guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else {
                throw InputError(path: "\(path):\(line)", problem: "not a JSON object")
            }
            func value(_ key: String) -> Double? { (object[key] as? NSNumber)?.doubleValue }
            guard let t = value("t") ?? value("seconds") ?? value("timestamp"), t.isFinite else {
                throw InputError(path: "\(path):\(line)", problem: "missing number \"t\"")
            }
            let rate: [Double]
            if let list = object["rotationRate"] as? [NSNumber], list.count == 3 {
                rate = list.map(\.doubleValue)
            } else if let x = value("x"), let y = value("y"), let z = value("z") {
                rate = [x, y, z]
            } else {
                throw InputError(path: "\(path):\(line)", problem: "needs \"rotationRate\": [x, y, z] in rad/s")
            }
            guard rate.allSatisfy(\.isFinite) else { throw InputError(path: "\(path):\(line)", problem: "rotation rate is not finite") }
            result.append((line, Sample(seconds: t, x: rate[0], y: rate[1], z: rate[2])))
        }
        return result
    }
}
