import Foundation
import LivenessCommands
import LivenessCore
import LivenessKit
import TestSupport
import XCTest

/// Issue 10: CRLF traces, implausible values, size and line limits.
final class TraceLimitsTests: XCTestCase {
    private let arkitHeader = #"{"format": "arkit-trace/1", "imageWidth": 640, "imageHeight": 480}"#

    private func arkitFrame(t: Double, yaw: String = "1.5", center: String = "[0.5, 0.5]", rate: String = "[0.01, 0.02, 0]",
                            extra: String = "") -> String {
        #"{"t": \#(t), "face": true, "eyeBlinkLeft": 0.1, "eyeBlinkRight": 0.2, "yaw": \#(yaw), "faceCenter": \#(center), "rotationRate": \#(rate)\#(extra)}"#
    }

    /// Engine records as `FaceObserver` writes them: a face on even frames, 25 fps.
    private func engineRecords() -> [TraceRecord] {
        (0..<30).map { i in
            var r = TraceRecord(frame: i, seconds: Double(i) * 0.04, frameWidth: 640, frameHeight: 480)
            r.rotationSource = i % 3 == 0 ? .sensor : .video
            r.deviceRotationDegreesPerSecond = Double(i) * 0.5
            if i % 2 == 0 {
                r.face = true
                r.faces = 1
                r.box = FaceBox(x: 100.5, y: 80.25, width: 200, height: 210)
                r.faceCenterX = 0.51
                r.faceCenterY = 0.47
                r.earLeft = 0.31
                r.earRight = 0.29
                r.yawDegrees = Double(i) - 10
                r.pitchDegrees = -4
                r.rollDegrees = 2
                r.eyeDistancePixels = 88.5
            }
            return r
        }
    }

    private func written(_ format: TraceFormat, landmarks: Bool = false) throws -> String {
        let dir = try Fixtures.temporaryDirectory(self)
        let path = dir.appendingPathComponent("t.\(format.rawValue)").path
        let writer = TraceWriter(sink: try OutputSink(path: path), format: format, landmarks: landmarks)
        for r in engineRecords() { writer.write(r) }
        try writer.finish()
        return try String(contentsOfFile: path, encoding: .utf8)
    }

    private func error(_ text: String, name: String) -> TraceReadError? {
        do {
            _ = try TraceReader(text: text, path: name).readAll()
            XCTFail("\(name): expected an error")
        } catch let error as TraceReadError {
            return error
        } catch {
            XCTFail("\(name): \(error)")
        }
        return nil
    }

    /// Issue 10: CRLF traces were rejected ("header names column '1' twice"); the docs promise
    /// `\r` handling. Each format with CRLF line ends reads to the same frames as with LF.
    func testCRLFTracesReadLikeLFTraces() throws {
        let arkit = ([arkitHeader] + (0..<20).map { arkitFrame(t: 100 + Double($0) / 30) }).joined(separator: "\n") + "\n"
        for (name, text) in [("t.csv", try written(.csv)), ("t.jsonl", try written(.jsonl)), ("a.jsonl", arkit)] {
            let lf = try TraceReader(text: text, path: name).readAll()
            XCTAssertGreaterThanOrEqual(lf.count, 20, name)
            let crlf = try TraceReader(text: text.replacingOccurrences(of: "\n", with: "\r\n"), path: name).readAll()
            XCTAssertEqual(crlf, lf, name)
            // A CRLF file without a final line end, and with blank CRLF lines.
            let ragged = text.replacingOccurrences(of: "\n", with: "\r\n\r\n").dropLast(2)   // "\r\n" is one Character
            XCTAssertEqual(try TraceReader(text: String(ragged), path: name).readAll().map(\.observation), lf.map(\.observation), name)
        }
    }

