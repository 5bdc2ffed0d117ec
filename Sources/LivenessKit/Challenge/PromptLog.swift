import Foundation
import LivenessCore
import LivenessEvidence

/// The prompt log of a prompted session (`liveness-prompt-log/1`, docs/prompted-challenge.md):
/// JSON lines naming every planned step and when its prompt was shown, on the clock of the
/// frames the capture client sent (its video's clock), signed by the service that issued them.
///
/// ```
/// {"format":"liveness-prompt-log/1","session":"3f…","steps":3}
/// {"index":0,"step":"turnLeft","promptMicroseconds":1840000}
/// {"index":1,"step":"blink","promptMicroseconds":4120000}
/// {"index":2,"step":"turnRight","promptMicroseconds":null}
/// {"signature":"<base64 Ed25519>","publicKey":"<base64>"}
/// ```
///
/// * One line per planned step, in order; `promptMicroseconds` is `null` for a step that was
///   never shown (the session ended first).
/// * The last line signs the exact bytes of every line before it, newlines included, with the
///   service's key (`liveness serve --sign-key`). `analyze --challenge` accepts a log only with
///   a valid signature by a key the caller trusts (`--public-key`): a log an attacker wrote to
///   fit a replay does not count.
public struct PromptLog: Sendable, Equatable {
    /// The format identifier.
    public static let format = "liveness-prompt-log/1"
    /// The largest log read, bytes (a log of 20 steps is about 1.3 kB).
    public static let maximumBytes = 64 << 10

    /// The session the prompts were issued to.
    public var session: String
    /// Every planned step with the time its prompt was shown (µs), `nil` when never shown.
    public var prompts: [(step: PromptStep, promptMicroseconds: Int64?)]

    /// Creates a log.
    public init(session: String, prompts: [(step: PromptStep, promptMicroseconds: Int64?)]) {
        self.session = session
        self.prompts = prompts
    }

    /// The log of a session's challenge: every planned step, with the times of those shown.
    public init(session: String, challenge: ChallengeEvidence) {
        self.session = session
        prompts = challenge.steps.enumerated().map { i, step in
            (step, i < challenge.prompts.count ? challenge.prompts[i].promptMicroseconds : nil)
        }
    }

    /// The plan a judge replays: the shown prompts at their times, the others never shown.
    public var plan: ChallengePlan {
        ChallengePlan(loggedSteps: prompts.map { ($0.step, $0.promptMicroseconds) })
    }

    public static func == (a: PromptLog, b: PromptLog) -> Bool {
        a.session == b.session && a.prompts.map(\.step) == b.prompts.map(\.step)
            && a.prompts.map(\.promptMicroseconds) == b.prompts.map(\.promptMicroseconds)
    }

    /// The unsigned lines: the header and one line per step, each ending in a newline.
    public var body: [UInt8] {
        var text = "{\"format\":\"\(Self.format)\",\"session\":\(Self.quoted(session)),\"steps\":\(prompts.count)}\n"
        for (i, p) in prompts.enumerated() {
            let time = p.promptMicroseconds.map(String.init) ?? "null"
            text += "{\"index\":\(i),\"step\":\"\(p.step.rawValue)\",\"promptMicroseconds\":\(time)}\n"
        }
        return Array(text.utf8)
    }

    /// The log signed with `key`: the body and the signature line.
    public func signed(with key: SigningKey) -> [UInt8] {
        let body = body
        let signature = Data(key.signature(of: body)).base64EncodedString()
        return body + Array("{\"signature\":\"\(signature)\",\"publicKey\":\"\(key.publicKey.base64)\"}\n".utf8)
    }

