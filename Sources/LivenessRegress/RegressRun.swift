import LivenessKit
import FaceTracking
import Foundation
import LivenessCore
import LivenessEvidence

/// What one analysis of a recording gave, with the per-frame signals the suite measures.
/// The video is read to its end (`stopAtVerdict: false`): the verdict and evidence are the
/// machine's, which ignores frames after its verdict, so they equal those of `liveness analyze`.
public struct RecordingRun: Sendable {
    public struct Frame: Sendable {
        public var seconds: Double
        public var face: Bool
        public var faces: Int
        /// Raw (unfiltered) head yaw against the camera's axes, degrees.
        public var yawDegrees: Double?
        /// Raw head yaw against the line of sight, degrees.
        public var lineOfSightYawDegrees: Double?
        /// Mean eye closure as the blink rule uses it (nil during warm-up or without a face).
        public var closureMean: Double?
        /// Whether a blink episode is open after the frame (`BlinkEpisode`, as the machine
        /// follows it: closure, eye edges and reopening).
        public var eyesClosed: Bool
        public var rotationDegreesPerSecond: Double?
    }
    public var verdict: Verdict
    public var evidence: Evidence
    public var frames: [Frame]

    public func action(_ action: Action) -> ActionEvidence? { evidence.actions.first { $0.action == action } }

    /// Analyses `path` with the default policy and seed 1; the rotation comes from `motion`
    /// (a sidecar) when given, else is estimated from the video unless `estimateFromVideo` is
    /// false (then every frame's rotation is unknown). `plan`: the prompts of a prompted
    /// session (`policy.challengeMode` prompted), e.g. a prompt log's.
    public static func analyse(path: String, motion: String?, model: LandmarkModel,
                               policy: LivenessPolicy = LivenessPolicy(), estimateFromVideo: Bool = true,
                               plan: ChallengePlan? = nil) throws -> RecordingRun {
        let source = try FrameSource(path: path)
        let rotation = try RotationChoice.provider(motionPath: motion, estimateFromVideo: estimateFromVideo, source: source)
        let session = try AnalysisSession(source: source, model: model, policy: policy, seed: 1,
                                          stopAtVerdict: false, rotation: rotation, plan: plan)
        var frames: [Frame] = []
        // The machine stops judging at its verdict; blink measurement wants the whole clip, so
        // the same blink rule (`BlinkSignals`) also runs here on every tracked frame.
        var blink = BlinkSignals(policy: policy)
        let outcome = try session.run { step in
            let r = step.record
            let t = step.observation.timestampMicroseconds
            var closure: Double?
            if let face = step.observation.face {
                let reading = blink.read(face, timestampMicroseconds: t)
                closure = reading.closureMean
                _ = blink.step(reading, face: face, timestampMicroseconds: t, credited: true)
            } else {
                blink.reset()
            }
            frames.append(Frame(seconds: r.seconds, face: r.face, faces: r.faces, yawDegrees: r.yawDegrees,
                                lineOfSightYawDegrees: r.lineOfSightYawDegrees,
                                closureMean: closure, eyesClosed: blink.episodeOpen,
                                rotationDegreesPerSecond: r.deviceRotationDegreesPerSecond))
        }
        let verdict = outcome.machine.verdict ?? Verdict(status: .failed, reason: .inputEnded, timestampMicroseconds: 0, frameIndex: nil)
        return RecordingRun(verdict: verdict, evidence: outcome.machine.evidence, frames: frames)
    }
}

/// A generated case's prompt log (prompts.jsonl: the generator writes the unsigned body, as a
/// capture client's log before its service signs it), signed here with a fresh key and read back
/// through `PromptLog.parse` trusting only that key: the path `analyze --challenge` takes.
public enum GeneratedPromptLog {
    /// The signed log and the key that signed it.
    public struct Signed: Sendable {
        public var log: PromptLog
        public var bytes: [UInt8]
        public var key: PublicKey
    }

