import FaceTracking
import Foundation
import LivenessCore
import LivenessEvidence
import LivenessKit
import LivenessClient
import LivenessService
import TestSupport
import XCTest

/// `liveness serve` in prompted mode (docs/prompted-challenge.md, docs/stream-protocol.md):
/// sessions are prompted unless the relying party asks for passive, a camera client cannot turn
/// that off, the prompts reach the client, each live session draws its own, and with a key the
/// signed prompt log lets the recording be judged again offline with the same outcome.
final class PromptedServiceTests: XCTestCase {
    private static var model: LandmarkModel? { ServiceTestSupport.model }

    /// The user-facing instructions, typed here from docs/prompted-challenge.md ("What the user sees").
    private static let promptTexts = [
        "turnLeft": "Turn your head to the left", "turnRight": "Turn your head to the right", "blink": "Blink",
    ]

    private func address(_ server: LivenessServer) throws -> ServiceAddress { try ServiceAddress(url: server.url) }

    /// Creates a session with `body` (the relying party's request); returns (id, token).
    private func create(_ server: LivenessServer, body: String = "") throws -> (id: String, token: String) {
        let response = try ServiceClient.request("POST", "/v1/sessions", at: try address(server), body: Array(body.utf8))
        XCTAssertEqual(response.status, 201, String(decoding: response.body, as: UTF8.self))
        let json = try XCTUnwrap(response.json)
        return (try XCTUnwrap(json["id"] as? String), try XCTUnwrap(json["token"] as? String))
    }

    /// Opens the session's stream, sends `start`, and cancels (unless the start was refused);
    /// returns every message received and the finished report.
    private func startAndCancel(_ server: LivenessServer, _ session: (id: String, token: String),
                                start: String = #"{"type":"start"}"#) throws -> (messages: [[String: Any]], report: LivenessReport) {
        let connection = try WebSocketConnection(address: try address(server), path: "/v1/sessions/\(session.id)/stream", token: session.token)
        defer { connection.close() }
        var messages: [[String: Any]] = []
        func take(_ message: WebSocketConnection.Received?) -> Bool {
            guard case let .text(text)? = message else { return false }
            if let object = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] { messages.append(object) }
            return true
        }
        XCTAssertTrue(take(connection.next(timeout: 30)), "the session message")
        connection.send(text: start)
        connection.send(text: #"{"type":"cancel"}"#)
        while take(connection.next(timeout: 20)) {}
        return (messages, try finishedReport(server, session.id))
    }