    /// Issue 10: face centre 1e308, EAR −5 and rotation −1000 °/s were accepted silently. Each
    /// implausible value is an error naming the line and the field.
    func testImplausibleEngineValuesNameTheLineAndTheField() throws {
        let csv = try written(.csv)
        var lines = csv.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let header = lines[0].split(separator: ",").map(String.init)
        let cases: [(column: String, value: String)] = [
            ("face_center_x", "1e308"), ("face_center_y", "-3"), ("ear_left", "-5"), ("ear_right", "50"),
            ("yaw_degrees", "1e308"), ("pitch_degrees", "400"), ("roll_degrees", "-181"), ("device_rotation_dps", "-1000"),
            ("seconds", "1e300"), ("frame", "1e12"), ("faces", "1000000"), ("box_w", "-3"), ("box_x", "1e9"),
            ("eye_distance_px", "-1"), ("frame_width", "0"), ("frame_height", "1000000"),
        ]
        for c in cases {
            var row = lines[5].split(separator: ",", omittingEmptySubsequences: false).map(String.init)   // frame 4, a face
            row[header.firstIndex(of: c.column)!] = c.value
            var edited = lines
            edited[5] = row.joined(separator: ",")
            let e = error(edited.joined(separator: "\n"), name: "t.csv")
            XCTAssertEqual(e?.line, 6, c.column)
            XCTAssertTrue(e?.problem.contains("column '\(c.column)'") == true, "\(c.column): \(e?.problem ?? "")")
            XCTAssertTrue(e?.problem.contains("plausible range") == true, "\(c.column): \(e?.problem ?? "")")
        }
        // The same in JSONL, and the values at the edges of their ranges are accepted.
        let jsonl = try written(.jsonl).split(separator: "\n").map(String.init)
        let bad = jsonl[4].replacingOccurrences(of: #""ear_left":0.31"#, with: #""ear_left":-5"#)
        XCTAssertNotEqual(bad, jsonl[4])
        let e = error((jsonl[0..<4] + [bad]).joined(separator: "\n"), name: "t.jsonl")
        XCTAssertEqual(e?.description, "t.jsonl:5: key 'ear_left' is -5.0, outside its plausible range 0 to 10 (eye aspect ratio)")
        let edge = jsonl[4].replacingOccurrences(of: #""yaw_degrees":-6"#, with: #""yaw_degrees":-180"#)
        XCTAssertNotEqual(edge, jsonl[4])
        XCTAssertEqual(try TraceReader(text: edge, path: "t.jsonl").readAll().first?.observation.face?.yawDegrees, -180)
        lines = []
    }

    func testImplausibleARKitValuesNameTheLineAndTheField() throws {
        let cases: [(line: String, key: String)] = [
            (arkitFrame(t: 100.1, yaw: "1e308"), "yaw"),
            (arkitFrame(t: 100.1, center: "[1e308, 0.5]"), "faceCenter"),
            (arkitFrame(t: 100.1, rate: "[-1000, 0, 0]"), "rotationRate"),
            (arkitFrame(t: 1e300), "t"),
            (arkitFrame(t: 100.1, extra: #", "pitch": 720"#), "pitch"),
            (arkitFrame(t: 100.1, extra: #", "faceBox": [0.1, 0.1, -0.5, 0.2]"#), "faceBox"),
        ]
        for c in cases {
            let text = [arkitHeader, arkitFrame(t: 100), c.line].joined(separator: "\n")
            let e = error(text, name: "a.jsonl")
            XCTAssertEqual(e?.line, 3, c.key)
            XCTAssertTrue(e?.problem.hasPrefix("key '\(c.key)' is ") == true, "\(c.key): \(e?.problem ?? "")")
        }
        let header = #"{"format": "arkit-trace/1", "imageWidth": 1e12, "imageHeight": 480}"#
        XCTAssertTrue(error(header + "\n" + arkitFrame(t: 1), name: "a.jsonl")?.problem.contains("'imageWidth'") == true)
    }

    /// Issue 10: `replay --json` on a trace with yaw 1e308 failed with a raw
    /// `EncodingError.invalidValue: inf` while plain `replay` passed. Both now stop at the line.
    func testReplayOfAHugeYawIsAClearErrorWithAndWithoutJSON() throws {
        let dir = try Fixtures.temporaryDirectory(self)
        let path = dir.appendingPathComponent("huge.jsonl").path
        let frames = (0..<40).map { i in arkitFrame(t: 100 + Double(i) / 30, yaw: i == 20 ? "1e308" : "0") }
        try ([arkitHeader] + frames).joined(separator: "\n").write(toFile: path, atomically: true, encoding: .utf8)
        for json in [false, true] {
            let console = Console.capturing()
            XCTAssertEqual(LivenessCLI.run(["replay", path] + (json ? ["--json"] : []), console: console), 2)
            XCTAssertEqual(console.errors, "error: \(path):22: key 'yaw' is 1e+308, outside its plausible range -180 to 180 (degrees)\n")
            XCTAssertEqual(console.printed, "")
        }
    }

    func testAnOverlongLineIsRejectedWithItsNumber() throws {
        let csv = try written(.csv, landmarks: true)
        let lines = csv.split(separator: "\n").map(String.init)
        // A line with landmarks is far below the limit…
        XCTAssertLessThan(lines.map(\.utf8.count).max()!, TraceReader.maximumLineBytes / 16)
        // …one longer than 64 KiB is refused, in memory and from a file, before it is parsed.
        let long = lines[3] + String(repeating: " ", count: TraceReader.maximumLineBytes)
        let text = (lines[0...2] + [long] + lines[4...]).joined(separator: "\n")
        XCTAssertEqual(error(text, name: "t.csv")?.description, "t.csv:4: the line is longer than 64 KiB, the limit for a trace line")
        let dir = try Fixtures.temporaryDirectory(self)
        let path = dir.appendingPathComponent("long.csv").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try TraceReader(path: path).readAll()) { e in
            XCTAssertEqual((e as? TraceReadError)?.line, 4)
        }
        // A line without any end that never stops is refused at the limit too.
        let endless = String(repeating: "9", count: TraceReader.maximumLineBytes + 1)
        XCTAssertEqual(error(endless, name: "x.csv")?.line, 1)
    }

    func testAFileOverTheSizeLimitIsRejectedBeforeReading() throws {
        let dir = try Fixtures.temporaryDirectory(self)
        let path = dir.appendingPathComponent("big.csv").path
        // A sparse file: nothing is written, so a reader that read it would see only zeros.
        FileManager.default.createFile(atPath: path, contents: Data(try written(.csv).utf8))
        let handle = try XCTUnwrap(FileHandle(forWritingAtPath: path))
        try handle.truncate(atOffset: UInt64(TraceReader.maximumFileBytes) + 1)
        try handle.close()
        XCTAssertThrowsError(try TraceReader(path: path)) { e in
            XCTAssertEqual((e as? TraceReadError)?.description,
                           "\(path): the trace holds 67108865 bytes; the limit for a trace is 64 MiB")
        }
        // A directory is not a trace.
        XCTAssertThrowsError(try TraceReader(path: dir.path)) { e in
            XCTAssertEqual((e as? TraceReadError)?.problem, "is a directory, not a trace")
        }
    }
}