    /// Signs the unsigned log at `path` with an ephemeral key (the signature line exactly as
    /// `PromptLog.signed(with:)` writes it) and verifies it with `PromptLog.parse`.
    /// - Throws: `InputError` when the file is unreadable, when the log does not verify or parse,
    ///   or when it is not byte for byte the body `PromptLog` writes for what it holds.
    public static func sign(path: String) throws -> Signed {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw InputError(path: path, problem: "cannot read the generated prompt log")
        }
        let body = [UInt8](data)
        let key = try SigningKey.generate()
        let signature = Data(key.signature(of: body)).base64EncodedString()
        let signed = body + Array("{\"signature\":\"\(signature)\",\"publicKey\":\"\(key.publicKey.base64)\"}\n".utf8)
        let log = try PromptLog.parse(signed, path: path, trusted: [key.publicKey])
        guard log.signed(with: key) == signed else {
            throw InputError(path: path, problem: "the generated log is not byte for byte what PromptLog writes for its steps:\n"
                             + String(decoding: log.body, as: UTF8.self))
        }
        return Signed(log: log, bytes: signed, key: key.publicKey)
    }
}

/// The result of one generated case with one rotation source.
public struct CaseResult: Sendable {
    public var name: String
    public var source: String
    public var expected: String
    public var got: String
    /// Every way the outcome differs from the expectation (empty: ok).
    public var mismatches: [String]
    /// Measured figures: face found fraction, yaw error (camera-axis yaw against the truth's
    /// `yawCamera`; line-of-sight yaw against its `yaw`), rotation estimate.
    public var faceFraction: Double
    public var yawMeanAbsError: Double?
    public var yawBiasDegrees: Double?
    public var lineOfSightYawMeanAbsError: Double?
    public var lineOfSightYawBiasDegrees: Double?
    public var rotationTruthDegreesPerSecond: Double?
    public var rotationEstimateDegreesPerSecond: Double?
    /// A known engine problem the case shows (from expected.json): its mismatches are listed
    /// as KNOWN and do not fail the suite; every one must also be reported as a finding.
    public var knownIssue: String?
    /// `passive`, or `prompted` for a case judged against its signed prompt log.
    public var challenge = "passive"
    /// Lines the report prints under the case (a prompted case: how it was judged and every
    /// prompt with its answer against the generator's truth).
    public var details: [String] = []
    public var ok: Bool { mismatches.isEmpty || knownIssue != nil }
    /// "ok", "KNOWN" (mismatch explained by a known issue) or "FAIL".
    public var status: String { mismatches.isEmpty ? "ok" : (knownIssue != nil ? "KNOWN" : "FAIL") }
}

enum CaseCheck {
    static func seconds(_ us: Int64) -> Double { Double(us) / 1e6 }
    static func fmt(_ v: Double) -> String { String(format: "%.2f", v) }

    /// One letter per prompt outcome for the report's table (legend under it).
    static let outcomeLetters = ["followed": "F", "wrongDirection": "W", "wrongAction": "A", "anticipated": "E",
                                 "missed": "M", "pending": "."]

    static func summary(verdict: String, reason: String?, blink: Bool?, turn: Bool?, framed: Bool?,
                        prompts: [String]? = nil) -> String {
        var s = verdict + (reason.map { "/\($0)" } ?? "")
        if let prompts { s += " P:" + (prompts.isEmpty ? "-" : prompts.map { outcomeLetters[$0] ?? "?" }.joined()) }
        var acts: [String] = []
        if let blink { acts.append(blink ? "B" : "-b") }
        if let turn { acts.append(turn ? "T" : "-t") }
        if !acts.isEmpty { s += " " + acts.joined() }
        if let framed { s += framed ? " framed" : " fallback" }
        return s
    }

