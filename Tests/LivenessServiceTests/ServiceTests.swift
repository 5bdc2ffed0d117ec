import FaceTracking
import Foundation
import LivenessCore
import LivenessKit
import LivenessClient
import LivenessService
import TestSupport
import XCTest

/// `liveness serve` over real sockets on loopback: streams against `analyze`, many sessions at
/// once, every kind of bad input, the token rules, the session limit and TLS.
final class ServiceTests: XCTestCase {
    private static var model: LandmarkModel? { ServiceTestSupport.model }

    private func server(_ configure: (inout ServiceConfiguration) -> Void = { _ in }) throws -> LivenessServer {
        try startService(configure)
    }

    private func address(_ server: LivenessServer) throws -> ServiceAddress { try ServiceAddress(url: server.url) }

    /// Creates a session; returns (id, token).
    private func session(_ server: LivenessServer, bearer: String? = nil) throws -> (String, String) {
        let response = try ServiceClient.request("POST", "/v1/sessions", at: try address(server), bearer: bearer)
        XCTAssertEqual(response.status, 201, String(decoding: response.body, as: UTF8.self))
        let json = try XCTUnwrap(response.json)
        return (try XCTUnwrap(json["id"] as? String), try XCTUnwrap(json["token"] as? String))
    }

    private func connect(_ server: LivenessServer, _ id: String, _ token: String) throws -> WebSocketConnection {
        let connection = try WebSocketConnection(address: try address(server), path: "/v1/sessions/\(id)/stream", token: token)
        addTeardownBlock { connection.close() }
        guard case let .text(hello)? = connection.next(timeout: 30) else {
            XCTFail("the service sent no greeting within 30 s")
            throw CancellationError()
        }
        XCTAssertTrue(hello.contains("\"type\":\"session\""), hello)
        return connection
    }

