@testable import FaceTracking
import Foundation
import TestSupport
import XCTest

/// The tracking policy on recorded measurements: what the detector and the landmark model gave
/// on a real clip (`Fixtures/tracking-zc-phone-replay.txt`: every primitive call the policy made,
/// with its result, and the step it decided), replayed without the model. The policy must make
/// the same calls, with the same arguments, and decide the same steps. The recording was made
/// when the policy moved from C++ to Swift, whose traces were byte-identical to the C++ tracker's
/// on every shared clip: it is that tracker's behaviour on this clip.
///
/// A second test records the clip again with the model (when the shared footage is there) and
/// checks the primitives still give the recorded measurements; `LIVENESS_WRITE_FIXTURES=1` makes
/// it write the file instead.
final class TrackingReplayTests: XCTestCase {
    static let clip = "zc-phone-replay-attack.webm"
    static let frames = 157
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/tracking-zc-phone-replay.txt")

    func testThePolicyMakesTheRecordedCallsAndStepsWithoutTheModel() throws {
        let lines = try String(contentsOf: Self.fixture, encoding: .utf8).split(separator: "\n").map(String.init)
        var replay = Replay(lines: lines)
        var policy = TrackingPolicy(configuration: TrackerConfiguration())
        var frames = 0, sources: [FaceSource: Int] = [:]
        while let frame = try replay.nextFrame() {
            let step = try policy.step(width: frame.width, height: frame.height, timestampMilliseconds: frame.t, using: &replay)
            XCTAssertEqual(Record.step(step), try replay.take("step"), "frame \(frames)")
            sources[step.source, default: 0] += 1
            frames += 1
        }
        XCTAssertNil(replay.failure, replay.failure ?? "")
        XCTAssertEqual(frames, Self.frames)
        // The clip exercises more than tracking: two detections, confirmations, and the paced
        // searches of the frames after the face is gone.
        XCTAssertEqual(sources[.detected], 2)
        XCTAssertGreaterThan(sources[.verified, default: 0], 5)
        XCTAssertGreaterThan(sources[.tracked, default: 0], 30)
        XCTAssertGreaterThan(sources[FaceSource.none, default: 0], 50)
    }

    func testTheModelStillGivesTheRecordedMeasurements() throws {
        let path = try Fixtures.shared(Self.clip)
        let recorded = try Self.record(path: path)
        if ProcessInfo.processInfo.environment["LIVENESS_WRITE_FIXTURES"] == "1" {
            try (recorded.joined(separator: "\n") + "\n").write(to: Self.fixture, atomically: true, encoding: .utf8)
        }
        let expected = try String(contentsOf: Self.fixture, encoding: .utf8).split(separator: "\n").map(String.init)
        XCTAssertEqual(recorded.count, expected.count)
        for (i, (a, b)) in zip(recorded, expected).enumerated() where a != b {
            XCTFail("line \(i + 1): recorded \(a), expected \(b)")
            break
        }
    }

    /// Runs the policy over the clip's first frames with the shim's primitives, writing down
    /// every call and its result.
    static func record(path: String) throws -> [String] {
        let model = try LandmarkModel.load()
        let reader = try VideoReader(path: path)
        let frame = Image(), gray = Image()
        var recorder = Recorder(detector: try FaceDetector(model: model), gray: gray)
        var policy = TrackingPolicy(configuration: TrackerConfiguration())
        for _ in 0..<frames {
            guard let t = try reader.read(into: frame) else { break }
            try frame.gray(into: gray)
            recorder.lines.append("frame \(frame.width) \(frame.height) \(t)")
            let step = try policy.step(width: frame.width, height: frame.height, timestampMilliseconds: t, using: &recorder)
            recorder.lines.append(Record.step(step))
        }
        return recorder.lines
    }
}

/// The lines of a recording: a call and its result on one line, numbers in Swift's shortest
/// exact form.
enum Record {
    static func region(_ r: PixelRegion) -> String { "\(r.x) \(r.y) \(r.width) \(r.height)" }
    static func rect(_ r: Rect) -> String { "\(r.x) \(r.y) \(r.width) \(r.height)" }
    static func candidates(_ found: [FaceCandidate]) -> String {
        ([String(found.count)] + found.map { "\(rect($0.box)) \($0.score) \($0.filter)" }).joined(separator: " ")
    }
    static func scan(_ region: PixelRegion, _ scale: Double, _ search: Bool, _ levels: Int) -> String {
        "scan \(Record.region(region)) \(scale) \(search) \(levels) ->"
    }
    static func load(_ region: PixelRegion, _ scale: Double) -> String { "load \(Record.region(region)) \(scale) ->" }
    static func filter(_ filter: Int) -> String { "filter \(filter)" }
    static func fit(_ box: Rect) -> String { "fit \(rect(box)) ->" }
    /// The policy reads a fit through its landmarks' bounds only: the recording keeps those.
    static func bounds(_ points: [Point]) -> String {
        let b = RectArithmetic.bounds(of: points)
        return "\(b.x) \(b.y) \(b.x + b.width) \(b.y + b.height)"
    }
    static func step(_ s: TrackingStep) -> String {
        "step \(s.source.rawValue) \(s.faceCount) \(s.face.map { rect($0.box) } ?? "none") | \(candidates(s.candidates))"
    }
}

