import Foundation
import LivenessCore

extension LivenessReport {
    /// Builds the report of a finished (or unfinished) session.
    ///
    /// The machine's timestamps are taken as microseconds from the first frame, which is how every
    /// front end of this package feeds it (`FaceObserver` and the trace readers make them
    /// relative). Measured values are rounded to `NumberFormat.decimals` places.
    ///
    /// - Parameters:
    ///   - machine: the session; its verdict, evidence, policy and seed are reported. Without a
    ///     verdict the report says `failed`/`inputEnded` at the last frame seen, as `finish` would.
    ///   - input: what was judged.
    ///   - wallSeconds: wall-clock seconds the analysis took.
    ///   - stills: where the autoshot and snapshot JPEGs were written, `nil` when not written.
    ///   - warnings: problems worth reporting, one sentence each.
    ///   - ignoredAfterVerdict: frames the front end read after the verdict without feeding them to
    ///     the machine (replay); added to the machine's own count.
    ///   - error: the problem that made the input unusable (with an `invalidInput` verdict).
    public init(machine: LivenessMachine, input: ReportInput, wallSeconds: Double,
                stills: (autoshot: String?, snapshot: String?), warnings: [String],
                ignoredAfterVerdict: Int = 0, error: String? = nil) {
        var m = machine
        if m.verdict == nil { _ = m.finish(.inputEnded) }
        let verdict = m.verdict!
        let e = m.evidence
        let q = NumberFormat.quantized
        func seconds(_ micros: Int64) -> Double { Double(micros) / 1e6 }

        schema = Self.schemaIdentifier
        engine = Engine(name: "liveness", version: LivenessEngine.version)
        self.input = input
        policy = e.policy
        seed = e.seed
        challenge = e.challenge
        self.verdict = VerdictReport(status: verdict.status, reason: verdict.reason,
                                     seconds: seconds(verdict.timestampMicroseconds))
        let blink = e.actions.first { $0.action == .blink }
        let turn = e.actions.first { $0.action == .turnHead }
        actions = Actions(
            blink: Blink(credited: blink != nil, frame: blink?.frameIndex,
                         seconds: blink.map { seconds($0.timestampMicroseconds) }, value: blink.map { q($0.value) }),
            turnHead: Turn(credited: turn != nil, frame: turn?.frameIndex,
                           seconds: turn.map { seconds($0.timestampMicroseconds) }, value: turn.map { q($0.value) },
                           direction: turn?.direction))
        func still(_ s: StillCapture?, path: String?, framed: Bool?) -> Still? {
            guard let s else { return nil }
            let box = s.box.map { FaceBox(x: q($0.x), y: q($0.y), width: q($0.width), height: q($0.height)) }
            return Still(frame: s.frameIndex, seconds: seconds(s.timestampMicroseconds), path: path, box: box, framed: framed)
        }
        autoshot = still(e.autoshot, path: stills.autoshot, framed: e.autoshot?.framed)
        snapshot = still(e.snapshot, path: stills.snapshot, framed: nil)
        frames = FrameCounts(read: e.framesRead, tracked: e.framesTracked, credited: e.framesCredited,
                             rotating: e.framesRotating, rotationUnknown: e.framesRotationUnknown,
                             ignoredAfterVerdict: e.framesIgnoredAfterVerdict + ignoredAfterVerdict)
        timing = Timing(wallSeconds: q(wallSeconds),
                        framesPerSecond: wallSeconds > 0 ? q(Double(e.framesRead) / wallSeconds) : nil)
        self.warnings = warnings
        self.error = error
        var parallax = e.parallax
        parallax.residual = parallax.residual.map(q)
        var frozen = e.frozen
        frozen.longestRunSeconds = q(frozen.longestRunSeconds)
        var looped = e.looped
        looped.longestRepeatSeconds = q(looped.longestRepeatSeconds)
        looped.lagSeconds = looped.lagSeconds.map(q)
        var recapture = e.recapture
        recapture.windowEnclosure = q(recapture.windowEnclosure)
        var continuity = e.continuity
        continuity.largestJumpRatio = q(continuity.largestJumpRatio)
        presentationAttack = PresentationAttack(parallax: parallax, frozen: frozen, looped: looped, recapture: recapture,
                                                continuity: continuity)
        prompts = PromptsReport(e.promptedChallenge)
    }

    /// The report as pretty-printed JSON with sorted keys and unescaped slashes, ending in a newline.
    public func jsonData() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        var data = try encoder.encode(self)
        data.append(0x0A)
        return data
    }

    /// The report as pretty-printed JSON text (see `jsonData()`).
    public func jsonString() throws -> String {
        String(decoding: try jsonData(), as: UTF8.self)
    }
}
