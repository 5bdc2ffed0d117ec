import FaceTracking
import Foundation
import LivenessCore
import LivenessCommands
import LivenessKit
import LivenessRegress
import TestSupport
import XCTest

/// Builds `arkit-trace/1` text line by line, the way a phone app would write it.
private struct ARKitTrace {
    var lines: [String]
    /// Capture-clock time of frame 0, seconds (deliberately not 0: replay counts from the first frame).
    let start: Double
    let fps: Double

    init(start: Double = 1000, fps: Double = 30, width: Int? = 1080, height: Int? = 1920) {
        self.start = start
        self.fps = fps
        var header = #"{"format": "arkit-trace/1", "source": "unit test""#
        if let width, let height { header += #", "imageWidth": \#(width), "imageHeight": \#(height)"# }
        lines = [header + "}"]
    }

    /// The capture time of frame `i`, as written (6 decimals).
    func t(_ i: Int) -> String { String(format: "%.6f", start + Double(i) / fps) }

    /// Appends frame `i` with a tracked face.
    mutating func face(_ i: Int, left: Double = 0.03, right: Double = 0.03, yaw: Double = 1, center: (Double, Double) = (0.5, 0.5),
                       rate: [Double]? = [0.01, -0.02, 0], extra: String = "") {
        var line = #"{"t": \#(t(i)), "face": true, "eyeBlinkLeft": \#(left), "eyeBlinkRight": \#(right), "yaw": \#(yaw), "faceCenter": [\#(center.0), \#(center.1)]"#
        if let rate { line += #", "rotationRate": [\#(rate.map { "\($0)" }.joined(separator: ", "))]"# }
        lines.append(line + extra + "}")
    }

    /// Appends frame `i` without a face.
    mutating func noFace(_ i: Int) { lines.append(#"{"t": \#(t(i)), "face": false}"#) }

    var text: String { lines.joined(separator: "\n") + "\n" }
}

/// A fresh temporary directory, removed after the test.
private func temporaryDirectory(_ test: XCTestCase) throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("replay-tests-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    test.addTeardownBlock { try? FileManager.default.removeItem(at: url) }
    return url
}

private func replay(_ text: String, name: String = "session.jsonl", policy: LivenessPolicy = .init(), seed: UInt64 = 1) throws -> ReplayOutcome {
    try TraceReplay.run(try TraceReader(text: text, path: name), policy: policy, seed: seed)
}

/// The error reading or replaying `text` throws (fails the test when none is thrown).
private func replayError(_ text: String, name: String = "bad.jsonl", file: StaticString = #filePath, line: UInt = #line) -> TraceReadError? {
    do {
        _ = try replay(text, name: name)
        XCTFail("expected an error", file: file, line: line)
    } catch let error as TraceReadError {
        return error
    } catch {
        XCTFail("unexpected error type: \(error)", file: file, line: line)
    }
    return nil
}

final class ARKitReplayTests: XCTestCase {
    /// A spec session at 30 fps: settle (frames 0–8, t < 0.3 s), framing from frame 9 (t = 0.3 s),
    /// framed autoshot on the third in-guide framing frame (11); a sub-threshold eye dip (mean
    /// 0.20), a blink (mean 0.25) on frame 20; a one-frame yaw spike (not held); a left turn of
    /// 8° and 8.5° relative to the 1° baseline on frames 30–31, which completes the check.
    private func passingSession() -> ARKitTrace {
        var trace = ARKitTrace()
        for i in 0...40 {
            switch i {
            case 16: trace.face(i, left: 0.2, right: 0.2)
            case 20: trace.face(i, left: 0.3, right: 0.2)
            case 25: trace.face(i, yaw: 13)
            case 30: trace.face(i, yaw: 9)
            case 31: trace.face(i, yaw: 9.5)
            case 11: trace.face(i, extra: #", "faceBox": [0.3, 0.25, 0.4, 0.3], "pitch": -3.5, "roll": 1.0"#)
            default: trace.face(i)
            }
        }
        return trace
    }

    func testPassingSessionPassesOnTheSpecsFrames() throws {
        let outcome = try replay(passingSession().text)
        let m = outcome.machine
        XCTAssertEqual(outcome.format, .arkit)
        XCTAssertEqual(m.verdict?.status, .passed)
        XCTAssertNil(m.verdict?.reason)
        XCTAssertEqual(m.verdict?.frameIndex, 31)
        XCTAssertEqual(m.evidence.autoshot?.frameIndex, 11)
        XCTAssertEqual(m.evidence.autoshot?.framed, true)
        // faceBox is normalised; the still's box is in pixels of the 1080×1920 image.
        XCTAssertEqual(m.evidence.autoshot?.box, FaceBox(x: 324, y: 480, width: 432, height: 576))
        let blink = try XCTUnwrap(m.evidence.actions.first { $0.action == .blink })
        XCTAssertEqual(blink.frameIndex, 20)
        XCTAssertEqual(blink.value, 0.25, accuracy: 1e-12)
        let turn = try XCTUnwrap(m.evidence.actions.first { $0.action == .turnHead })
        XCTAssertEqual(turn.frameIndex, 31)
        XCTAssertEqual(turn.direction, .left)
        XCTAssertEqual(turn.value, 8.5, accuracy: 1e-12)
        XCTAssertEqual(m.evidence.snapshot?.frameIndex, 31)
        // Times count from the first frame, not from the capture clock's 1000 s.
        XCTAssertEqual(m.verdict?.timestampMicroseconds, 1_033_333)
        // Feeding stops at the verdict: 32 frames judged, the other 9 counted.
        XCTAssertEqual(m.evidence.framesRead, 32)
        XCTAssertEqual(outcome.frames, 41)
        XCTAssertEqual(outcome.ignoredAfterVerdict, 9)
        // rotationRate present on every frame: the sensor, never unknown.
        XCTAssertEqual(m.evidence.framesRotationUnknown, 0)
        XCTAssertEqual(m.evidence.framesCredited, 31 - 11 + 1)
    }

    func testReportOfAReplayDescribesTheTrace() throws {
        let outcome = try replay(passingSession().text)
        let report = LivenessReport(machine: outcome.machine, input: outcome.reportInput(path: "session.jsonl"),
                                    wallSeconds: 0.5, stills: (nil, nil), warnings: outcome.warnings,
                                    ignoredAfterVerdict: outcome.ignoredAfterVerdict)
        XCTAssertEqual(report.input.kind, .trace)
        XCTAssertEqual(report.input.width, 1080)
        XCTAssertEqual(report.input.height, 1920)
        XCTAssertEqual(report.input.frames, 41)
        XCTAssertEqual(try XCTUnwrap(report.input.durationSeconds), 40.0 / 30, accuracy: 1e-6)
        XCTAssertEqual(try XCTUnwrap(report.input.fps), 30, accuracy: 1e-3)
        XCTAssertNil(report.input.rotationDegrees)
        XCTAssertEqual(report.frames.ignoredAfterVerdict, 9)
        XCTAssertNil(report.autoshot?.path)
        XCTAssertNil(report.snapshot?.path)
        XCTAssertEqual(report.summary, "passed in 1.03 s (blink at 0.67 s, turn left at 1.03 s)")
    }

    func testRotationRateIsANormInDegreesPerSecond() throws {
        var trace = ARKitTrace()
        for i in 0...50 {
            switch i {
            case 20: trace.face(i, left: 0.5, right: 0.5)
            // |(0.13, 0.13, 0)| rad/s = 10.5 °/s: over the limit, not credited, though each axis alone is 7.4 °/s.
            case 30: trace.face(i, yaw: -9, rate: [0.13, 0.13, 0])
            case 31: trace.face(i, yaw: -9, rate: [0.13, 0.13, 0])
            // |(0, 0, -0.18)| rad/s = 10.3 °/s: the z axis counts too.
            case 35: trace.face(i, yaw: -9, rate: [0, 0, -0.18])
            case 36: trace.face(i, yaw: -9, rate: [0, 0, -0.18])
            // |(0.1, 0.1, 0.1)| rad/s = 9.92 °/s: below the limit (each axis alone is only 5.7 °/s).
            case 40: trace.face(i, yaw: -9, rate: [0.1, 0.1, 0.1])
            case 41: trace.face(i, yaw: -9, rate: [0.1, 0.1, 0.1])
            default: trace.face(i)
            }
        }
        let m = try replay(trace.text).machine
        XCTAssertEqual(m.evidence.framesRotating, 4)
        let turn = try XCTUnwrap(m.evidence.actions.first { $0.action == .turnHead })
        XCTAssertEqual(turn.frameIndex, 41)
        XCTAssertEqual(turn.direction, .right)
        XCTAssertEqual(m.verdict?.status, .passed)
    }

    func testAbsentRotationRateIsUnknownAndCredited() throws {
        var trace = ARKitTrace(width: nil, height: nil)
        for i in 0...20 { trace.face(i, rate: nil) }
        trace.noFace(21)
        let outcome = try replay(trace.text)
        let m = outcome.machine
        XCTAssertEqual(m.verdict?.status, .failed)
        XCTAssertEqual(m.verdict?.reason, .inputEnded)
        XCTAssertNil(m.verdict?.frameIndex)
        XCTAssertEqual(m.evidence.framesCredited, 10)   // frames 11…20
        XCTAssertEqual(m.evidence.framesRotationUnknown, 10)
        XCTAssertEqual(outcome.ignoredAfterVerdict, 0)
        XCTAssertNil(outcome.frameWidth)
    }

    func testATraceWithoutAnyFaceFailsWithNoFace() throws {
        var trace = ARKitTrace()
        for i in 0..<10 { trace.noFace(i) }
        XCTAssertEqual(try replay(trace.text).machine.verdict?.reason, .noFace)
    }

    func testFaceBoxWithoutImageSizeIsIgnoredWithAWarning() throws {
        var trace = ARKitTrace(width: nil, height: nil)
        for i in 0...12 { trace.face(i, extra: #", "faceBox": [0.3, 0.25, 0.4, 0.3]"#) }
        let outcome = try replay(trace.text)
        XCTAssertNil(outcome.machine.evidence.autoshot?.box)
        XCTAssertEqual(outcome.warnings.count, 1)
        XCTAssertTrue(outcome.warnings[0].contains("faceBox"), outcome.warnings[0])
    }
}

final class TraceErrorTests: XCTestCase {
    /// A valid ARKit trace of 6 frames whose frame `k` (0-based; line k + 2) is replaced by `bad`.
    private func arkit(replacing k: Int, with bad: String, blankLinesBefore: Int = 0) -> String {
        var trace = ARKitTrace()
        for i in 0..<6 { trace.face(i) }
        trace.lines[k + 1] = bad
        trace.lines.insert(contentsOf: Array(repeating: "", count: blankLinesBefore), at: 1)
        return trace.text
    }

    func testMalformedARKitLinesNameTheLineAndTheProblem() throws {
        let cases: [(bad: String, expect: String)] = [
            (#"{"t": 1000.1, "face": true, "eyeBlinkLeft": 0.1, "eyeBlinkRight": 0.1, "faceCenter": [0.5, 0.5]}"#, "missing key 'yaw'"),
            (#"{"t": 1000.1, "face": "yes"}"#, "'face' must be true or false"),
            (#"{"face": false}"#, "missing key 't'"),
            (#"{"t": "1000.1", "face": false}"#, "'t' must be a number, not a string"),
            (#"{"t": 1000.1, "face": tru}"#, "not valid JSON"),
            (#"{"t": 1000.1, "face": false, "face": true}"#, #"duplicate key "face""#),
            (#"[1000.1, true]"#, "expected a JSON object"),
            (#"{"t": 1000.1, "face": true, "eyeBlinkLeft": 0.1, "eyeBlinkRight": 0.1, "yaw": 0, "faceCenter": [0.5, 0.5, 0.5]}"#, "must hold 2 numbers"),
            (#"{"t": 1000.1, "face": true, "eyeBlinkLeft": 1.5, "eyeBlinkRight": 0.1, "yaw": 0, "faceCenter": [0.5, 0.5]}"#, "0...1"),
            (#"{"t": 1000.1, "face": false, "rotationRate": [0.1, "x", 0]}"#, "rotationRate"),
        ]
        for (k, c) in cases.enumerated() {
            let frame = k % 5 + 1               // never the first frame; the line moves around
            let blanks = k % 3                  // blank lines count as lines
            let expectedLine = 1 + blanks + frame + 1
            guard let error = replayError(arkit(replacing: frame, with: c.bad, blankLinesBefore: blanks)) else { continue }
            XCTAssertEqual(error.line, expectedLine, "\(c.bad)")
            XCTAssertTrue(error.description.hasPrefix("bad.jsonl:\(expectedLine): "), error.description)
            XCTAssertTrue(error.problem.contains(c.expect), "\(error.problem) should mention \(c.expect)")
        }
    }

    func testUnsupportedHeaderIsAnErrorOnItsLine() throws {
        let error = replayError("\n" + #"{"format": "arkit-trace/2"}"# + "\n" + #"{"t": 0, "face": false}"# + "\n")
        XCTAssertEqual(error?.line, 2)
        XCTAssertTrue(error?.problem.contains("arkit-trace/2") == true, error?.problem ?? "")
    }

    func testNonIncreasingTimestampIsTheMachinesErrorWithTheLine() throws {
        var trace = ARKitTrace()
        trace.face(0)
        trace.face(1)
        trace.face(2)
        trace.lines.append(trace.lines[3])  // frame 2 again: same t
        let error = replayError(trace.text)
        XCTAssertEqual(error?.line, 5)
        XCTAssertTrue(error?.problem.contains("does not increase") == true, error?.problem ?? "")

        var backwards = ARKitTrace()
        backwards.face(0)
        backwards.face(2)
        backwards.face(1)
        XCTAssertEqual(replayError(backwards.text)?.line, 4)
    }

    func testMalformedEngineTraceLines() throws {
        let header = TraceWriter.columns.joined(separator: ",")
        var good = Array(repeating: "", count: TraceWriter.columns.count)
        func set(_ column: String, _ value: String, in row: inout [String]) {
            row[TraceWriter.columns.firstIndex(of: column)!] = value
        }
        for (c, v) in [("frame", "0"), ("seconds", "0.0"), ("face", "1"), ("faces", "1"), ("face_center_x", "0.5"),
                       ("face_center_y", "0.5"), ("ear_left", "0.3"), ("ear_right", "0.3"), ("yaw_degrees", "1.5"),
                       ("rotation_source", "unknown"), ("frame_width", "640"), ("frame_height", "480")] {
            set(c, v, in: &good)
        }
        var second = good
        set("frame", "1", in: &second)
        set("seconds", "0.04", in: &second)

        var badNumber = second
        set("ear_left", "0.3x", in: &badNumber)
        var missing = second
        set("yaw_degrees", "", in: &missing)
        var badSource = second
        set("rotation_source", "gyro", in: &badSource)
        let cases: [(line: String, expect: String)] = [
            (badNumber.joined(separator: ","), "column 'ear_left' is not a number: '0.3x'"),
            (missing.joined(separator: ","), "missing column 'yaw_degrees'"),
            (second.dropLast().joined(separator: ","),
             "\(TraceWriter.columns.count - 1) fields where the header has \(TraceWriter.columns.count) columns"),
            (badSource.joined(separator: ","), "rotation_source"),
        ]
        for c in cases {
            let text = [header, good.joined(separator: ","), c.line].joined(separator: "\n")
            let error = replayError(text, name: "t.csv")
            XCTAssertEqual(error?.line, 3)
            XCTAssertTrue(error?.description.hasPrefix("t.csv:3: ") == true, error?.description ?? "")
            XCTAssertTrue(error?.problem.contains(c.expect) == true, "\(error?.problem ?? "") should mention \(c.expect)")
        }

        // The same in JSONL: a string where a number belongs.
        let json0 = #"{"frame":0,"seconds":0.0,"face":1,"face_center_x":0.5,"face_center_y":0.5,"ear_left":0.3,"ear_right":0.3,"yaw_degrees":1.5}"#
        let json1 = #"{"frame":1,"seconds":0.04,"face":1,"face_center_x":0.5,"face_center_y":0.5,"ear_left":"0.3","ear_right":0.3,"yaw_degrees":1.5}"#
        let error = replayError(json0 + "\n" + json1 + "\n", name: "t.jsonl")
        XCTAssertEqual(error?.line, 2)
        XCTAssertTrue(error?.problem.contains("'ear_left' must be a number, not a string") == true, error?.problem ?? "")
    }

    func testHeaderProblemsAndEmptyFiles() throws {
        XCTAssertEqual(replayError("\n\n")?.line, nil)
        let notATrace = replayError("hello,world\n1,2\n", name: "x.csv")
        XCTAssertEqual(notATrace?.line, 1)
        XCTAssertTrue(notATrace?.problem.contains("'frame'") == true, notATrace?.problem ?? "")
        XCTAssertEqual(replayError(#"{"x": 1}"#)?.line, 1)
        XCTAssertThrowsError(try TraceReader(path: "/nonexistent/trace.csv")) { error in
            XCTAssertEqual((error as? TraceReadError)?.description, "/nonexistent/trace.csv: no such file")
        }
    }
}

final class EngineTraceRoundTripTests: XCTestCase {
    /// Random records with the values `FaceObserver` would write (quantized to 6 decimals), and
    /// the observations `FaceObserver` built alongside them.
    private func sample(count: Int, seed: UInt64) -> [(record: TraceRecord, observation: Observation)] {
        var rng = SeededGenerator(seed: seed)
        func r(_ range: ClosedRange<Double>) -> Double { NumberFormat.quantized(Double.random(in: range, using: &rng)) }
        var micros: Int64 = 0
        var result: [(TraceRecord, Observation)] = []
        for i in 0..<count {
            micros += Int64.random(in: 20_000...70_000, using: &rng)  // variable frame rate
            var record = TraceRecord(frame: i, seconds: Double(micros) / 1e6, frameWidth: 1280, frameHeight: 720)
            let sources: [RotationSource] = [.sensor, .video, .unknown]
            record.rotationSource = sources[i % 3]
            record.deviceRotationDegreesPerSecond = record.rotationSource == .unknown ? nil : r(0...40)
            var face: FaceObservation?
            if i % 7 != 3 {
                let box = FaceBox(x: r(0...900), y: r(0...400), width: r(50...400), height: r(50...400))
                record.face = true
                record.faces = 1 + i % 2
                record.box = box
                record.faceCenterX = r(0...1)
                record.faceCenterY = r(0...1)
                record.earLeft = r(0.05...0.4)
                record.earRight = r(0.05...0.4)
                record.yawDegrees = r(-40...40)
                record.pitchDegrees = r(-20...20)
                record.rollDegrees = r(-20...20)
                record.eyeDistancePixels = r(20...200)
                record.landmarks = (0..<136).map { _ in r(0...1280) }
                record.planarResidual = i % 5 == 0 ? nil : r(0...0.3)  // absent before the autoshot
                face = FaceObservation(centerX: record.faceCenterX!, centerY: record.faceCenterY!,
                                       eyes: .aspectRatio(left: record.earLeft!, right: record.earRight!),
                                       yawDegrees: record.yawDegrees!, pitchDegrees: record.pitchDegrees,
                                       rollDegrees: record.rollDegrees, box: box, eyeDistancePixels: record.eyeDistancePixels,
                                       planarResidual: record.planarResidual)
            }
            // Core-derived columns: written, never read back as input.
            record.eyeClosureLeft = r(0...1)
            record.credited = i % 2 == 0
            record.notCreditedReason = i % 2 == 0 ? nil : "notScanning"
            record.phase = "framing"
            record.hud = "outsideGuide"
            let observation = Observation(
                frameIndex: i, timestampMicroseconds: micros, face: face, faceCount: record.faces,
                deviceRotation: DeviceRotation(degreesPerSecond: record.deviceRotationDegreesPerSecond, source: record.rotationSource),
                frameWidth: 1280, frameHeight: 720)
            result.append((record, observation))
        }
        // The first frame is at 0 s, as FaceObserver writes it.
        let first = result[0].1.timestampMicroseconds
        return result.map { pair in
            var (rec, obs) = pair
            obs.timestampMicroseconds -= first
            rec.seconds = Double(obs.timestampMicroseconds) / 1e6
            return (rec, obs)
        }
    }

    func testWrittenTracesReadBackAsIdenticalObservations() throws {
        let dir = try temporaryDirectory(self)
        let records = sample(count: 300, seed: 42)
        for format in TraceFormat.allCases {
            for landmarks in [false, true] {
                let path = dir.appendingPathComponent("trace-\(landmarks).\(format.rawValue)").path
                let writer = TraceWriter(sink: try OutputSink(path: path), format: format, landmarks: landmarks)
                for pair in records { writer.write(pair.record) }
                try writer.finish()
                let reader = try TraceReader(path: path)
                XCTAssertEqual(reader.format, format == .csv ? .csv : .jsonl)
                let frames = try reader.readAll()
                XCTAssertEqual(frames.count, records.count)
                for (frame, expected) in zip(frames, records) where frame.observation != expected.observation {
                    XCTFail("\(format) landmarks=\(landmarks) line \(frame.line): \(frame.observation) != \(expected.observation)")
                    break
                }
                // Line numbers: the CSV header is line 1; JSONL has no header.
                XCTAssertEqual(frames.first?.line, format == .csv ? 2 : 1)
            }
        }
    }

    func testReplayIsIndependentOfTheTraceFormat() throws {
        let dir = try temporaryDirectory(self)
        let records = sample(count: 200, seed: 7)
        var verdicts: [Verdict?] = []
        var evidence: [Evidence] = []
        for format in TraceFormat.allCases {
            let path = dir.appendingPathComponent("t.\(format.rawValue)").path
            let writer = TraceWriter(sink: try OutputSink(path: path), format: format)
            for pair in records { writer.write(pair.record) }
            try writer.finish()
            let machine = try TraceReplay.run(try TraceReader(path: path), policy: .init(), seed: 3).machine
            verdicts.append(machine.verdict)
            evidence.append(machine.evidence)
        }
        // …and equal to driving the machine with the observations directly.
        var direct = LivenessMachine(policy: .init(), seed: 3)
        for pair in records where direct.verdict == nil { _ = try direct.observe(pair.observation) }
        if direct.verdict == nil { _ = direct.finish(.inputEnded) }
        XCTAssertEqual(verdicts, [direct.verdict, direct.verdict])
        XCTAssertEqual(evidence, [direct.evidence, direct.evidence])
    }
}

final class ParallaxReplayTests: XCTestCase {
    /// A trace of a flat turn (the residual column says flat) fails with presentationAttack on
    /// replay; the same trace without the column (an older trace) is not evaluated and passes.
    func testTheResidualColumnDecidesAndItsAbsenceIsNotEvaluated() throws {
        let dir = try temporaryDirectory(self)
        var header = TraceWriter.columns
        let lines = (0..<30).map { i -> [String: String] in
            // Autoshot on frame 10 (framed, 0.4 s); a blink on frame 12; a 12° turn from frame 15.
            ["frame": "\(i)", "seconds": "\(Double(i) * 0.04)", "face": "1", "faces": "1", "face_center_x": "0.5",
             "face_center_y": "0.5", "ear_left": i == 12 || i == 13 ? "0.1" : "0.3", "ear_right": i == 12 || i == 13 ? "0.1" : "0.3",
             "yaw_degrees": i >= 15 ? "12" : "0", "eye_distance_px": "60", "frame_width": "640", "frame_height": "480",
             "planar_residual": i > 10 ? "0.012" : ""]
        }
        func write(_ name: String, columns: [String]) throws -> String {
            let path = dir.appendingPathComponent(name).path
            let rows = [columns.joined(separator: ",")] + lines.map { line in columns.map { line[$0] ?? "" }.joined(separator: ",") }
            try (rows.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
            return path
        }
        let flat = try TraceReplay.run(try TraceReader(path: try write("flat.csv", columns: header)), policy: .init(), seed: 1).machine
        XCTAssertEqual(flat.verdict?.reason, .presentationAttack)
        XCTAssertEqual(flat.evidence.parallax.status, .flat)
        XCTAssertEqual(flat.evidence.parallax.residual, 0.012)

        header.removeAll { $0 == "planar_residual" }
        let old = try TraceReplay.run(try TraceReader(path: try write("old.csv", columns: header)), policy: .init(), seed: 1).machine
        XCTAssertEqual(old.evidence.parallax.status, .notEvaluated)
        XCTAssertTrue(old.evidence.actions.contains { $0.action == .turnHead }, "without residuals the turn stands")
    }
}

final class RecordingReplayTests: XCTestCase {
    /// `../shared/recordings` beside the package root, or `LIVENESS_RECORDINGS`.
    private func recordings() throws -> URL {
        if let env = ProcessInfo.processInfo.environment["LIVENESS_RECORDINGS"], !env.isEmpty {
            return URL(fileURLWithPath: env)
        }
        let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return packageRoot.deletingLastPathComponent().appendingPathComponent("shared/recordings")
    }

    func testReplayingAnEngineTraceOfARealClipGivesTheAnalysisVerdict() throws {
        let clip = try recordings().appendingPathComponent("vr-face3-talking-blinks.mp4").path
        guard FileManager.default.fileExists(atPath: clip) else {
            throw Skip.sharedFootage("vr-face3-talking-blinks.mp4", at: (clip as NSString).deletingLastPathComponent)
        }
        let dir = try temporaryDirectory(self)
        let csv = dir.appendingPathComponent("clip.csv").path
        let jsonl = dir.appendingPathComponent("clip.jsonl").path
        let csvWriter = TraceWriter(sink: try OutputSink(path: csv), format: .csv, landmarks: true)
        let jsonlWriter = TraceWriter(sink: try OutputSink(path: jsonl), format: .jsonl)
        var observations: [Observation] = []
        let session = try AnalysisSession(source: try FrameSource(path: clip), model: try LandmarkModel.load(),
                                          policy: .init(), seed: 1, keepLandmarks: true, stopAtVerdict: false)
        let analysis = try session.run { step in
            observations.append(step.observation)
            csvWriter.write(step.record)
            jsonlWriter.write(step.record)
        }
        try csvWriter.finish()
        try jsonlWriter.finish()
        let expected = analysis.machine
        XCTAssertNotNil(expected.verdict)

        for path in [csv, jsonl] {
            // The reader gives back exactly what the analysis fed the machine…
            XCTAssertEqual(try TraceReader(path: path).readAll().map(\.observation), observations, path)
            // …so the replay reaches the same verdict on the same frames.
            let outcome = try TraceReplay.run(try TraceReader(path: path), policy: .init(), seed: 1)
            let replayed = outcome.machine
            XCTAssertEqual(replayed.verdict?.status, expected.verdict?.status, path)
            XCTAssertEqual(replayed.verdict?.reason, expected.verdict?.reason, path)
            XCTAssertEqual(replayed.verdict?.frameIndex, expected.verdict?.frameIndex, path)
            XCTAssertEqual(replayed.evidence.actions.map(\.frameIndex), expected.evidence.actions.map(\.frameIndex), path)
            XCTAssertEqual(replayed.evidence.actions, expected.evidence.actions, path)
            XCTAssertEqual(replayed.evidence.autoshot, expected.evidence.autoshot, path)
            // The analysis fed every frame (stopAtVerdict false), the replay stopped at the verdict:
            // the machine counted what the replay counted itself.
            XCTAssertEqual(outcome.ignoredAfterVerdict, expected.evidence.framesIgnoredAfterVerdict, path)
            var counted = replayed.evidence
            counted.framesIgnoredAfterVerdict = outcome.ignoredAfterVerdict
            XCTAssertEqual(counted, expected.evidence, path)
        }
    }
}

final class ReplayCommandTests: XCTestCase {
    private func write(_ text: String, _ name: String, in dir: URL) throws -> String {
        let path = dir.appendingPathComponent(name).path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    func testExitCodesAndOutputs() throws {
        let dir = try temporaryDirectory(self)
        var pass = ARKitTrace()
        for i in 0...40 { pass.face(i, left: i == 15 ? 0.6 : 0.03, right: i == 15 ? 0.6 : 0.03, yaw: i >= 20 ? -12 : 0) }
        var fail = ARKitTrace()
        for i in 0...40 { fail.face(i) }
        let passPath = try write(pass.text, "pass.jsonl", in: dir)
        let failPath = try write(fail.text, "fail.jsonl", in: dir)
        let badPath = try write(pass.text.replacingOccurrences(of: #""face": true"#, with: #""face": 1"#), "bad.jsonl", in: dir)
        let out = dir.appendingPathComponent("out").path
        let console = Console()

        XCTAssertEqual(ReplayCommand.run([passPath, "--output", out], console: console), 0)
        XCTAssertEqual(try String(contentsOfFile: out, encoding: .utf8),
                       "passed in 0.70 s (blink at 0.50 s, turn right at 0.70 s)\n")

        XCTAssertEqual(ReplayCommand.run([failPath, "--json", "--output", out, "--seed", "9"], console: console), 1)
        let report = try JSONDecoder().decode(LivenessReport.self, from: Data(contentsOf: URL(fileURLWithPath: out)))
        XCTAssertEqual(report.verdict.status, .failed)
        XCTAssertEqual(report.verdict.reason, .inputEnded)
        XCTAssertEqual(report.seed, 9)
        XCTAssertEqual(report.input.kind, .trace)
        XCTAssertEqual(report.input.path, failPath)

        // A policy file changes the judgement: with a 0.2 s scan cap the passing trace times out.
        let policy = try write(#"{"scanCapSeconds": 0.2}"#, "policy.json", in: dir)
        XCTAssertEqual(ReplayCommand.run([passPath, "--json", "--policy", policy, "--output", out], console: console), 1)
        let capped = try JSONDecoder().decode(LivenessReport.self, from: Data(contentsOf: URL(fileURLWithPath: out)))
        XCTAssertEqual(capped.verdict.reason, .timeout)
        XCTAssertEqual(capped.policy.scanCapSeconds, 0.2)

        XCTAssertEqual(ReplayCommand.run([badPath], console: console), 2)
        XCTAssertEqual(ReplayCommand.run([dir.appendingPathComponent("missing.csv").path], console: console), 2)
        XCTAssertEqual(ReplayCommand.run([], console: console), 2)
        XCTAssertEqual(ReplayCommand.run([passPath, "--seed", "x"], console: console), 2)
        XCTAssertEqual(LivenessCLI.run(["replay", passPath, "--output", out], console: console), 0)
    }

    func testHelpSnapshot() {
        XCTAssertEqual(ReplayCommand.spec.help, """
            OVERVIEW: Judge a face-tracking trace (this engine's CSV or JSONL, or arkit-trace/1) without video.

            USAGE: liveness replay <trace> [--json] [--policy <file>] [--allow-weaker-policy] [--seed <n>] [--output <file>]

            ARGUMENTS:
              <trace>                   A trace written by 'liveness trace' (CSV or JSONL) or an arkit-trace/1 file.

            OPTIONS:
              --json                    Print the full report (liveness-report/1) as JSON instead of one line.
              --policy <file>           A JSON policy file (absent keys keep the defaults).
              --allow-weaker-policy     Accept a policy weaker than the spec on a security threshold (marked in the report).
              --seed <n>                Seed of the challenge order (default 1, as for 'trace').
              --output <file>           Write the summary or report to FILE instead of standard output.
              --help                    Show help information.

            """)
    }
}