    /// The next message of a type, skipping others; nil on timeout or close.
    private func next(_ connection: WebSocketConnection, _ type: String, timeout: Double = 20) -> [String: Any]? {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            guard let message = connection.next(timeout: deadline.timeIntervalSinceNow) else { return nil }
            guard case let .text(text) = message else { return nil }
            if let object = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any], object["type"] as? String == type {
                return object
            }
        }
        return nil
    }

    private func frameMessage(_ image: Image, sequence: UInt32, microseconds: Int64) -> [UInt8] {
        FrameHeader(sequence: sequence, captureMicroseconds: microseconds, format: .bgr, width: image.width, height: image.height).encoded()
            + image.withBGRBytes { bytes, stride in
                (0..<image.height).flatMap { Array(bytes[($0 * stride)..<($0 * stride + image.width * 3)]) }
            }
    }

    /// What `analyze` makes of a file (same policy and seed as the service's session).
    private func analyse(_ path: String, seed: UInt64) throws -> LivenessReport {
        let policy = LivenessPolicy()
        let source = try FrameSource(path: path)
        let session = try AnalysisSession(source: source, model: try XCTUnwrap(Self.model), policy: policy, seed: seed,
                                          rotation: VideoRotationEstimator(width: source.width, height: source.height))
        let outcome = try session.run { _ in }
        return LivenessReport(machine: outcome.machine, input: ReportInput(source: source, framesDecoded: outcome.framesDecoded),
                              wallSeconds: outcome.wallSeconds, stills: (nil, nil), warnings: [])
    }

    func testARecordingStreamedThroughTheServiceGivesTheVerdictAndEventsOfAnalyze() throws {
        let server = try server()
        var clips = [try Fixtures.generated("astronaut-still.mp4")]
        if let real = try? Fixtures.shared("st-ref2-talking-turns.mp4") { clips.append(real) }
        if let turn = try? Fixtures.generated("cases/turn-then-blink/video.mp4") { clips.append(turn) }
        // The real screen replays (labels.json "live": false): the recapture check fails them in a
        // stream as in a file.
        for attack in ["tl-monitor-replay-attack.mp4", "zc-phone-replay-attack.webm"] {
            if let clip = try? Fixtures.shared(attack) { clips.append(clip) }
        }
        for clip in clips {
            // `analyze`'s default is the spec's passive check: the relying party asks for it
            // (the service's sessions are prompted otherwise; PromptedServiceTests).
            var streamer = RecordingStreamer(address: try address(server))
            streamer.challengeMode = .passive
            let outcome = try streamer.run(try FrameSource(path: clip))
            let report = try JSONDecoder().decode(LivenessReport.self, from: Data(try XCTUnwrap(outcome.report, clip)))
            let offline = try analyse(clip, seed: report.seed)
            XCTAssertEqual(report.actions, offline.actions, clip)
            XCTAssertEqual(report.autoshot?.frame, offline.autoshot?.frame, clip)
            XCTAssertEqual(report.autoshot?.framed, offline.autoshot?.framed, clip)
            XCTAssertEqual(report.snapshot?.frame, offline.snapshot?.frame, clip)
            XCTAssertEqual(report.frames.tracked, offline.frames.tracked, clip)
            XCTAssertEqual(report.frames.credited, offline.frames.credited, clip)
            XCTAssertEqual(report.input.kind, .stream)
            XCTAssertEqual(report.presentationAttack?.recapture.status, offline.presentationAttack?.recapture.status, clip)
            XCTAssertEqual(report.presentationAttack?.continuity.status, offline.presentationAttack?.continuity.status, clip)
            if clip.contains("replay-attack") { XCTAssertEqual(report.presentationAttack?.recapture.status, .recaptured, clip) }
            // A recording that ends before a verdict is a stream closed first: cancelled, where the
            // file's analysis says inputEnded. Any decided verdict is the same.
            if offline.verdict.reason == .inputEnded {
                XCTAssertEqual(report.verdict.reason, .cancelled, clip)
            } else {
                XCTAssertEqual(report.verdict.status, offline.verdict.status, clip)
                XCTAssertEqual(report.verdict.reason, offline.verdict.reason, clip)
                XCTAssertEqual(report.verdict.seconds, offline.verdict.seconds, clip)
            }
            // The camera client's messages: the HUD changes, autoshot, actions done, snapshot,
            // verdict, in analyze's order (never which action, never a score).
            XCTAssertEqual(outcome.messages.count, outcome.texts.count, "every text message is a ServerMessage: \(outcome.texts)")
            let kinds = outcome.messages.map(\.type).filter { $0 != "ack" && $0 != "session" }
            let huds = outcome.messages.compactMap { if case let .hud(hud) = $0 { hud.state } else { nil } }
            XCTAssertEqual(huds.first, "progress", clip)
            XCTAssertEqual(kinds.filter { $0 == "action" }.count, [report.actions.blink.credited, report.actions.turnHead.credited].filter { $0 }.count, clip)
            XCTAssertEqual(kinds.last, "verdict", clip)
            // The text as sent, read without `ServerMessage` (whose decoding would skip any
            // extra key): the same types, and no action name or score anywhere.
            let raw = outcome.texts.compactMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] }
            XCTAssertEqual(raw.count, outcome.texts.count, "every message is a JSON object")
            XCTAssertEqual(raw.compactMap { $0["type"] as? String }.filter { $0 != "ack" && $0 != "session" }, kinds, clip)
            XCTAssertFalse(raw.contains { $0["action"] != nil || $0["value"] != nil }, "no action names or scores to the camera")
            if report.verdict.status == .passed {
                XCTAssertEqual(kinds.suffix(4), ["action", "snapshot", "hud", "verdict"], clip)
            }
        }
    }

    func testTraceDirectoryKeepsEachStreamedSessionsFramesAsTraceDoes() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("liveness-traces-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(atPath: directory) }
        let server = try server { $0.traceDirectory = directory }
        let clip = try Fixtures.generated("cases/turn-then-blink/video.mp4")

        // Raw frames: the service's trace is the file's, record for record (the stream front end
        // and `analyze` share the frame pipeline), up to the verdict.
        var streamer = RecordingStreamer(address: try address(server))
        streamer.challengeMode = .passive
        let outcome = try streamer.run(try FrameSource(path: clip))
        let report = try JSONDecoder().decode(LivenessReport.self, from: Data(try XCTUnwrap(outcome.report)))
        let streamed = try String(contentsOfFile: "\(directory)/\(outcome.sessionID).csv", encoding: .utf8)
        let source = try FrameSource(path: clip)
        let offline = try AnalysisSession(source: source, model: try XCTUnwrap(Self.model), policy: LivenessPolicy(), seed: report.seed,
                                          rotation: VideoRotationEstimator(width: source.width, height: source.height))
        let expectedPath = "\(directory)/offline.csv"
        let writer = TraceWriter(sink: try OutputSink(path: expectedPath), format: .csv)
        _ = try offline.run { writer.write($0.record) }
        try writer.finish()
        let expected = try String(contentsOfFile: expectedPath, encoding: .utf8)
        let rows = streamed.split(separator: "\n")
        XCTAssertEqual(rows.first.map(String.init), TraceWriter.columns.joined(separator: ","))
        XCTAssertEqual(rows.count - 1, report.frames.read, "one record per processed frame")
        XCTAssertEqual(streamed, expected)

        // JPEG frames at a browser's quality: one record per frame sent, in order, at the
        // recording's own presentation times (what ffprobe reports, from the first frame).
        var jpeg = RecordingStreamer(address: try address(server))
        jpeg.challengeMode = .passive
        jpeg.jpeg = true
        jpeg.jpegQuality = 80
        let sent = try jpeg.run(try FrameSource(path: clip))
        let jpegRows = try String(contentsOfFile: "\(directory)/\(sent.sessionID).csv", encoding: .utf8).split(separator: "\n").dropFirst()
        XCTAssertEqual(jpegRows.count, sent.framesSent)
        let probed = try ffprobeFrameSeconds(clip)
        XCTAssertGreaterThanOrEqual(probed.count, jpegRows.count)
        for (row, t) in zip(jpegRows, probed) {
            let seconds = try XCTUnwrap(Double(row.split(separator: ",", omittingEmptySubsequences: false)[1]))
            XCTAssertEqual(seconds, t - probed[0], accuracy: 1e-5)
        }
    }

    /// Each frame's presentation time in seconds, as ffprobe reports it.
    private func ffprobeFrameSeconds(_ path: String) throws -> [Double] {
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: "/usr/bin/ffprobe")
        probe.arguments = ["-v", "error", "-select_streams", "v:0", "-show_entries", "frame=best_effort_timestamp_time",
                           "-of", "csv=p=0", path]
        let pipe = Pipe()
        probe.standardOutput = pipe
        try probe.run()
        let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        probe.waitUntilExit()
        let seconds = text.split(whereSeparator: \.isNewline).compactMap { Double($0.trimmingCharacters(in: .init(charactersIn: ", "))) }
        XCTAssertFalse(seconds.isEmpty, "ffprobe printed \(text)")
        return seconds
    }

    func testATraceDirectoryThatCannotBeWrittenStopsTheStart() throws {
        XCTAssertThrowsError(try server { $0.traceDirectory = "/nonexistent-\(UUID().uuidString)" }) { error in
            XCTAssertTrue("\(error)".contains("--trace-dir"), "\(error)")
        }
    }

    func testEightSessionsAtOnceAllEndWithTheRightVerdicts() throws {
        let server = try server { $0.limits.maxSessions = 8 }
        let still = try Fixtures.generated("astronaut-still.mp4")
        let passing = (try? Fixtures.shared("st-ref2-talking-turns.mp4")) ?? (try? Fixtures.generated("cases/blink-then-turn/video.mp4"))
        let clips = (0..<8).map { $0 % 2 == 0 ? still : (passing ?? still) }
        let address = try address(server)
        let results = ResultsBox(count: clips.count)
        DispatchQueue.concurrentPerform(iterations: clips.count) { i in
            do {
                // The spec's passive check: a live clip that was not prompted passes it.
                var streamer = RecordingStreamer(address: address)
                streamer.challengeMode = .passive
                let outcome = try streamer.run(try FrameSource(path: clips[i]))
                results.set(i, outcome.verdict?.status.rawValue ?? "none")
            } catch {
                results.set(i, "error: \(error)")
            }
        }
        for (i, clip) in clips.enumerated() {
            XCTAssertEqual(results.values[i], clip == still ? "failed" : "passed", clip)
        }
    }

    func testBadMessagesGetErrorsAndNoEffectOnOtherSessions() throws {
        let server = try server()
        let (id, token) = try session(server)
        let c = try connect(server, id, token)
        let image = try Image(contentsOfFile: try Fixtures.generated("astronaut.png"))
        // A frame before start.
        c.send(binary: frameMessage(image, sequence: 0, microseconds: 0))
        XCTAssertEqual(next(c, "error")?["message"].map { "\($0)" }?.contains("before start"), true)
        // Malformed JSON, wrong shapes.
        for text in ["{not json", "[1,2]", #"{"type":"dance"}"#, #"{"type":"start","width":-3}"#] {
            c.send(text: text)
            let error = next(c, "error")
            XCTAssertEqual(error?["code"] as? String, "invalidMessage", text)
            XCTAssertEqual(error?["recoverable"] as? Bool, true, text)
        }
        c.send(text: #"{"type":"start","width":512,"height":512,"ack":true}"#)
        // A binary message that is not a frame, and one that is not an image.
        c.send(binary: Array("hello".utf8))
        XCTAssertEqual(next(c, "error")?["code"] as? String, "invalidFrame")
        c.send(binary: FrameHeader(sequence: 1, captureMicroseconds: 0, format: .jpeg).encoded() + Array("not a jpeg".utf8))
        XCTAssertEqual(next(c, "error")?["code"] as? String, "invalidFrame")
        // An image larger than announced.
        let big = try Image(width: 640, height: 640, color: .black)
        c.send(binary: frameMessage(big, sequence: 2, microseconds: 0))
        XCTAssertEqual(next(c, "error")?["code"] as? String, "frameTooLarge")
        // Good frames, then a timestamp that does not increase.
        c.send(binary: frameMessage(image, sequence: 3, microseconds: 1_000_000))
        XCTAssertEqual((next(c, "ack")?["seq"] as? NSNumber)?.intValue, 3)
        c.send(binary: frameMessage(image, sequence: 4, microseconds: 1_000_000))
        let late = next(c, "error")
        XCTAssertEqual(late?["code"] as? String, "nonIncreasingTimestamp")
        XCTAssertEqual((late?["seq"] as? NSNumber)?.intValue, 3, "the last processed frame")
        c.send(binary: frameMessage(image, sequence: 5, microseconds: 1_040_000))
        XCTAssertEqual((next(c, "ack")?["seq"] as? NSNumber)?.intValue, 5, "the stream goes on")
        // Another session is not affected by any of it.
        let (id2, token2) = try session(server)
        let other = try connect(server, id2, token2)
        other.send(text: #"{"type":"start","ack":true}"#)
        other.send(binary: frameMessage(image, sequence: 0, microseconds: 0))
        XCTAssertEqual((next(other, "ack")?["seq"] as? NSNumber)?.intValue, 0)
        // Cancel: failed/cancelled, then the server closes.
        c.send(text: #"{"type":"cancel"}"#)
        let verdict = next(c, "verdict")
        XCTAssertEqual(verdict?["reason"] as? String, "cancelled")
        let metrics = try ServiceClient.request("GET", "/metrics", at: try address(server))
        let text = String(decoding: metrics.body, as: UTF8.self)
        for name in ["liveness_sessions_active", "liveness_sessions_total{status=\"failed\",reason=\"cancelled\"}", "liveness_frames_total",
                     "liveness_frames_dropped_total", "liveness_frame_seconds_bucket", "liveness_errors_total{code=\"invalidMessage\"}",
                     "liveness_errors_total{code=\"frameTooLarge\"}", "liveness_errors_total{code=\"nonIncreasingTimestamp\"}"] {
            XCTAssertTrue(text.contains(name), "metrics lack \(name)")
        }
    }

    func testOversizedMessagesCloseWith1009AlsoInFragments() throws {
        let server = try server { $0.limits.maxMessageBytes = 200_000 }
        for fragments in [1, 8] {
            let (id, token) = try session(server)
            let c = try connect(server, id, token)
            c.send(text: #"{"type":"start"}"#)
            c.send(binary: [UInt8](repeating: 7, count: 300_000), fragments: fragments)
            var closed: (Int, String)?
            while let message = c.next(timeout: 10) {
                if case let .closed(code, reason) = message { closed = (code, reason); break }
            }
            XCTAssertEqual(closed?.0, 1009, "fragments \(fragments): \(String(describing: closed))")
        }
        // The service is still up.
        XCTAssertEqual(try ServiceClient.request("GET", "/healthz", at: try address(server)).status, 200)
    }

    func testAClientThatVanishesMidMessageEndsItsSessionCancelled() throws {
        let server = try server()
        let (id, token) = try session(server)
        let c = try connect(server, id, token)
        c.send(text: #"{"type":"start"}"#)
        // The first fragments of a frame, then the connection drops.
        c.send(binary: [UInt8](repeating: 1, count: 100_000), fragments: 4)
        Thread.sleep(forTimeInterval: 0.05)
        c.close()
        let deadline = Date().addingTimeInterval(10)
        var report: [String: Any]?
        while Date() < deadline {
            let response = try ServiceClient.request("GET", "/v1/sessions/\(id)", at: try address(server))
            if response.status == 200 { report = response.json; break }
            Thread.sleep(forTimeInterval: 0.1)
        }
        XCTAssertEqual((report?["verdict"] as? [String: Any])?["reason"] as? String, "cancelled")
        XCTAssertEqual(try ServiceClient.request("GET", "/healthz", at: try address(server)).status, 200)
    }

    /// The session's report once it is finished (polled; nil after 20 s, a hang guard).
    private func finishedReport(_ server: LivenessServer, _ id: String) throws -> [String: Any]? {
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            let response = try ServiceClient.request("GET", "/v1/sessions/\(id)", at: try address(server))
            if response.status == 200 { return response.json }
            Thread.sleep(forTimeInterval: 0.1)
        }
        return nil
    }

    /// Issue 27: a client that sends messages but no frame (here `{` every 0.2 s, each one a
    /// message that resets the idle timeout) held its slot for ever. The wall-clock cap now runs
    /// from the stream's opening: settle + framing + scan cap + grace + the idle allowance.
    func testMessagesWithoutFramesCannotHoldASlot() throws {
        var policy = LivenessPolicy()
        policy.scanCapSeconds = 1
        let server = try server {
            $0.policy = policy
            $0.limits.idleTimeoutSeconds = 1
            $0.limits.serverClockGraceSeconds = 0.5
            $0.limits.maxSessions = 1
        }
        let (id, token) = try session(server)
        let c = try connect(server, id, token)
        var closed = false
        let deadline = Date().addingTimeInterval(30)  // a hang guard: the cap is 0.3 + 2.5 + 1 + 0.5 + 1 = 5.3 s
        while !closed && Date() < deadline {
            c.send(text: "{")
            while let message = c.next(timeout: 0.2) {
                if case .closed = message { closed = true; break }
            }
        }
        XCTAssertTrue(closed, "the stream was never closed")
        let report = try XCTUnwrap(try finishedReport(server, id))
        // A timeout on a session that never saw a face is reported as noFace (the machine's rule).
        XCTAssertEqual((report["verdict"] as? [String: Any])?["reason"] as? String, "noFace")
        XCTAssertTrue((report["error"] as? String)?.contains("without a verdict (server's clock)") == true, "\(report)")
        // The slot is free again.
        XCTAssertEqual(try ServiceClient.request("POST", "/v1/sessions", at: try address(server)).status, 201)
    }

    /// Issue 27: sessions that ended before or at `start` had no report (202 `finished`, then 404),
    /// so a relying party never learnt that its policy was refused.
    func testASessionEndingBeforeItsStreamStartsHasAReportSayingWhy() throws {
        let server = try server()
        // A weaker policy in `start`: refused.
        let (refused, token) = try session(server)
        let c = try connect(server, refused, token)
        c.send(text: #"{"type":"start","policy":{"turnYawDegrees":2}}"#)
        let report = try XCTUnwrap(try finishedReport(server, refused))
        XCTAssertEqual((report["verdict"] as? [String: Any])?["reason"] as? String, "invalidInput")
        XCTAssertTrue((report["error"] as? String)?.contains("turnYawDegrees") == true, "\(report["error"] ?? "no error")")
        // Cancelled before `start`, and a client that goes away before `start`.
        let (cancelled, token2) = try session(server)
        let c2 = try connect(server, cancelled, token2)
        c2.send(text: #"{"type":"cancel"}"#)
        XCTAssertEqual(((try finishedReport(server, cancelled))?["verdict"] as? [String: Any])?["reason"] as? String, "cancelled")
        let (gone, token3) = try session(server)
        try connect(server, gone, token3).close()
        let last = try XCTUnwrap(try finishedReport(server, gone))
        XCTAssertEqual((last["verdict"] as? [String: Any])?["reason"] as? String, "cancelled")
        XCTAssertTrue((last["error"] as? String)?.contains("disconnected") == true, "\(last["error"] ?? "no error")")
    }

    /// Issue 27: SIGTERM (stop) with a stream open gave the client a bare end of the connection;
    /// the docs promise a `cancelled` verdict and a close frame.
    func testStoppingTheServiceEndsOpenStreamsCancelledWithACloseFrame() throws {
        let server = try server()
        let (id, token) = try session(server)
        let c = try connect(server, id, token)
        c.send(text: #"{"type":"start"}"#)
        Thread.sleep(forTimeInterval: 0.2)
        server.stopAsync()
        var verdict: String?
        var closed: Int?
        while let message = c.next(timeout: 10) {
            switch message {
            case let .text(text):
                if let object = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any],
                   object["type"] as? String == "verdict" { verdict = (object["reason"] as? String) ?? (object["verdict"] as? [String: Any])?["reason"] as? String }
            case let .closed(code, _):
                closed = code
            default:
                break
            }
            if closed != nil { break }
        }
        XCTAssertEqual(verdict, "cancelled")
        XCTAssertEqual(closed, 1000)
        server.wait()
    }

    /// Issue 27, request smuggling behind a proxy: with ambiguous framing the leftover bytes were
    /// read as a second request. Each is answered 400 (411 for a chunked body) and the connection
    /// closed, so the smuggled request after it is never answered.
    func testAmbiguousFramingIsRefusedAndNothingAfterItIsRead() throws {
        let server = try server()
        let smuggled = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
        let cases: [(headers: String, body: String, status: String)] = [
            ("Content-Length: 4\r\nTransfer-Encoding: chunked\r\n", "0\r\n\r\n", "400"),
            ("Content-Length: 2\r\nContent-Length: 40\r\n", "{}", "400"),
            ("Content-Length: 0x10\r\n", "{}", "400"),
            ("Content-Length: +2\r\n", "{}", "400"),
            ("Content-Length: 99999999999999999999999\r\n", "{}", "400"),
            ("Transfer-Encoding: chunked\r\n", "2\r\n{}\r\n0\r\n\r\n", "411"),
        ]
        for c in cases {
            let request = "POST /v1/sessions HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\n\(c.headers)\r\n\(c.body)" + smuggled
            let answer = try rawExchange(port: server.port, request)
            XCTAssertTrue(answer.hasPrefix("HTTP/1.1 \(c.status)"), "\(c.headers): \(answer.prefix(200))")
            XCTAssertEqual(answer.components(separatedBy: "HTTP/1.1 ").count - 1, 1, "a second response: \(c.headers)\n\(answer)")
        }
        // A well-framed request still works, and HEAD / is the page's status and headers.
        let plain = try rawExchange(port: server.port, "POST /v1/sessions HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}")
        XCTAssertTrue(plain.hasPrefix("HTTP/1.1 201"), String(plain.prefix(200)))
        let head = try rawExchange(port: server.port, "HEAD / HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\n\r\n")
        XCTAssertTrue(head.hasPrefix("HTTP/1.1 200"), String(head.prefix(200)))
        XCTAssertTrue(head.lowercased().contains("content-type: text/html"), head)
        XCTAssertFalse(head.contains("<html"), "HEAD has no body")
    }

    /// Issue 27: legal 7000×7000 JPEG frames cost 330–475 MB per session. A streamed frame is
    /// held to what cameras send (4K, published in /v1/capabilities), read from the JPEG's header
    /// before it is decoded; without `width`/`height` in `start` too.
    func testStreamedFramesAreHeldToCameraSizesBeforeTheyAreDecoded() throws {
        let server = try server()
        let capabilities = try XCTUnwrap(try ServiceClient.request("GET", "/v1/capabilities", at: try address(server)).json)
        let limits = try XCTUnwrap(capabilities["limits"] as? [String: Any])
        XCTAssertEqual(limits["maxFramePixels"] as? Int, 3840 * 2160)
        XCTAssertEqual(limits["maxFrameSide"] as? Int, 4096)
        let (id, token) = try session(server)
        let c = try connect(server, id, token)
        c.send(text: #"{"type":"start","ack":true}"#)  // no size announced
        let huge = try Image(width: 7000, height: 7000, color: .black).jpegData(quality: 50)
        c.send(binary: FrameHeader(sequence: 0, captureMicroseconds: 0, format: .jpeg).encoded() + huge)
        let error = next(c, "error")
        XCTAssertEqual(error?["code"] as? String, "frameTooLarge")
        XCTAssertTrue((error?["message"] as? String)?.contains("7000×7000, beyond this session's limit") == true, "\(error ?? [:])")
        XCTAssertEqual(error?["recoverable"] as? Bool, true)
        // A 4K portrait frame is a camera's: accepted.
        let portrait = try Image(width: 2160, height: 3840, color: .black).jpegData(quality: 50)
        c.send(binary: FrameHeader(sequence: 1, captureMicroseconds: 40_000, format: .jpeg).encoded() + portrait)
        XCTAssertEqual((next(c, "ack")?["seq"] as? NSNumber)?.intValue, 1)
    }

    /// Issue 27: the hosted page turned the camera on for a dead link. It can now ask first:
    /// `GET /v1/sessions/{id}/stream` with the session token claims nothing and says whether
    /// the stream would open.
    func testACameraClientCanAskWhetherItsLinkIsStillUsable() throws {
        let server = try server()
        let (id, token) = try session(server)
        let address = try address(server)
        XCTAssertEqual(try ServiceClient.request("GET", "/v1/sessions/\(id)/stream", at: address, bearer: token).status, 200)
        XCTAssertEqual(try ServiceClient.request("GET", "/v1/sessions/\(id)/stream", at: address, bearer: token).status, 200, "asking spends nothing")
        XCTAssertEqual(try ServiceClient.request("GET", "/v1/sessions/\(id)/stream", at: address).status, 401)
        let wrong = (token.first == "0" ? "1" : "0") + token.dropFirst()
        XCTAssertEqual(try ServiceClient.request("GET", "/v1/sessions/\(id)/stream", at: address, bearer: wrong).status, 404)
        XCTAssertEqual(try ServiceClient.request("GET", "/v1/sessions/nosuch/stream", at: address, bearer: token).status, 404)
        _ = try connect(server, id, token)
        XCTAssertEqual(try ServiceClient.request("GET", "/v1/sessions/\(id)/stream", at: address, bearer: token).status, 410)
    }

    /// The reference client in lock-step waited for an ack of a refused frame (the service
    /// answers it with an error and no ack) until the idle timeout ended the session: every frame
    /// of a recording beyond the stream's frame limits now goes, each refused with its error.
    func testALockStepClientGoesOnAfterARefusedFrame() throws {
        let server = try server()
        let dir = try Fixtures.temporaryDirectory(self)
        let clip = dir.appendingPathComponent("wide.mp4").path  // 4200×2100: 8.8 MP, over the 8.3 MP of 4K
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "testsrc=s=4200x2100:r=25", "-frames:v", "6", "-c:v", "libx264", "-preset", "ultrafast",
                             "-pix_fmt", "yuv420p", clip])
        var streamer = RecordingStreamer(address: try address(server))
        streamer.jpeg = true
        let outcome = try streamer.run(try FrameSource(path: clip))
        XCTAssertEqual(outcome.framesSent, 6)
        XCTAssertEqual(outcome.messages.filter { if case let .error(error) = $0 { error.code == .frameTooLarge } else { false } }.count, 6)
        XCTAssertEqual(outcome.verdict?.reason, "cancelled", "the recording ended: the client cancelled")
    }

    func testTokensAreCheckedAndSingleUse() throws {
        let server = try server()
        let (id, token) = try session(server)
        let address = try address(server)
        XCTAssertThrowsError(try WebSocketConnection(address: address, path: "/v1/sessions/\(id)/stream", token: (token.first == "0" ? "1" : "0") + token.dropFirst()))
        XCTAssertThrowsError(try WebSocketConnection(address: address, path: "/v1/sessions/\(id)/stream", token: nil))
        XCTAssertThrowsError(try WebSocketConnection(address: address, path: "/v1/sessions/nosuch/stream", token: token))
        // The right token, in the Authorization header this time.
        let c = try WebSocketConnection(address: address, path: "/v1/sessions/\(id)/stream", token: token, tokenInHeader: true)
        addTeardownBlock { c.close() }
        guard case .text? = c.next(timeout: 10) else { return XCTFail("no greeting") }
        // Single use: a second stream with the same token is refused.
        XCTAssertThrowsError(try WebSocketConnection(address: address, path: "/v1/sessions/\(id)/stream", token: token))
        // The token never in the query string: a token there is not looked at.
        let (id2, token2) = try session(server)
        XCTAssertThrowsError(try WebSocketConnection(address: address, path: "/v1/sessions/\(id2)/stream?token=\(token2)", token: nil))
    }

    /// Issue 27: `--host localhost` printed "listening" and bound nothing (libwebsockets takes
    /// numeric addresses); an address that is not this machine's must fail at start.
    func testAHostNameIsResolvedAndAnAddressNotHereFailsAtStart() throws {
        for name in ["localhost", "::1"] {
            let server = try server { $0.host = name }
            let url = server.url
            XCTAssertTrue(url.hasPrefix("http://127.0.0.1:") || url.hasPrefix("http://[::1]:"), url)
            XCTAssertEqual(try ServiceClient.request("GET", "/healthz", at: try ServiceAddress(url: url)).status, 200, name)
        }
        var configuration = ServiceConfiguration()
        configuration.host = "192.0.2.7"  // TEST-NET-1 (RFC 5737): never an address of this machine; nothing is sent to it
        configuration.port = 0
        configuration.apiToken = Array("an-api-token-of-the-relying-party".utf8)
        let server = try LivenessServer(configuration: configuration, model: try XCTUnwrap(Self.model))
        XCTAssertThrowsError(try server.start()) { error in
            XCTAssertTrue("\(error)".contains("nothing is listening on 192.0.2.7"), "\(error)")
        }
    }

    func testANonLoopbackBindNeedsAnAPITokenAndChecksIt() throws {
        // 127.0.0.2 stands for "another address": only 127.0.0.1, ::1 and localhost are the
        // default loopback bind.
        var configuration = ServiceConfiguration()
        configuration.host = "127.0.0.2"
        configuration.port = 0
        XCTAssertThrowsError(try LivenessServer(configuration: configuration, model: try XCTUnwrap(Self.model))) { error in
            XCTAssertTrue("\(error)".contains("--token-file"), "\(error)")
        }
        let token = "an-api-token-of-the-relying-party"
        let server = try server {
            $0.host = "127.0.0.2"
            $0.apiToken = Array(token.utf8)
        }
        let address = try ServiceAddress(url: "http://127.0.0.2:\(server.port)")
        XCTAssertEqual(try ServiceClient.request("POST", "/v1/sessions", at: address).status, 401)
        XCTAssertEqual(try ServiceClient.request("POST", "/v1/sessions", at: address, bearer: "wrong-token-of-the-same-length!!!").status, 401)
        XCTAssertEqual(try ServiceClient.request("GET", "/metrics", at: address).status, 401)
        XCTAssertEqual(try ServiceClient.request("GET", "/v1/capabilities", at: address).status, 200, "capabilities are public")
        let created = try ServiceClient.request("POST", "/v1/sessions", at: address, bearer: token)
        XCTAssertEqual(created.status, 201)
        let id = try XCTUnwrap(created.json?["id"] as? String)
        XCTAssertEqual(try ServiceClient.request("GET", "/v1/sessions/\(id)", at: address).status, 401, "results need the API token")
        XCTAssertEqual(try ServiceClient.request("GET", "/v1/sessions/\(id)", at: address, bearer: token).status, 202)
    }

    func testTheSessionLimitAnswers503WithRetryAfter() throws {
        let server = try server { $0.limits.maxSessions = 2 }
        _ = try session(server)
        _ = try session(server)
        let third = try ServiceClient.request("POST", "/v1/sessions", at: try address(server))
        XCTAssertEqual(third.status, 503)
        XCTAssertEqual((third.json?["error"] as? [String: Any])?["code"] as? String, "tooManySessions")
    }

    func testATLSSessionWithACertificateMadeHere() throws {
        let dir = try Fixtures.temporaryDirectory(self)
        let cert = dir.appendingPathComponent("cert.pem").path, key = dir.appendingPathComponent("key.pem").path
        let openssl = Process()
        openssl.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        openssl.arguments = ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=127.0.0.1",
                             "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", key, "-out", cert]
        openssl.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try openssl.run()
        openssl.waitUntilExit()
        XCTAssertEqual(openssl.terminationStatus, 0)
        let server = try server {
            $0.tlsCertificatePath = cert
            $0.tlsKeyPath = key
        }
        XCTAssertTrue(server.url.hasPrefix("https://"))
        var streamer = RecordingStreamer(address: try address(server))
        streamer.tls = ClientTLS(caFile: cert)
        let outcome = try streamer.run(try FrameSource(path: try Fixtures.generated("astronaut-still.mp4")))
        XCTAssertEqual(outcome.verdict?.status, .failed)
        XCTAssertNotNil(outcome.report)
        // Without trusting the certificate the client refuses the server.
        XCTAssertThrowsError(try ServiceClient.request("GET", "/healthz", at: try address(server)))
    }

    func testUploadsAreAnalysedAndCapabilitiesSayWhatIsAccepted() throws {
        let server = try server()
        let video = [UInt8](try Data(contentsOf: URL(fileURLWithPath: try Fixtures.generated("astronaut-still.mp4"))))
        let response = try ServiceClient.request("POST", "/v1/analyze", at: try address(server), body: video, contentType: "video/mp4", timeout: 60)
        XCTAssertEqual(response.status, 200, String(decoding: response.body, as: UTF8.self))
        let report = try JSONDecoder().decode(LivenessReport.self, from: Data(response.body))
        XCTAssertEqual(report.verdict.reason, .presentationAttack)  // a still encoded as video: frozen
        XCTAssertEqual(report.presentationAttack?.frozen.status, .frozen)
        XCTAssertEqual(report.input.path, "upload")
        let junk = try ServiceClient.request("POST", "/v1/analyze", at: try address(server), body: Array("not a video".utf8))
        XCTAssertEqual(junk.status, 422)
        // Both uploads are counted by their answer (issue 27: uploads appeared in no metric).
        let metrics = String(decoding: try ServiceClient.request("GET", "/metrics", at: try address(server)).body, as: UTF8.self)
        XCTAssertTrue(metrics.contains("liveness_uploads_total{status=\"200\"} 1\n"), metrics)
        XCTAssertTrue(metrics.contains("liveness_uploads_total{status=\"422\"} 1\n"), metrics)
        let capabilities = try XCTUnwrap(try ServiceClient.request("GET", "/v1/capabilities", at: try address(server)).json)
        XCTAssertEqual(capabilities["actions"] as? [String], ["blink", "turnHead"])
        XCTAssertNotNil((capabilities["limits"] as? [String: Any])?["maxMessageBytes"])
        XCTAssertEqual(((capabilities["formats"] as? [String: Any])?["frames"] as? [String])?.contains("nv12"), true)
    }
}

/// Results written from concurrent threads.
private final class ResultsBox: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: [String]
    init(count: Int) { storage = Array(repeating: "", count: count) }
    func set(_ i: Int, _ value: String) { lock.withLock { storage[i] = value } }
    var values: [String] { lock.withLock { storage } }
}