    /// Compares a run with the case's expectation (or `expectation`, a nested one) and truth.
    static func check(_ c: RegressCase, source: String, run: RecordingRun, truth: CaseTruth?,
                      expectation: CaseExpectation? = nil, promptLog: GeneratedPromptLog.Signed? = nil) -> CaseResult {
        let e = expectation ?? c.expectation
        var problems: [String] = []
        let gotVerdict = run.verdict.status.rawValue
        let gotReason = run.verdict.reason?.rawValue
        if gotVerdict != e.verdict || gotReason != e.reason {
            problems.append("verdict \(gotVerdict)/\(gotReason ?? "-"), expected \(e.verdict)/\(e.reason ?? "-")")
        }
        if let parallax = e.parallax, parallax != run.evidence.parallax.status.rawValue {
            let residual = run.evidence.parallax.residual.map { String(format: " (residual %.4f)", $0) } ?? ""
            problems.append("parallax \(run.evidence.parallax.status.rawValue)\(residual), expected \(parallax)")
        }
        if let frozen = e.frozen, frozen != run.evidence.frozen.status.rawValue {
            problems.append("frozen check \(run.evidence.frozen.status.rawValue) (longest unchanged run \(fmt(run.evidence.frozen.longestRunSeconds)) s), expected \(frozen)")
        }
        if let looped = e.looped, looped != run.evidence.looped.status.rawValue {
            problems.append("loop check \(run.evidence.looped.status.rawValue) (longest repeat \(fmt(run.evidence.looped.longestRepeatSeconds)) s), expected \(looped)")
        }
        if let recapture = e.recapture, recapture != run.evidence.recapture.status.rawValue {
            problems.append("recapture check \(run.evidence.recapture.status.rawValue) (window enclosure \(fmt(run.evidence.recapture.windowEnclosure))), expected \(recapture)")
        }
        if let continuity = e.continuity, continuity != run.evidence.continuity.status.rawValue {
            problems.append("continuity check \(run.evidence.continuity.status.rawValue) (largest jump ratio \(fmt(run.evidence.continuity.largestJumpRatio))), expected \(continuity)")
        }
        let vt = seconds(run.verdict.timestampMicroseconds)
        if let from = e.verdictFrom, vt < from { problems.append("verdict at \(fmt(vt)) s, expected from \(fmt(from)) s") }
        if let to = e.verdictTo, vt > to { problems.append("verdict at \(fmt(vt)) s, expected by \(fmt(to)) s") }
        for (name, action, expectation) in [("blink", Action.blink, e.blink), ("turn", Action.turnHead, e.turn)] {
            guard let expectation else { continue }
            let got = run.action(action)
            if expectation.credited != (got != nil) {
                problems.append(got.map { "\(name) credited at \(fmt(seconds($0.timestampMicroseconds))) s (value \(fmt($0.value)))" }
                                ?? "\(name) not credited")
                continue
            }
            guard let got else { continue }
            let t = seconds(got.timestampMicroseconds)
            if let from = expectation.from, t < from - 1e-6 { problems.append("\(name) credited at \(fmt(t)) s, before \(fmt(from)) s") }
            if let to = expectation.to, t > to + 1e-6 { problems.append("\(name) credited at \(fmt(t)) s, after \(fmt(to)) s") }
            if let d = expectation.direction, d != got.direction?.rawValue {
                problems.append("turn to the \(got.direction?.rawValue ?? "?"), expected \(d)")
            }
        }
        let shot = run.evidence.autoshot
        if let a = e.autoshot {
            if let shot {
                let t = seconds(shot.timestampMicroseconds)
                if shot.framed != a.framed { problems.append("autoshot \(shot.framed ? "framed" : "fallback"), expected \(a.framed ? "framed" : "fallback")") }
                if t < a.from - 1e-6 || t > a.to + 1e-6 { problems.append("autoshot at \(fmt(t)) s, expected \(fmt(a.from))–\(fmt(a.to)) s") }
            } else {
                problems.append("no autoshot")
            }
        }
        let challenge = run.evidence.promptedChallenge
        let outcomes = challenge.prompts.map(\.outcome.rawValue)
        if promptLog != nil, challenge.mode != .prompted || challenge.source != ChallengePlan.Source.log.rawValue {
            problems.append("judged \(challenge.mode.rawValue) with plan source \(challenge.source), expected prompted against the log")
        }
        if let expected = e.prompts {
            if promptLog == nil {
                problems.append("prompt outcomes expected but the case has no prompt log (\(c.promptLogPath))")
            } else if outcomes != expected {
                problems.append("prompt outcomes [\(outcomes.joined(separator: ", "))], expected [\(expected.joined(separator: ", "))]")
            }
        }
        if let expected = e.unpromptedTurn {
            let got = challenge.unpromptedTurn?.direction.rawValue ?? "none"
            if got != expected { problems.append("unprompted turn \(got), expected \(expected)") }
        }
        let faceFraction = run.frames.isEmpty ? 0 : Double(run.frames.filter(\.face).count) / Double(run.frames.count)
        if let m = e.faceFoundMin, faceFraction < m { problems.append("face found on \(fmt(faceFraction * 100))% of frames, expected ≥ \(fmt(m * 100))%") }
        if let m = e.faceFoundMax, faceFraction > m { problems.append("face found on \(fmt(faceFraction * 100))% of frames, expected ≤ \(fmt(m * 100))%") }

        var result = CaseResult(name: c.name, source: source,
                                expected: summary(verdict: e.verdict, reason: e.reason, blink: e.blink?.credited, turn: e.turn?.credited,
                                                  framed: e.autoshot?.framed, prompts: e.prompts),
                                got: summary(verdict: gotVerdict, reason: gotReason,
                                             blink: e.blink == nil ? nil : run.action(.blink) != nil,
                                             turn: e.turn == nil ? nil : run.action(.turnHead) != nil,
                                             framed: e.autoshot == nil ? nil : shot?.framed,
                                             prompts: promptLog == nil ? nil : outcomes),
                                mismatches: [], faceFraction: faceFraction, knownIssue: e.knownIssue)
        if let promptLog {
            result.challenge = challenge.mode.rawValue
            result.details = promptDetails(promptLog, challenge: challenge, truth: truth?.prompts)
            result.details.append("  verdict \(gotVerdict)\(gotReason.map { "/\($0)" } ?? "") at \(fmt(seconds(run.verdict.timestampMicroseconds))) s")
        }
        if let truth, truth.frames.count == run.frames.count {
            // Yaw: like with like, each relative to its median over the first 0.5 s.
            let camera = yawError(run.frames.map(\.yawDegrees), truth.frames.map { $0.yawCamera ?? $0.yaw }, run: run, truth: truth)
            let sight = yawError(run.frames.map(\.lineOfSightYawDegrees), truth.frames.map(\.yaw), run: run, truth: truth)
            (result.yawMeanAbsError, result.yawBiasDegrees) = (camera?.meanAbs, camera?.bias)
            (result.lineOfSightYawMeanAbsError, result.lineOfSightYawBiasDegrees) = (sight?.meanAbs, sight?.bias)
            if let m = e.yawMaxMeanAbsErrorDegrees {
                for (name, err) in [("camera-axis yaw", camera?.meanAbs), ("line-of-sight yaw", sight?.meanAbs)] {
                    if let err {
                        if err > m { problems.append("\(name) mean abs error \(fmt(err))°, expected ≤ \(fmt(m))°") }
                    } else { problems.append("no \(name) measured") }
                }
            }
            // Rotation: mean estimate over the frames where the camera turns, against the mean truth
            // (not checked when the case runs without a rotation source).
            let moving = zip(run.frames, truth.frames).filter { $0.1.cameraDegPerSec > 1 }
            if !moving.isEmpty {
                let truthMean = moving.map(\.1.cameraDegPerSec).reduce(0, +) / Double(moving.count)
                let estimates = moving.compactMap(\.0.rotationDegreesPerSecond)
                result.rotationTruthDegreesPerSecond = truthMean
                if !estimates.isEmpty { result.rotationEstimateDegreesPerSecond = estimates.reduce(0, +) / Double(estimates.count) }
                if let tol = e.rotationTolerance, source != "none" {
                    if let est = result.rotationEstimateDegreesPerSecond {
                        let allowed = max(tol.relative * truthMean, tol.absoluteDegreesPerSecond)
                        if abs(est - truthMean) > allowed {
                            problems.append("rotation estimate \(fmt(est)) °/s, truth \(fmt(truthMean)) °/s (allowed ±\(fmt(allowed)))")
                        }
                    } else { problems.append("no rotation estimate while the camera turned") }
                }
            }
        } else if e.yawMaxMeanAbsErrorDegrees != nil || e.rotationTolerance != nil {
            problems.append("truth.json missing or its frame count differs from the video's")
        }
        result.mismatches = problems
        return result
    }