/// The shim's primitives, writing down each call and its result.
struct Recorder: TrackingPrimitives {
    let detector: FaceDetector
    let gray: Image
    var lines: [String] = []
    var filterCount: Int { detector.filterCount }

    mutating func scan(_ region: PixelRegion, scale: Double, threshold: Double, search: Bool,
                       pyramidLevels: Int) throws(FaceTrackingError) -> [FaceCandidate] {
        let found = try detector.scan(gray, region: region, scale: scale, threshold: threshold, search: search, pyramidLevels: pyramidLevels)
        lines.append(Record.scan(region, scale, search, pyramidLevels) + " " + Record.candidates(found))
        return found
    }
    mutating func load(_ region: PixelRegion, scale: Double) throws(FaceTrackingError) -> Bool {
        let loaded = try detector.load(gray, region: region, scale: scale)
        lines.append(Record.load(region, scale) + " \(loaded)")
        return loaded
    }
    mutating func runFilter(_ filter: Int, threshold: Double) throws(FaceTrackingError) {
        try detector.runFilter(filter, threshold: threshold)
        lines.append(Record.filter(filter))
    }
    mutating func suppressed() throws(FaceTrackingError) -> [FaceCandidate] {
        let found = try detector.suppressed()
        lines.append("suppressed -> " + Record.candidates(found))
        return found
    }
    mutating func fit(in box: Rect) throws(FaceTrackingError) -> [Point] {
        let points = try detector.model.fitLandmarks(in: gray, box: box)
        lines.append(Record.fit(box) + " " + Record.bounds(points))
        return points
    }
}

/// Recorded results handed back in order; a call that is not the recorded one is a failure.
struct Replay: TrackingPrimitives {
    var lines: [String]
    var next = 0
    var failure: String?
    let filterCount = 5

    init(lines: [String]) { self.lines = lines }

    mutating func nextFrame() throws -> (width: Int, height: Int, t: Double)? {
        guard next < lines.count else { return nil }
        let f = try take("frame").split(separator: " ")
        guard f.count == 4, let w = Int(f[1]), let h = Int(f[2]), let t = Double(f[3]) else { throw failed("bad frame line") }
        return (w, h, t)
    }

    /// The next line, which must start with `prefix`.
    mutating func take(_ prefix: String) throws(FaceTrackingError) -> String {
        guard next < lines.count, lines[next].hasPrefix(prefix) else {
            throw failed("expected \(prefix) at line \(next + 1), recorded: \(next < lines.count ? lines[next] : "end")")
        }
        next += 1
        return lines[next - 1]
    }

    /// The result after " -> " of the next line, whose call part must be `call`.
    private mutating func result(of call: String) throws(FaceTrackingError) -> [Substring] {
        let line = try take(String(call.prefix { $0 != " " }))
        guard line.hasPrefix(call) else { throw failed("line \(next): the policy called \(call), recorded: \(line)") }
        return line.dropFirst(call.count).split(separator: " ")
    }

    private mutating func failed(_ message: String) -> FaceTrackingError {
        if failure == nil { failure = message }
        return FaceTrackingError(kind: .internal, message: message)
    }

    private mutating func candidates(_ fields: ArraySlice<Substring>) throws(FaceTrackingError) -> [FaceCandidate] {
        let n = fields.first.flatMap { Int($0) } ?? -1
        let values = fields.dropFirst().compactMap { Double($0) }
        guard n >= 0, values.count == 6 * n else { throw failed("bad candidates at line \(next)") }
        return (0..<n).map { i in
            let v = values[(6 * i)...]
            let b = v.startIndex
            return FaceCandidate(box: Rect(x: v[b], y: v[b + 1], width: v[b + 2], height: v[b + 3]), score: v[b + 4], filter: Int(v[b + 5]))
        }
    }

    mutating func scan(_ region: PixelRegion, scale: Double, threshold: Double, search: Bool,
                       pyramidLevels: Int) throws(FaceTrackingError) -> [FaceCandidate] {
        try candidates(try result(of: Record.scan(region, scale, search, pyramidLevels))[...])
    }
    mutating func load(_ region: PixelRegion, scale: Double) throws(FaceTrackingError) -> Bool {
        try result(of: Record.load(region, scale)).first == "true"
    }
    mutating func runFilter(_ filter: Int, threshold: Double) throws(FaceTrackingError) {
        _ = try result(of: Record.filter(filter))
    }
    mutating func suppressed() throws(FaceTrackingError) -> [FaceCandidate] {
        try candidates(try result(of: "suppressed ->")[...])
    }
    /// Landmarks with the recorded bounds (two corners; the policy reads only the bounds).
    mutating func fit(in box: Rect) throws(FaceTrackingError) -> [Point] {
        let v = try result(of: Record.fit(box)).compactMap { Double($0) }
        guard v.count == 4 else { throw failed("bad fit at line \(next)") }
        return [Point(x: v[0], y: v[1]), Point(x: v[2], y: v[3])] + Array(repeating: Point(x: v[0], y: v[1]), count: 66)
    }
}