    /// The report once the session is finished (polled; a hang guard of 20 s).
    private func finishedReport(_ server: LivenessServer, _ id: String) throws -> LivenessReport {
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            let response = try ServiceClient.request("GET", "/v1/sessions/\(id)", at: try address(server))
            if response.status == 200 { return try JSONDecoder().decode(LivenessReport.self, from: Data(response.body)) }
            Thread.sleep(forTimeInterval: 0.1)
        }
        throw ServiceError("session \(id) did not finish within 20 s")
    }

    /// The report's policy key as the report's JSON writes it.
    private func reportMode(_ report: LivenessReport) throws -> String? {
        let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: report.jsonData()) as? [String: Any])
        return (json["policy"] as? [String: Any])?["challengeMode"] as? String
    }

    // MARK: Who chooses the mode

    func testSessionsArePromptedUnlessTheRelyingPartyAsksForPassive() throws {
        let server = try startService()
        // Created without a policy: prompted.
        let prompted = try startAndCancel(server, try create(server)).report
        XCTAssertEqual(try reportMode(prompted), "prompted")
        XCTAssertEqual(prompted.prompts?.mode, .prompted)
        XCTAssertEqual(prompted.prompts?.source, "random", "a live session's prompts are drawn from the cryptographic source")
        XCTAssertEqual(prompted.prompts?.steps.count, 3)
        // The relying party asks for passive, by name or by the choice's index.
        for body in [#"{"policy": {"challengeMode": "passive"}}"#, #"{"policy": {"challengeMode": 0}}"#] {
            let passive = try startAndCancel(server, try create(server, body: body)).report
            XCTAssertEqual(try reportMode(passive), "passive", body)
            XCTAssertEqual(passive.prompts?.mode, .passive, body)
            XCTAssertEqual(passive.prompts?.steps, [], body)
        }
        // A name that is not a mode, and a string for a key that is a number, are refused.
        for body in [#"{"policy": {"challengeMode": "relaxed"}}"#, #"{"policy": {"turnYawDegrees": "8"}}"#] {
            let refused = try ServiceClient.request("POST", "/v1/sessions", at: try address(server), body: Array(body.utf8))
            XCTAssertEqual(refused.status, 400, body)
            XCTAssertEqual((refused.json?["error"] as? [String: Any])?["code"] as? String, "invalidPolicy", body)
        }
        // A key given twice is refused, not resolved one way here and another in the caller's tools
        // (Python and jq take the last, Foundation took the first).
        for body in [#"{"policy": {"challengeMode": "prompted", "challengeMode": "passive"}}"#,
                     #"{"policy": {"challengeMode": "prompted"}, "policy": {"challengeMode": "passive"}}"#, #"{"seed": 1, "seed": 2}"#] {
            let refused = try ServiceClient.request("POST", "/v1/sessions", at: try address(server), body: Array(body.utf8))
            XCTAssertEqual(refused.status, 400, body)
            XCTAssertEqual((refused.json?["error"] as? [String: Any])?["code"] as? String, "invalidRequest", body)
        }
        // The service says what its sessions default to.
        let capabilities = try XCTUnwrap(try ServiceClient.request("GET", "/v1/capabilities", at: try address(server)).json)
        XCTAssertEqual((capabilities["challenge"] as? [String: Any])?["defaultMode"] as? String, "prompted")
    }

    func testACameraClientCannotTurnAPromptedSessionPassive() throws {
        let server = try startService()
        for start in [#"{"type":"start","policy":{"challengeMode":"passive"}}"#, #"{"type":"start","policy":{"challengeMode":0}}"#] {
            let run = try startAndCancel(server, try create(server), start: start)
            let error = run.messages.first { $0["type"] as? String == "error" }
            XCTAssertEqual(error?["code"] as? String, "forbidden", start)
            XCTAssertEqual(error?["recoverable"] as? Bool, false, start)
            XCTAssertEqual(run.report.verdict.reason, .invalidInput, start)
            XCTAssertTrue(run.report.error?.contains("challengeMode") == true, run.report.error ?? "no error")
            XCTAssertEqual(try reportMode(run.report), "prompted", "the report keeps the session's mode")
        }
        // The other way is a tightening: a passive session may be streamed prompted.
        let tightened = try startAndCancel(server, try create(server, body: #"{"policy": {"challengeMode": "passive"}}"#),
                                           start: #"{"type":"start","policy":{"challengeMode":"prompted"}}"#)
        XCTAssertFalse(tightened.messages.contains { $0["type"] as? String == "error" }, "\(tightened.messages)")
        XCTAssertEqual(tightened.report.verdict.reason, .cancelled)
        XCTAssertEqual(tightened.report.prompts?.mode, .prompted)
        // An unknown name in `start` is a message error, recoverable.
        let (id, token) = try create(server)
        let connection = try WebSocketConnection(address: try address(server), path: "/v1/sessions/\(id)/stream", token: token)
        defer { connection.close() }
        _ = connection.next(timeout: 30)
        connection.send(text: #"{"type":"start","policy":{"challengeMode":"off"}}"#)
        guard case let .text(text)? = connection.next(timeout: 20),
              let error = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] else {
            return XCTFail("no answer to a bad start")
        }
        XCTAssertEqual(error["code"] as? String, "invalidMessage", text)
        XCTAssertEqual(error["recoverable"] as? Bool, true, text)
    }

    func testTheOperatorsPolicyFileNamesTheDefaultMode() throws {
        let directory = try Fixtures.temporaryDirectory(self)
        func policy(_ text: String) throws -> LivenessPolicy {
            let path = directory.appendingPathComponent("policy-\(UUID().uuidString).json").path
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            return try ServiceConfiguration.policy(file: path)
        }
        XCTAssertEqual(try ServiceConfiguration.policy(file: nil).challengeMode, .prompted, "no file")
        XCTAssertEqual(try policy(#"{"scanCapSeconds": 15}"#).challengeMode, .prompted, "a file that does not name the mode")
        XCTAssertEqual(try policy(#"{"scanCapSeconds": 15}"#).scanCapSeconds, 15)
        XCTAssertEqual(try policy(#"{"challengeMode": "passive"}"#).challengeMode, .passive)
        XCTAssertEqual(try policy(#"{"challengeMode": 0}"#).challengeMode, .passive)
        XCTAssertEqual(try policy(#"{"challengeMode": "prompted"}"#).challengeMode, .prompted)
        XCTAssertThrowsError(try policy(#"{"challengeMode": "sometimes"}"#))
        // A service whose operator chose passive: sessions are passive, and a relying party may
        // still ask for prompted.
        let passive = try policy(#"{"challengeMode": "passive"}"#)
        let server = try startService { $0.policy = passive }
        XCTAssertEqual(try startAndCancel(server, try create(server)).report.prompts?.mode, .passive)
        XCTAssertEqual(try startAndCancel(server, try create(server, body: #"{"policy": {"challengeMode": "prompted"}}"#)).report.prompts?.mode,
                       .prompted)
    }

    // MARK: Unpredictable prompts

    func testEachLiveSessionDrawsItsOwnPrompts() throws {
        let server = try startService()
        var plans: [[PromptStep]] = []
        for _ in 0..<20 {
            let report = try startAndCancel(server, try create(server)).report
            XCTAssertEqual(report.prompts?.source, "random")
            let steps = try XCTUnwrap(report.prompts?.steps)
            XCTAssertEqual(steps.count, 3)
            XCTAssertTrue(steps.contains(.blink) && steps.contains { $0 != .blink }, "a plan holds a blink and a turn: \(steps)")
            plans.append(steps)
        }
        // 18 plans of 3 steps, equally likely: 20 equal draws would be a seed, not a draw.
        XCTAssertGreaterThan(Set(plans.map { $0.map(\.rawValue).joined(separator: ",") }).count, 1, "\(plans)")
        // The session's seed (the relying party may give it) does not decide the prompts.
        let seeded = try (0..<6).map { _ in try startAndCancel(server, try create(server, body: #"{"seed": 42}"#)).report }
        XCTAssertTrue(seeded.allSatisfy { $0.seed == 42 && $0.prompts?.source == "random" })
    }

    func testATestSeedDrawsTheSamePlanAndSaysSo() throws {
        let server = try startService { $0.promptSeed = 7 }
        let first = try startAndCancel(server, try create(server)).report
        let second = try startAndCancel(server, try create(server)).report
        XCTAssertEqual(first.prompts?.source, "seed")
        XCTAssertEqual(first.prompts?.steps, second.prompts?.steps)
    }

    // MARK: A recording streamed against prompts

    /// A generated live head that blinks and then turns, unaware of the prompts (the seeded plan
    /// is the test's, not the recording's): what the client is told matches the report, and the
    /// signed prompt log judges the same recording offline — in the library and in
    /// `liveness analyze --challenge` — with the same verdict and the same outcome per prompt.
    func testPromptsReachTheClientAndTheSignedLogJudgesTheRecordingAgain() throws {
        let report = try streamAgainstPrompts(try Fixtures.generated("cases/blink-then-turn/video.mp4"), promptSeed: 7)
        // One blink and one turn cannot answer three prompts.
        XCTAssertEqual(report.prompts?.steps.count, 3)
        XCTAssertEqual(report.verdict.status, .failed)
    }

    /// A generated head that answers a prompt schedule of its own (turn left at 1.5 s, blink at
    /// 3.5 s, turn right at 5.5 s: Tools/generator, case prompted-follows) streamed against a
    /// seeded plan of the same steps whose prompts come before each of those answers (seed 3:
    /// delays 0.07 and 0.22 s), so that answers are followed: the same checks, with outcomes
    /// that are not all failures.
    func testARecordingThatAnswersTheSeededPromptsIsJudgedTheSameOffline() throws {
        let clip = try Fixtures.generated("cases/prompted-follows/video.mp4")
        let report = try streamAgainstPrompts(clip, promptSeed: 3)
        XCTAssertEqual(report.prompts?.steps, [.turnLeft, .blink, .turnRight], "the plan of seed 3")
        XCTAssertTrue(report.prompts?.shown.contains { $0.outcome == .followed } == true, "\(report.prompts?.shown ?? [])")
    }

    /// Streams `clip` to a service that signs and draws its plans from `promptSeed`; checks the
    /// messages against the report, downloads and verifies the prompt log and judges the clip
    /// offline with it (library and command). Returns the streamed session's report.
    private func streamAgainstPrompts(_ clip: String, promptSeed: UInt64) throws -> LivenessReport {
        let key = try SigningKey.generate()
        let server = try startService {
            $0.signingKey = key
            $0.promptSeed = promptSeed
        }
        // Before a verdict the log is not there yet.
        let waiting = try create(server)
        XCTAssertEqual(try ServiceClient.request("GET", "/v1/sessions/\(waiting.id)/prompts.jsonl", at: try address(server)).status, 202)

        let outcome = try RecordingStreamer(address: try address(server)).run(try FrameSource(path: clip))
        let report = try JSONDecoder().decode(LivenessReport.self, from: Data(try XCTUnwrap(outcome.report)))
        let prompts = try XCTUnwrap(report.prompts)
        XCTAssertEqual(prompts.mode, .prompted)
        XCTAssertEqual(prompts.source, "seed")

        // The client's messages: one `prompt` per prompt shown, its text the step's instruction.
        let shownMessages = outcome.messages.compactMap { if case let .prompt(prompt) = $0 { prompt } else { nil } }
        XCTAssertFalse(shownMessages.isEmpty, "the face is ready within 2 s of the autoshot: a prompt is shown")
        XCTAssertEqual(shownMessages.count, prompts.shown.count)
        for (message, shown) in zip(shownMessages, prompts.shown) {
            XCTAssertEqual(message.index, shown.index)
            XCTAssertEqual(message.step, shown.step)
            XCTAssertEqual(message.text, Self.promptTexts[shown.step.rawValue])
            XCTAssertEqual(message.total, prompts.steps.count)
            XCTAssertEqual(message.seconds, shown.seconds)
            XCTAssertEqual(message.seq, Int64(shown.frame), "frames are sent in order from sequence 0")
        }
        // The HUD names the open prompt and shows its text.
        var open: PromptStep?
        var promptHUDs = 0
        for message in outcome.messages {
            switch message {
            case let .prompt(prompt): open = prompt.step
            case .promptAnswered: open = nil
            case let .hud(hud) where hud.state == "prompt":
                promptHUDs += 1
                XCTAssertEqual(hud.prompt, open, "\(message)")
                XCTAssertEqual(hud.text, open.flatMap { Self.promptTexts[$0.rawValue] })
            default: break
            }
        }
        XCTAssertGreaterThanOrEqual(promptHUDs, shownMessages.count, "each prompt is on the HUD")
        // Every answer the client was told, as the report has it (`anticipated` is told as notFollowed).
        let answered = outcome.messages.compactMap { if case let .promptAnswered(answer) = $0 { answer } else { nil } }
        let decided = prompts.shown.filter { $0.outcome != .pending }
        XCTAssertEqual(answered.map(\.index), decided.map(\.index))
        XCTAssertEqual(answered.map(\.outcome), decided.map { $0.outcome == .anticipated ? "notFollowed" : $0.outcome.rawValue })
        let actions = outcome.messages.compactMap { if case let .action(action) = $0 { action } else { nil } }
        XCTAssertEqual(actions.count, prompts.shown.filter { $0.outcome == .followed }.count)
        XCTAssertTrue(actions.allSatisfy { $0.total == prompts.steps.count }, "one action per step: \(actions)")
        XCTAssertEqual(outcome.verdict?.reason, report.verdict.reason?.rawValue)
        print("prompted stream (\(URL(fileURLWithPath: clip).deletingLastPathComponent().lastPathComponent), seed \(promptSeed)): plan \(prompts.steps.map(\.rawValue)), outcomes \(prompts.shown.map(\.outcome.rawValue)), reactions \(prompts.shown.map { $0.reactionSeconds.map { "\($0) s" } ?? "-" }), unprompted turn \(prompts.unpromptedTurn.map { "\($0.seconds) s" } ?? "none"), verdict \(report.verdict.reason?.rawValue ?? "passed")")

        // The signed log: downloaded with the API token, verified with the service's key only.
        let response = try ServiceClient.request("GET", "/v1/sessions/\(outcome.sessionID)/prompts.jsonl", at: try address(server))
        XCTAssertEqual(response.status, 200, String(decoding: response.body, as: UTF8.self))
        XCTAssertEqual(try fetch(server, "/v1/sessions/\(outcome.sessionID)/prompts.jsonl").headers["content-type"], "application/jsonl")
        let log = try PromptLog.parse(response.body, path: "prompts.jsonl", trusted: [key.publicKey])
        XCTAssertEqual(log.session, outcome.sessionID)
        XCTAssertEqual(log.prompts.map(\.step), prompts.steps)
        XCTAssertEqual(log.prompts.compactMap(\.promptMicroseconds).map { Double($0) / 1e6 }, prompts.shown.map(\.seconds))
        XCTAssertThrowsError(try PromptLog.parse(response.body, path: "prompts.jsonl", trusted: [try SigningKey.generate().publicKey]))

        // Offline, in the library: the recording judged against the log's plan.
        var policy = LivenessPolicy()
        policy.challengeMode = .prompted
        let source = try FrameSource(path: clip)
        let session = try AnalysisSession(source: source, model: try XCTUnwrap(Self.model), policy: policy, seed: report.seed,
                                          rotation: VideoRotationEstimator(width: source.width, height: source.height), plan: log.plan)
        let run = try session.run { _ in }
        let offline = LivenessReport(machine: run.machine, input: ReportInput(source: source, framesDecoded: run.framesDecoded),
                                     wallSeconds: run.wallSeconds, stills: (nil, nil), warnings: [])
        try assertSameJudgement(streamed: report, offline: offline, "library")

        // Offline, with the command: `liveness analyze --challenge prompts.jsonl --public-key liveness.pub`.
        let directory = try Fixtures.temporaryDirectory(self)
        let logPath = directory.appendingPathComponent("prompts.jsonl").path
        let keyPath = directory.appendingPathComponent("liveness.pub").path
        try Data(response.body).write(to: URL(fileURLWithPath: logPath))
        try key.publicKey.pem.write(toFile: keyPath, atomically: true, encoding: .utf8)
        let output = directory.appendingPathComponent("out").path
        let command = try Fixtures.runLiveness(["analyze", clip, "--challenge", logPath, "--public-key", keyPath, "--output", output])
        XCTAssertEqual(command.status, offline.verdict.status == .passed ? 0 : 1, command.errors)
        let written = try JSONDecoder().decode(LivenessReport.self, from: Data(contentsOf: URL(fileURLWithPath: output + "/video/report.json")))
        XCTAssertEqual(written.prompts?.source, "log")
        try assertSameJudgement(streamed: report, offline: written, "analyze --challenge")
        return report
    }

    /// The verdict and every prompt's outcome of a streamed session and of its recording judged
    /// offline against the session's prompt log.
    private func assertSameJudgement(streamed: LivenessReport, offline: LivenessReport, _ what: String) throws {
        let s = try XCTUnwrap(streamed.prompts), o = try XCTUnwrap(offline.prompts, what)
        XCTAssertEqual(o.mode, .prompted, what)
        XCTAssertEqual(o.steps, s.steps, what)
        XCTAssertEqual(o.shown.map(\.step), s.shown.map(\.step), what)
        XCTAssertEqual(o.shown.map(\.frame), s.shown.map(\.frame), what)
        XCTAssertEqual(o.shown.map(\.seconds), s.shown.map(\.seconds), what)
        XCTAssertEqual(o.shown.map(\.responseFrame), s.shown.map(\.responseFrame), what)
        XCTAssertEqual(o.unpromptedTurn, s.unpromptedTurn, what)
        // A recording that ends before a verdict is a stream closed first: cancelled, where the
        // file's analysis says inputEnded, and the open prompt stays pending in both.
        if offline.verdict.reason == .inputEnded {
            XCTAssertEqual(streamed.verdict.reason, .cancelled, what)
        } else {
            XCTAssertEqual(o.shown.map(\.outcome), s.shown.map(\.outcome), what)
            XCTAssertEqual(offline.verdict.status, streamed.verdict.status, what)
            XCTAssertEqual(offline.verdict.reason, streamed.verdict.reason, what)
            XCTAssertEqual(offline.verdict.seconds, streamed.verdict.seconds, what)
        }
    }

    // MARK: The prompt log's answers

    func testThePromptLogSaysWhyItIsNotThere() throws {
        // Without a key: 404 naming --sign-key.
        let plain = try startService()
        let unsigned = try startAndCancel(plain, try create(plain))
        XCTAssertEqual(unsigned.report.prompts?.mode, .prompted)
        let noKey = try ServiceClient.request("GET", "/v1/sessions/\(try XCTUnwrap(unsignedID(unsigned.report)))/prompts.jsonl", at: try address(plain))
        XCTAssertEqual(noKey.status, 404)
        XCTAssertTrue(String(decoding: noKey.body, as: UTF8.self).contains("--sign-key"))

        let key = try SigningKey.generate()
        let server = try startService { $0.signingKey = key }
        // A passive session issued no prompts.
        let passive = try create(server, body: #"{"policy": {"challengeMode": "passive"}}"#)
        _ = try startAndCancel(server, passive)
        let none = try ServiceClient.request("GET", "/v1/sessions/\(passive.id)/prompts.jsonl", at: try address(server))
        XCTAssertEqual(none.status, 404)
        XCTAssertEqual((none.json?["error"] as? [String: Any])?["code"] as? String, "notPrompted")
        // Unknown session.
        XCTAssertEqual(try ServiceClient.request("GET", "/v1/sessions/nosuch/prompts.jsonl", at: try address(server)).status, 404)
        // A prompted session cancelled before any prompt: the log names its planned steps, none shown.
        let cancelled = try create(server)
        let report = try startAndCancel(server, cancelled).report
        let response = try ServiceClient.request("GET", "/v1/sessions/\(cancelled.id)/prompts.jsonl", at: try address(server))
        XCTAssertEqual(response.status, 200)
        let log = try PromptLog.parse(response.body, path: "prompts.jsonl", trusted: [key.publicKey])
        XCTAssertEqual(log.prompts.map(\.step), report.prompts?.steps)
        XCTAssertTrue(log.prompts.allSatisfy { $0.promptMicroseconds == nil })
        // With the API token only.
        let guarded = try startService {
            $0.signingKey = key
            $0.host = "127.0.0.2"
            $0.apiToken = Array("an-api-token-of-the-relying-party".utf8)
        }
        let other = try ServiceAddress(url: "http://127.0.0.2:\(guarded.port)")
        XCTAssertEqual(try ServiceClient.request("GET", "/v1/sessions/\(cancelled.id)/prompts.jsonl", at: other).status, 401)
    }

    private func unsignedID(_ report: LivenessReport) -> String? {
        report.input.path.hasPrefix("stream:") ? String(report.input.path.dropFirst("stream:".count)) : nil
    }
}