    private static func quoted(_ s: String) -> String {
        let data = (try? JSONEncoder().encode(s)) ?? Data("\"\"".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    // MARK: - Reading

    /// Reads and verifies the log at `path`.
    /// - Parameter trusted: the keys whose signature is accepted.
    /// - Throws: `InputError` naming the file and the problem: unreadable, not a prompt log, a
    ///   malformed line, steps out of order or without a blink and a turn, no signature, a
    ///   signature by a key not trusted, or one that does not match the lines.
    public static func load(path: String, trusted: [PublicKey]) throws(InputError) -> PromptLog {
        let bytes: [UInt8]
        do {
            bytes = try LineReader.readAll(path: path, maximumBytes: maximumBytes, noun: "prompt log")
        } catch {
            throw InputError(path: path, problem: error.problem)
        }
        return try parse(bytes, path: path, trusted: trusted)
    }

    /// Parses and verifies the contents of a prompt log (see `load(path:trusted:)`).
    public static func parse(_ bytes: [UInt8], path: String, trusted: [PublicKey]) throws(InputError) -> PromptLog {
        func fail(_ problem: String) -> InputError { InputError(path: path, problem: problem) }
        guard bytes.count <= maximumBytes else { throw fail("the prompt log holds \(bytes.count) bytes; the limit is \(maximumBytes)") }
        // Lines with their ends; the last line is the signature.
        var lines: [ArraySlice<UInt8>] = []
        var start = 0
        for (i, b) in bytes.enumerated() where b == 0x0A {
            lines.append(bytes[start...i])
            start = i + 1
        }
        if start < bytes.count { lines.append(bytes[start...]) }
        lines.removeAll { $0.allSatisfy { [0x20, 0x09, 0x0A, 0x0D].contains($0) } }
        guard lines.count >= 2 else { throw fail("not a prompt log: it needs a header, a line per step and a signature line (\(format))") }
        func object(_ line: ArraySlice<UInt8>, _ number: Int) throws(InputError) -> [String: JSONValue] {
            let value: JSONValue
            do { value = try JSONValue.parse(Array(line)) } catch { throw fail("line \(number): \(error.message)") }
            guard let members = value.members else { throw fail("line \(number): a prompt log line is a JSON object, not \(value.typeName)") }
            return members
        }
        let header = try object(lines[0], 1)
        guard header["format"] == .string(format) else {
            throw fail("not a prompt log: line 1 must name \"format\":\"\(format)\"")
        }
        guard case let .string(session)? = header["session"] else { throw fail("line 1: \"session\" must be a string") }
        guard let stepsValue = header["steps"]?.double, stepsValue.rounded() == stepsValue, (2...20).contains(stepsValue) else {
            throw fail("line 1: \"steps\" must be a whole number from 2 to 20")
        }
        let steps = Int(stepsValue)
        // The signature first: nothing of an unsigned or foreign log is believed.
        let signatureLine = try? object(lines[lines.count - 1], lines.count)
        guard case let .string(signatureText)? = signatureLine?["signature"],
              let signature = Data(base64Encoded: signatureText), signature.count == 64 else {
            throw fail("line \(lines.count), the last, must be the signature ({\"signature\":\"<base64 Ed25519>\",\"publicKey\":\"<base64>\"}); the log is unsigned or damaged, and an unsigned log is never accepted")
        }
        guard lines.count == steps + 2 else {
            throw fail("the header announces \(steps) steps but the log holds \(max(0, lines.count - 2)) step lines and a signature line")
        }
        guard case let .string(keyText)? = signatureLine?["publicKey"], let key = PublicKey(base64: keyText) else {
            throw fail("the signature line must name its \"publicKey\" (base64 of 32 bytes)")
        }
        guard trusted.contains(key) else {
            throw fail("signed by \(key.fingerprint), which is not a trusted key (give the issuing service's liveness.pub with --public-key)")
        }
        let body = Array(bytes[0..<lines[lines.count - 1].startIndex])
        guard key.isValidSignature(Array(signature), of: body) else {
            throw fail("the signature does not match the log's lines: the log was changed after it was signed")
        }
        var prompts: [(step: PromptStep, promptMicroseconds: Int64?)] = []
        var last: Int64?
        for i in 0..<steps {
            let number = i + 2
            let line = try object(lines[i + 1], number)
            guard line["index"]?.double == Double(i) else { throw fail("line \(number): \"index\" must be \(i)") }
            guard case let .string(name)? = line["step"], let step = PromptStep(rawValue: name) else {
                throw fail("line \(number): \"step\" must be \"turnLeft\", \"turnRight\" or \"blink\"")
            }
            var time: Int64?
            switch line["promptMicroseconds"] {
            case .null?: time = nil
            case let value? where value.double.map({ $0.rounded() == $0 && abs($0) <= Double(LivenessMachine.timestampLimitMicroseconds) }) == true:
                time = Int64(value.double!)
            default: throw fail("line \(number): \"promptMicroseconds\" must be a whole number of microseconds or null")
            }
            if let t = time {
                if prompts.last.map({ $0.promptMicroseconds == nil }) == true {
                    throw fail("line \(number): a step is shown after a step that never was")
                }
                if let l = last, t <= l { throw fail("line \(number): prompt times must increase (\(t) after \(l))") }
                last = t
            }
            prompts.append((step, time))
        }
        let log = PromptLog(session: session, prompts: prompts)
        guard log.plan.holdsBlinkAndTurn else { throw fail("the steps hold no \(prompts.contains { $0.step == .blink } ? "turn" : "blink"); a prompted plan holds both") }
        return log
    }
}