    /// How a prompted case was judged: the log, then every planned step with its outcome, the
    /// engine's response and reaction, and the generator's truth of the answer.
    static func promptDetails(_ signed: GeneratedPromptLog.Signed, challenge: ChallengeEvidence, truth: PromptsTruth?) -> [String] {
        var lines = ["judged \(challenge.mode.rawValue) (plan source \(challenge.source)): prompt log of \(signed.log.prompts.count) steps, "
                     + "signed here by \(signed.key.fingerprint) and verified by PromptLog.parse"]
        for (i, step) in signed.log.prompts.enumerated() {
            var line = "  \(i) \(step.step.rawValue)"
            guard let logged = step.promptMicroseconds else {
                lines.append(line + ": never shown (logged null)")
                continue
            }
            line += " prompted at \(fmt(seconds(logged))) s: "
            if let record = challenge.prompts.first(where: { $0.index == i }) {
                line += record.outcome.rawValue
                if let began = record.responseMicroseconds, let reaction = record.reactionSeconds {
                    line += ", began \(fmt(seconds(began))) s (reaction \(fmt(reaction)) s)"
                }
            } else {
                line += "not reached"
            }
            if let answer = truth?.answers.first(where: { $0.index == i }) {
                if answer.did == "none" {
                    line += "; truth: no answer"
                } else {
                    line += "; truth: \(answer.did) from \(answer.start.map(fmt) ?? "?") s"
                    if let onset = answer.onset, let r = answer.onsetReaction { line += ", onset \(fmt(onset)) s (reaction \(fmt(r)) s)" }
                    if let closed = answer.closed { line += ", shut \(fmt(closed)) s" }
                }
            } else if truth?.follow == false {
                line += "; truth: the head follows its own recipe"
            }
            lines.append(line)
        }
        if let turn = challenge.unpromptedTurn {
            lines.append("  unprompted turn to the \(turn.direction.rawValue) credited at \(fmt(seconds(turn.timestampMicroseconds))) s (no prompt open)")
        }
        return lines
    }

    /// Mean |error| and mean error in degrees of a measured yaw series against its truth, each
    /// taken relative to its median over the first 0.5 s; nil when nothing was measured.
    static func yawError(_ measured: [Double?], _ truth: [Double], run: RecordingRun, truth t: CaseTruth)
        -> (meanAbs: Double, bias: Double)? {
        let early = zip(run.frames, measured).filter { $0.0.seconds < 0.5 }.compactMap(\.1).sorted()
        guard !early.isEmpty else { return nil }
        let base = early[early.count / 2]
        let earlyTruth = zip(t.frames, truth).filter { $0.0.t < 0.5 }.map(\.1).sorted()
        let t0 = earlyTruth.isEmpty ? 0 : earlyTruth[earlyTruth.count / 2]
        let errors = zip(measured, truth).compactMap { m, y in m.map { ($0 - base) - (y - t0) } }
        guard !errors.isEmpty else { return nil }
        return (errors.map(abs).reduce(0, +) / Double(errors.count), errors.reduce(0, +) / Double(errors.count))
    }
}
