import FaceTracking
import Foundation
import LivenessCore
import LivenessEvidence
import LivenessKit
import LivenessStore

/// The sessions of `liveness serve` and the worker threads that process their frames. The event
/// loop hands it what arrives (`receive`), workers turn frames into messages with each session's
/// `StreamSession`, and the loop collects the messages to send (`takeOutgoing`), woken by `wake`.
///
/// Backpressure: each session holds at most one waiting frame (the latest wins; the one it
/// replaces is dropped, counted, and reported with a `flow` message), and one frame in work.
/// Memory therefore never grows with the client's send rate. One worker at a time per session;
/// frames are never processed on the event loop.
final class SessionHost: @unchecked Sendable {
    /// What a relying party gets back from `POST /v1/sessions`.
    struct Created {
        var id: String
        var token: String
        var expiresAt: Date
    }

    /// Why a WebSocket upgrade is refused.
    enum Refusal: Error, Equatable {
        case unknownSession, badToken, alreadyStarted
        /// The store could not be asked (docs/store.md): nothing was claimed.
        case storeUnavailable
    }

    /// Why `POST /v1/sessions` created nothing.
    enum CreateFailure: Error {
        /// `maxSessions` are active.
        case full
        /// The store did not take the session.
        case store(StoreError)
    }

    /// A session as the relying party's routes see it, from memory or from the store.
    struct SessionResult {
        var state: String
        /// The report as served (JSON), once finished.
        var report: [UInt8]?
        var reason: String?
        var signature: [UInt8]?
        var prompted: Bool
        var promptLog: [UInt8]?
        /// Its latest webhook delivery (from the store), if it has one.
        var delivery: DeliverySummary? = nil
    }

    let model: LandmarkModel
    let limits: ServiceLimits
    let metrics: ServiceMetrics
    /// Called from a worker when messages are waiting: the server wakes its event loop. (Messages
    /// queued by `receive`, which runs on the loop, are collected by the loop after the call.)
    var wake: @Sendable () -> Void = {}
    /// Called on a worker when a session ends with a report (signing, logging).
    var finished: (@Sendable (LivenessReport) -> Void)?
    /// Called when a result was stored (its webhook, if any, is queued): the dispatcher wakes.
    var stored: (@Sendable () -> Void)?

    private let condition = NSCondition()
    private var sessions: [String: HostedSession] = [:]
    private var ready: [String] = []
    private var outbox: [ConnectionID: [Outgoing]] = [:]
    private var stopping = false
    private var workers: [Thread] = []
    private let clock = ContinuousClock()

    /// Signs every finished session's report, when set (before the event loop starts).
    var signingKey: SigningKey?
    /// Tests only (`ServiceConfiguration.promptSeed`): prompted plans drawn from this seed instead
    /// of the cryptographic generator. Set before the event loop starts.
    var promptSeed: UInt64?
    /// The durable store (`--data-dir`, docs/store.md); nil: sessions and results live in this
    /// process's memory only. Set before the event loop starts.
    var store: SessionStore?
    /// Where each streamed session's trace goes (`ServiceConfiguration.traceDirectory`); nil:
    /// nowhere. Set before the event loop starts.
    var traceDirectory: String?
    /// This process as the store knows it: the owner of the sessions it streams.
    let instance = InstanceRecord.current()

    init(model: LandmarkModel, limits: ServiceLimits, metrics: ServiceMetrics) {
        self.model = model
        self.limits = limits
        self.metrics = metrics
    }

    // MARK: Workers

    /// Starts `count` worker threads.
    func start(workers count: Int) {
        for index in 0..<max(1, count) {
            let thread = Thread { [self] in work() }
            thread.name = "liveness-worker-\(index)"
            thread.stackSize = 8 << 20
            workers.append(thread)
            thread.start()
        }
    }

    /// Ends every streaming session `cancelled` (their clients get the verdict and a close frame);
    /// returns how many there were. For a clean shutdown, before `stop()`.
    @discardableResult
    func cancelAllStreams() -> Int {
        condition.withLock {
            let streaming = sessions.values.filter { $0.state == .streaming }
            for session in streaming {
                session.controls.append(.shutdown)
                schedule(session)
            }
            return streaming.count
        }
    }

    /// Sessions whose stream is open.
    var streamingCount: Int { condition.withLock { sessions.values.filter { $0.state == .streaming }.count } }

    /// Stops the workers (they finish the frame in hand).
    func stop() {
        condition.withLock {
            stopping = true
            condition.broadcast()
        }
    }

    private func work() {
        while true {
            condition.lock()
            while ready.isEmpty && !stopping { condition.wait() }
            if stopping { condition.unlock(); return }
            let id = ready.removeFirst()
            guard let session = sessions[id], !session.busy else { condition.unlock(); continue }
            session.queued = false
            session.busy = true
            let controls = session.controls
            session.controls = []
            let frame = session.frame
            session.frame = nil
            let motion = session.motion
            if frame != nil { session.motion = [] }
            condition.unlock()

            var messages: [Outgoing] = []
            for control in controls { messages += handle(control, session) }
            if let frame, session.stream?.verdict == nil { messages += process(frame, motion: motion, session) }

            condition.lock()
            session.busy = false
            if session.slowSignalled && session.frame == nil && session.state == .streaming {
                session.slowSignalled = false
                messages.insert(.text(ServerMessage.flow(.resume, dropped: session.dropped, seq: session.lastSequence).json()),
                                at: messages.firstIndex(where: { if case .close = $0 { return true } else { return false } }) ?? messages.count)
            }
            if let connection = session.connection, !messages.isEmpty { outbox[connection, default: []] += messages }
            if (!session.controls.isEmpty || session.frame != nil) && !session.queued {
                session.queued = true
                ready.append(id)
                condition.signal()
            }
            condition.unlock()
            if !messages.isEmpty { wake() }
        }
    }

    /// A control on the worker: start the stream session, or end it.
    private func handle(_ control: SessionControl, _ session: HostedSession) -> [Outgoing] {
        // A session already ended by an earlier control of the same batch (a refused `start`
        // followed by `cancel`) keeps the report that ended it, and never starts a stream.
        if condition.withLock({ session.state == .finished }) { return [] }
        switch control {
        case let .start(start):
            do {
                var configuration = StreamSession.Configuration()
                configuration.policy = try ServicePolicy.applying(start.policy, to: session.policy)
                configuration.seed = session.seed
                // The prompts are drawn now, with the policy the stream runs with (a client may
                // ask for more steps or a longer random delay, or turn a passive session prompted).
                configuration.plan = try plan(for: configuration.policy)
                configuration.limits.maxFramesPerSecond = limits.maxFramesPerSecond
                configuration.limits.maxFramePixels = limits.maxStreamFramePixels
                configuration.limits.maxFrameSide = limits.maxStreamFrameSide
                configuration.announcedWidth = start.width
                configuration.announcedHeight = start.height
                session.stream = try StreamSession(model: model, configuration: configuration)
                if let traceDirectory {
                    // A trace that cannot be written does not stop the session (it is for
                    // measurement); the failure is said on standard error.
                    let path = (traceDirectory as NSString).appendingPathComponent("\(session.id).csv")
                    do {
                        session.trace = TraceWriter(sink: try OutputSink(path: path, mode: 0o600), format: .csv)
                    } catch {
                        FileHandle.standardError.write(Data("liveness serve: session \(session.id): no trace: \(error)\n".utf8))
                    }
                }
                return []
            } catch {
                metrics.error(error.code.rawValue)
                return [.text(ServerMessage.error(error, seq: session.lastSequence).json())] + end(session, .invalidInput, why: error.message)
            }
        case .cancel:
            return end(session, .cancelled, why: "the client cancelled the session")
        case .shutdown:
            let error = StreamError(.sessionEnded, "the service is shutting down", recoverable: false)
            metrics.error(error.code.rawValue)
            return [.text(ServerMessage.error(error, seq: session.lastSequence).json())]
                + end(session, .cancelled, why: "the service shut down")
        case .erased:
            let error = StreamError(.sessionEnded, "the relying party erased this session", recoverable: false)
            metrics.error(error.code.rawValue)
            return [.text(ServerMessage.error(error, seq: session.lastSequence).json())]
                + end(session, .cancelled, why: "the relying party erased the session")
        case .disconnected:
            return end(session, .cancelled, why: "the client disconnected")
        case let .timeout(why):
            let error = StreamError(.limitReached, why, recoverable: false)
            metrics.error(error.code.rawValue)
            let reason: FailureReason = why.contains("idle") ? .cancelled : .timeout
            return [.text(ServerMessage.error(error, seq: session.lastSequence).json())] + end(session, reason, why: why)
        case let .refuse(error):
            metrics.error(error.code.rawValue)
            return [.text(ServerMessage.error(error, seq: session.lastSequence).json())] + end(session, .invalidInput, why: error.message)
        }
    }

    /// Pushes a frame through the session's `StreamSession`; returns the messages it causes.
    private func process(_ frame: PendingFrame, motion: [MotionSample], _ session: HostedSession) -> [Outgoing] {
        guard let stream = session.stream else { return [] }
        let seq = Int64(frame.header.sequence)
        let started = clock.now
        var result: Result<StreamSession.Update, StreamError>!
        frame.bytes.withUnsafeBytes { raw in
            result = Result { () throws(StreamError) -> StreamSession.Update in
                let content: StreamFrame.Content
                if let format = frame.header.format.pixelFormat {
                    content = .pixels(raw, format: format, width: frame.header.width, height: frame.header.height,
                                      bytesPerRow: frame.header.effectiveBytesPerRow)
                } else {
                    content = .encoded(raw)
                }
                return try stream.push(StreamFrame(content: content, timestampMicroseconds: frame.header.captureMicroseconds,
                                                   rotationDegrees: frame.header.rotationDegrees, motion: motion))
            }
        }
        let update: StreamSession.Update
        switch result! {
        case let .success(value): update = value
        case let .failure(error):
            metrics.error(error.code.rawValue)
            var out: [Outgoing] = [.text(ServerMessage.error(error, seq: session.lastSequence).json())]
            if !error.isRecoverable { out += end(session, .invalidInput, why: error.message) }
            return out
        }
        metrics.frameProcessed(seconds: (clock.now - started).inSeconds)
        if let record = update.record { session.trace?.write(record) }
        condition.withLock { session.lastSequence = seq }
        let credited = update.events.filter { if case .actionCredited = $0 { return true } else { return false } }.count
        let doneBefore = stream.machine.evidence.actions.count - credited
        var out = ServerMessage.messages(for: update.events, seq: seq, total: Self.actionsTotal(stream.machine), doneBefore: doneBefore)
            .map { Outgoing.text($0.json()) }
        if session.acknowledge { out.append(.text(ServerMessage.ack(seq: seq).json())) }
        if stream.verdict != nil { out += finalize(session, stream) }
        return out
    }

    /// Ends a session without a verdict from frames (cancelled, timeout, invalid input); `why`
    /// goes into the report of a session that ended before its stream started.
    private func end(_ session: HostedSession, _ reason: FailureReason, why: String) -> [Outgoing] {
        guard let stream = session.stream else {
            // Never started (no `start`, or a `start` refused: a weaker policy, an unknown key):
            // nothing was judged, but the relying party still gets a report that says why. A
            // prompted session's plan is drawn as a started one's would be (none was shown).
            var machine = LivenessMachine(policy: session.policy, seed: session.seed, plan: try? plan(for: session.policy))
            _ = machine.finish(reason)
            let report = LivenessReport(machine: machine, input: ReportInput(path: "stream:\(session.id)", kind: .stream),
                                        wallSeconds: 0, stills: (nil, nil), warnings: [],
                                        error: "the session ended before its stream started: \(why)")
            return keep(report, challenge: machine.evidence.promptedChallenge, stills: (nil, nil), session)
        }
        guard stream.verdict == nil else { return [] }
        let events = stream.finish(reason)
        let messages = ServerMessage.messages(for: events, seq: session.lastSequence, total: Self.actionsTotal(stream.machine),
                                              doneBefore: stream.machine.evidence.actions.count)
        return messages.map { .text($0.json()) } + finalize(session, stream)
    }

    /// Keeps the report and the stills (released with a pass only), frees the tracker, closes.
    private func finalize(_ session: HostedSession, _ stream: StreamSession) -> [Outgoing] {
        if let trace = session.trace {
            session.trace = nil
            do { try trace.finish() } catch {
                FileHandle.standardError.write(Data("liveness serve: session \(session.id): trace: \(error)\n".utf8))
            }
        }
        let passed = stream.verdict?.status == .passed
        let stills = stream.stills()
        let paths = passed ? ("/v1/sessions/\(session.id)/autoshot.jpg", "/v1/sessions/\(session.id)/snapshot.jpg") : (nil, nil)
        var warnings: [String] = []
        if session.dropped > 0 { warnings.append("\(session.dropped) frames were dropped because the client sent them faster than they were processed") }
        let report = stream.report(name: "stream:\(session.id)", stillPaths: (paths.0, paths.1), warnings: warnings)
        let challenge = stream.machine.evidence.promptedChallenge
        condition.withLock {
            session.stream = nil
            session.frame = nil
        }
        return keep(report, challenge: challenge, stills: passed ? stills : (nil, nil), session)
    }

    /// The actions a session credits in all: one per step of a prompted plan, else the spec's two.
    static func actionsTotal(_ machine: LivenessMachine) -> Int {
        machine.promptedChallenge?.plan.steps.count ?? Action.allCases.count
    }

    /// The prompts of a session judged with `policy`: `nil` when passive; in prompted mode drawn
    /// from libsodium's `randombytes` (`SecureRandomGenerator`), never from the session's seed
    /// (the relying party may choose the seed; an attacker must not be able to know the plan),
    /// or from `promptSeed` in tests.
    func plan(for policy: LivenessPolicy) throws(StreamError) -> ChallengePlan? {
        guard policy.challengeMode == .prompted else { return nil }
        if let promptSeed {
            var generator = SeededGenerator(seed: promptSeed)
            return ChallengePlan.draw(steps: policy.promptSteps, maxDelaySeconds: policy.promptMaxDelaySeconds, source: .seed,
                                      using: &generator)
        }
        var generator: SecureRandomGenerator
        do {
            generator = try SecureRandomGenerator()
        } catch {
            throw StreamError(.internal, "the prompts could not be drawn: \(error)", recoverable: false)
        }
        return ChallengePlan.draw(steps: policy.promptSteps, maxDelaySeconds: policy.promptMaxDelaySeconds, source: .random,
                                  using: &generator)
    }

    /// Keeps a finished session's report (signed when the service signs), its signed prompt log
    /// (prompted, when the service signs) and the stills it releases, for the relying party;
    /// closes the stream.
    private func keep(_ report: LivenessReport, challenge: ChallengeEvidence, stills: (autoshot: [UInt8]?, snapshot: [UInt8]?),
                      _ session: HostedSession) -> [Outgoing] {
        let passed = report.verdict.status == .passed
        var signature: [UInt8]?
        var promptLog: [UInt8]?
        if let signingKey {
            do {
                signature = try report.signatureEnvelope(
                    key: signingKey, autoshot: passed ? stills.autoshot : nil, snapshot: passed ? stills.snapshot : nil,
                    input: .unavailable(path: "stream:\(session.id)", reason: "frames were streamed to the service")).jsonData
            } catch {
                metrics.error("signing")
            }
            // The prompts as issued, on the clock of the frames the client sent: what a capture
            // client that recorded its video needs to have it judged again (analyze --challenge).
            if challenge.mode == .prompted {
                promptLog = PromptLog(session: session.id, challenge: challenge).signed(with: signingKey)
            }
        }
        let json = (try? report.jsonData()).map { [UInt8]($0) } ?? []
        metrics.sessionEnded(status: report.verdict.status.rawValue, reason: report.verdict.reason?.rawValue)
        if condition.withLock({ session.erased }) {
            // Erased while it streamed: nothing of it is kept, anywhere.
            forget(session)
            return [.close(code: 1000, reason: "verdict given")]
        }
        if let store {
            let result = FinishedSession(report: json, status: report.verdict.status.rawValue, reason: report.verdict.reason?.rawValue,
                                         signature: signature, promptLog: promptLog, prompted: challenge.mode == .prompted,
                                         autoshot: stills.autoshot, snapshot: stills.snapshot)
            do {
                let stored = try timed("finish") { () throws(StoreError) in
                    try store.finish(id: session.id, owner: instance.id, result: result, now: Date())
                }
                // Served from the store from now on, by any instance; when the row was erased
                // meanwhile (or ended by another instance that thought this one gone), dropped.
                forget(session)
                if stored {
                    self.stored?()
                    finished?(report)
                }
                return [.close(code: 1000, reason: "verdict given")]
            } catch {
                // Kept in memory instead, for this instance to serve until its retention ends.
            }
        }
        condition.withLock {
            session.report = json
            session.reason = report.verdict.reason
            session.prompted = challenge.mode == .prompted
            session.promptLog = promptLog
            session.autoshot = stills.autoshot
            session.snapshot = stills.snapshot
            session.signature = signature
            session.state = .finished
            session.finishedAt = clock.now
        }
        finished?(report)
        return [.close(code: 1000, reason: "verdict given")]
    }

    /// Drops a finished session from memory (its result is in the store, or erased).
    private func forget(_ session: HostedSession) {
        condition.withLock {
            session.state = .finished
            session.finishedAt = clock.now
            if sessions[session.id] === session { sessions[session.id] = nil }
        }
    }

    /// Runs a store call, timing it into `liveness_store_seconds{op}` and counting its failure.
    private func timed<T>(_ operation: String, _ body: () throws(StoreError) -> T) throws(StoreError) -> T {
        let started = clock.now
        do {
            let value = try body()
            metrics.storeCall(operation, seconds: (clock.now - started).inSeconds)
            return value
        } catch {
            metrics.storeCall(operation, seconds: (clock.now - started).inSeconds, failed: true)
            throw error
        }
    }

    // MARK: Event loop side

    /// Creates a session for the relying party (in the store too, when there is one).
    /// `callbackURL` (validated) receives its result when it finishes (docs/webhooks.md).
    func create(policy: LivenessPolicy, seed: UInt64? = nil, callbackURL: String? = nil) -> Result<Created, CreateFailure> {
        let id = Secrets.hex(Secrets.randomBytes(12))
        let token = Secrets.hex(Secrets.randomBytes(16))
        let hash = SHA256Digest(of: Array(token.utf8)).bytes
        let now = Date()
        let expires = now.addingTimeInterval(limits.startTimeoutSeconds)
        let chosenSeed = seed ?? UInt64.random(in: 0...UInt64.max)
        // Sessions are created on the event loop only: the count cannot change before the insert.
        guard condition.withLock({ sessions.values.filter(\.isActive).count < limits.maxSessions }) else { return .failure(.full) }
        if let store {
            do {
                let record = NewSession(id: id, tokenSHA256: hash, policy: Array((try? JSONEncoder().encode(policy)) ?? Data()),
                                        seed: chosenSeed, createdAt: now, expiresAt: expires, callbackURL: callbackURL)
                try timed("create") { () throws(StoreError) in try store.create(record) }
            } catch {
                return .failure(.store(error))
            }
        }
        condition.withLock {
            sessions[id] = HostedSession(id: id, tokenSHA256: hash, policy: policy, seed: chosenSeed, now: clock.now, expiresAt: expires)
        }
        return .success(Created(id: id, token: token, expiresAt: expires))
    }

    /// Whether the camera client's `token` would open session `id` now, without claiming it
    /// (the hosted page asks before it turns the camera on).
    func peek(id: String, token: [UInt8]) -> Result<Void, Refusal> {
        let hash = SHA256Digest(of: token).bytes
        if let store {
            do {
                return Self.refusal(try timed("peek") { () throws(StoreError) in try store.peek(id: id, tokenSHA256: hash, now: Date()) })
            } catch {
                return .failure(.storeUnavailable)
            }
        }
        return condition.withLock {
            guard let session = sessions[id], session.state != .finished else { return .failure(.unknownSession) }
            guard Secrets.equal(session.tokenSHA256, hash) else { return .failure(.badToken) }
            guard session.state == .created else { return .failure(.alreadyStarted) }
            return .success(())
        }
    }

    /// Checks a camera client's token for session `id` and claims the session (single use). With
    /// a store, the store's one conditional update decides, whichever instance created the session
    /// (and whether this process was restarted since): a session this process does not hold yet is
    /// taken from the store's record.
    func claim(id: String, token: [UInt8]) -> Result<Void, Refusal> {
        let hash = SHA256Digest(of: token).bytes
        if let store {
            let outcome: ClaimOutcome
            do {
                outcome = try timed("claim") { () throws(StoreError) in
                    try store.claim(id: id, tokenSHA256: hash, owner: instance.id, now: Date())
                }
            } catch {
                return .failure(.storeUnavailable)
            }
            guard case let .claimed(record) = outcome else { return Self.refusal(outcome) }
            guard let policy = try? JSONDecoder().decode(LivenessPolicy.self, from: Data(record.policy)) else {
                metrics.error("store")
                return .failure(.unknownSession)
            }
            return condition.withLock {
                let session = sessions[id] ?? HostedSession(id: id, tokenSHA256: hash, policy: policy, seed: record.seed, now: clock.now,
                                                            expiresAt: record.expiresAt)
                sessions[id] = session
                session.state = .streaming
                session.lastMessageAt = clock.now
                session.streamOpenedAt = clock.now
                return .success(())
            }
        }
        return condition.withLock {
            guard let session = sessions[id], session.state != .finished else { return .failure(.unknownSession) }
            guard Secrets.equal(session.tokenSHA256, hash) else { return .failure(.badToken) }
            guard session.state == .created else { return .failure(.alreadyStarted) }
            session.state = .streaming
            session.lastMessageAt = clock.now
            session.streamOpenedAt = clock.now
            return .success(())
        }
    }

    private static func refusal(_ outcome: ClaimOutcome) -> Result<Void, Refusal> {
        switch outcome {
        case .claimed: return .success(())
        case .unknown: return .failure(.unknownSession)
        case .badToken: return .failure(.badToken)
        case .alreadyStarted: return .failure(.alreadyStarted)
        }
    }

    /// Binds an open WebSocket to its claimed session and greets the client.
    func attach(id: String, connection: ConnectionID) {
        condition.withLock {
            guard let session = sessions[id] else { return }
            session.connection = connection
            let hello = ServerMessage.session(id: id, limits: limits,
                                              serverTimeMicroseconds: Int64((clock.now - sessionEpoch).inSeconds * 1e6),
                                              guide: GuideCircle(policy: session.policy))
            outbox[connection, default: []].append(.text(hello.json()))
        }
        wake()
    }

    private let sessionEpoch = ContinuousClock().now

    /// A complete text message from a session's client.
    func receive(text bytes: [UInt8], session id: String) {
        let message: ClientMessage
        do {
            message = try ClientMessage.parse(bytes)
        } catch {
            reply(error, to: id)
            return
        }
        condition.withLock {
            guard let session = sessions[id], session.state == .streaming else { return }
            session.lastMessageAt = clock.now
            switch message {
            case let .start(start):
                if session.started {
                    queueError(StreamError(.invalidMessage, "the stream has already started"), session)
                    return
                }
                session.started = true
                session.acknowledge = start.acknowledge
                session.controls.append(.start(start))
            case let .motion(samples):
                guard session.started else {
                    queueError(StreamError(.invalidMessage, "motion before start: send {\"type\":\"start\"} first"), session)
                    return
                }
                session.motion += samples
                if session.motion.count > 4 * ClientMessage.maxSamples { session.motion.removeFirst(session.motion.count - 4 * ClientMessage.maxSamples) }
            case .cancel:
                session.controls.append(.cancel)
            }
            schedule(session)
        }
    }

    /// A complete binary message (a frame) from a session's client.
    func receive(frame bytes: [UInt8], session id: String) {
        var parsed: Result<FrameHeader, StreamError>!
        bytes.withUnsafeBytes { raw in parsed = Result { () throws(StreamError) in try FrameHeader.parse(raw) } }
        let header: FrameHeader
        switch parsed! {
        case let .success(value): header = value
        case let .failure(error):
            reply(error, to: id)
            return
        }
        var dropped = false
        condition.withLock {
            guard let session = sessions[id], session.state == .streaming else { return }
            session.lastMessageAt = clock.now
            guard session.started else {
                queueError(StreamError(.invalidMessage, "a frame before start: send {\"type\":\"start\"} first"), session)
                return
            }
            session.framesReceived += 1
            if session.framesReceived > limits.maxFramesPerSession {
                if session.framesReceived == limits.maxFramesPerSession + 1 {
                    session.controls.append(.refuse(StreamError(.limitReached, "more than \(limits.maxFramesPerSession) frames in one session", recoverable: false)))
                    schedule(session)
                }
                return
            }
            if session.firstFrameAt == nil { session.firstFrameAt = clock.now }
            if session.frame != nil {
                // The latest frame wins: the waiting one is dropped, counted and reported.
                session.dropped += 1
                dropped = true
                if !session.slowSignalled, let connection = session.connection {
                    session.slowSignalled = true
                    outbox[connection, default: []].append(.text(ServerMessage.flow(.slow, dropped: session.dropped,
                                                                                   seq: session.lastSequence).json()))
                }
            }
            session.frame = PendingFrame(header: header, bytes: Array(bytes[FrameHeader.size...]))
            schedule(session)
        }
        if dropped {
            metrics.frameDropped()
            wake()
        }
    }

    /// The client's connection closed.
    func disconnected(session id: String, connection: ConnectionID) {
        condition.withLock {
            outbox[connection] = nil
            guard let session = sessions[id], session.connection == connection else { return }
            session.connection = nil
            if session.state == .streaming {
                session.controls.append(.disconnected)
                schedule(session)
            }
        }
    }

    /// A message-size violation or similar on the event loop: counted (the loop closes the stream).
    func protocolViolation(_ code: StreamError.Code) { metrics.error(code.rawValue) }

    /// Expires, times out and forgets sessions by the server's clock. Called by the loop regularly.
    func housekeeping() {
        let now = clock.now
        condition.withLock {
            for (id, session) in sessions {
                switch session.state {
                case .created:
                    if (now - session.createdAt).inSeconds > limits.startTimeoutSeconds {
                        sessions[id] = nil
                        metrics.sessionEnded(status: "expired", reason: nil)
                    }
                case .streaming:
                    if (now - session.lastMessageAt).inSeconds > limits.idleTimeoutSeconds && !session.busy && session.frame == nil {
                        session.lastMessageAt = now
                        session.controls.append(.timeout("idle for more than \(NumberFormat.string(limits.idleTimeoutSeconds)) s"))
                        schedule(session)
                    } else if !session.controls.contains(where: { if case .timeout = $0 { return true } else { return false } }) {
                        // Two caps by the server's clock: the policy's time from the first frame, and
                        // the same plus the idle allowance from the moment the stream opened (a
                        // client sending messages but no frame, or `{` every few seconds, would
                        // otherwise hold its slot for ever).
                        let deadline = session.serverDeadline(grace: limits.serverClockGraceSeconds)
                        if let first = session.firstFrameAt, (now - first).inSeconds > deadline {
                            session.controls.append(.timeout("the scan cap passed by the server's clock"))
                            schedule(session)
                        } else if let opened = session.streamOpenedAt, (now - opened).inSeconds > deadline + limits.idleTimeoutSeconds {
                            session.controls.append(.timeout("the stream was open \(NumberFormat.string(deadline + limits.idleTimeoutSeconds)) s without a verdict (server's clock)"))
                            schedule(session)
                        }
                    }
                case .finished:
                    if let at = session.finishedAt, (now - at).inSeconds > limits.resultRetentionSeconds { sessions[id] = nil }
                }
            }
            let finished = sessions.values.filter { $0.state == .finished }.sorted { ($0.finishedAt ?? now) < ($1.finishedAt ?? now) }
            if finished.count > limits.maxRetainedResults {
                for session in finished.prefix(finished.count - limits.maxRetainedResults) { sessions[session.id] = nil }
            }
        }
    }

    /// Takes the messages waiting for each connection.
    func takeOutgoing() -> [ConnectionID: [Outgoing]] {
        condition.withLock {
            let taken = outbox
            outbox = [:]
            return taken
        }
    }

    /// Sessions created or streaming.
    var activeSessions: Int { condition.withLock { sessions.values.filter(\.isActive).count } }

    /// Forgets session `id` if its stream never opened (a demo page that was reloaded or
    /// closed); true when it did.
    func expireIfUnclaimed(_ id: String) -> Bool {
        let expired = condition.withLock { () -> Bool in
            guard let session = sessions[id], session.state == .created else { return false }
            sessions[id] = nil
            metrics.sessionEnded(status: "expired", reason: nil)
            return true
        }
        if expired, let store { _ = try? timed("erase") { () throws(StoreError) in try store.erase(id: id) } }
        return expired
    }

    /// A session's state and result for the relying party: from this process's memory while it
    /// holds the session, else from the store; nil for an unknown, expired or erased session.
    /// - Throws: when the store cannot be read.
    func result(id: String) throws(StoreError) -> SessionResult? {
        let held = condition.withLock { () -> SessionResult? in
            // With a store, a session this process created but does not stream may be streamed or
            // finished by another instance: the store knows.
            guard let s = sessions[id], store == nil || s.state != .created else { return nil }
            return SessionResult(state: s.state.rawValue, report: s.report, reason: s.reason?.rawValue, signature: s.signature,
                                 prompted: s.prompted, promptLog: s.promptLog)
        }
        if let held { return held }
        guard let store else { return nil }
        guard let stored = try timed("read", { () throws(StoreError) in try store.session(id: id) }) else { return nil }
        return SessionResult(state: stored.state.rawValue, report: stored.report, reason: stored.reason, signature: stored.signature,
                             prompted: stored.prompted, promptLog: stored.promptLog, delivery: stored.delivery)
    }

    /// A released still of a finished session (JPEG), from memory or the store (opened).
    func still(id: String, kind: StillKind) throws(StoreError) -> [UInt8]? {
        let held = condition.withLock { () -> (found: Bool, jpeg: [UInt8]?) in
            guard let s = sessions[id], store == nil || s.state != .created else { return (false, nil) }
            return (true, kind == .autoshot ? s.autoshot : s.snapshot)
        }
        if held.found { return held.jpeg }
        guard let store else { return nil }
        return try timed("still") { () throws(StoreError) in try store.still(id: id, kind: kind) }
    }

    /// Erases session `id` on the relying party's request (`DELETE /v1/sessions/{id}`): its
    /// report, stills, signature and prompt log, in memory and in the store. A session this
    /// process streams ends `cancelled` (its client is told) and its result is dropped.
    /// - Returns: true when there was such a session.
    /// - Throws: when the store cannot be written (nothing is claimed erased then).
    func erase(id: String) throws(StoreError) -> Bool {
        var found = condition.withLock { () -> Bool in
            guard let session = sessions[id] else { return false }
            if session.state == .streaming {
                session.erased = true
                session.controls.append(.erased)
                schedule(session)
            } else {
                sessions[id] = nil
            }
            return true
        }
        if let store, try timed("erase", { () throws(StoreError) in try store.erase(id: id) }) != nil { found = true }
        if found { metrics.sessionErased() }
        return found
    }

    // MARK: Store upkeep

    /// The store's upkeep, on the housekeeping thread: this instance's heartbeat, the sessions of
    /// instances that are gone ended `interrupted`, and the sweep of what has expired. Errors are
    /// counted (`liveness_store_errors_total`) and `/healthz` says so; the next run tries again.
    func maintainStore(staleAfterSeconds: Double) {
        guard let store else { return }
        let now = Date()
        var instance = instance
        instance.heartbeatAt = now.timeIntervalSince1970
        _ = try? timed("heartbeat") { () throws(StoreError) in try store.heartbeat(instance, now: now) }
        if let orphans = try? timed("orphans", { () throws(StoreError) in
            try store.orphans(except: instance.id, now: now, staleAfterSeconds: staleAfterSeconds)
        }) {
            for orphan in orphans { interrupt(orphan, store: store) }
        }
        // Sessions created here but claimed by another instance (or erased there) no longer count
        // against this instance's --max-sessions.
        let created = condition.withLock { sessions.values.filter { $0.state == .created }.map(\.id) }
        for id in created {
            let stored: StoredSession?
            do { stored = try timed("read", { () throws(StoreError) in try store.session(id: id) }) } catch { continue }
            guard stored?.state != .created else { continue }
            condition.withLock { if sessions[id]?.state == .created { sessions[id] = nil } }
        }
        if let swept = try? timed("sweep", { () throws(StoreError) in
            try store.sweep(now: now, retentionSeconds: limits.resultRetentionSeconds)
        }) {
            metrics.swept(swept)
        }
    }

    /// Ends a session whose instance died while it streamed: `failed`/`interrupted`, with a
    /// report that says so (signed when this instance signs). The frames went with the process,
    /// so nothing is judged: the report holds no observation of them.
    private func interrupt(_ orphan: StoredSession, store: SessionStore) {
        guard let owner = orphan.owner,
              let policy = try? JSONDecoder().decode(LivenessPolicy.self, from: Data(orphan.policy)) else { return }
        var machine = LivenessMachine(policy: policy, seed: orphan.seed, plan: try? plan(for: policy))
        _ = machine.finish(.interrupted)
        let report = LivenessReport(machine: machine, input: ReportInput(path: "stream:\(orphan.id)", kind: .stream),
                                    wallSeconds: 0, stills: (nil, nil), warnings: [],
                                    error: "the service stopped while this session's stream was open (instance \(owner) ended without a verdict: a crash, a kill or a power loss); the frames went with it and were not judged")
        var signature: [UInt8]?
        if let signingKey {
            signature = try? report.signatureEnvelope(key: signingKey, autoshot: nil, snapshot: nil,
                                                      input: .unavailable(path: "stream:\(orphan.id)", reason: "frames were streamed to the service")).jsonData
        }
        let result = FinishedSession(report: ((try? report.jsonData()).map { [UInt8]($0) }) ?? [], status: report.verdict.status.rawValue,
                                     reason: report.verdict.reason?.rawValue, signature: signature, promptLog: nil,
                                     prompted: policy.challengeMode == .prompted, autoshot: nil, snapshot: nil)
        // Only while it is still the dead instance's: of two instances recovering it, one does.
        if (try? timed("finish", { () throws(StoreError) in try store.finish(id: orphan.id, owner: owner, result: result, now: Date()) })) == true {
            metrics.sessionEnded(status: report.verdict.status.rawValue, reason: report.verdict.reason?.rawValue)
            stored?()
            finished?(report)
        }
    }

    /// Forgets this instance in the store (a clean stop, after its streams ended).
    func leaveStore() {
        guard let store else { return }
        _ = try? timed("heartbeat") { () throws(StoreError) in try store.removeInstance(id: instance.id) }
    }

    // MARK: Helpers (called with the lock held)

    private func schedule(_ session: HostedSession) {
        guard !session.queued && !session.busy else { return }
        session.queued = true
        ready.append(session.id)
        condition.signal()
    }

    private func queueError(_ error: StreamError, _ session: HostedSession) {
        metrics.error(error.code.rawValue)
        guard let connection = session.connection else { return }
        outbox[connection, default: []].append(.text(ServerMessage.error(error, seq: session.lastSequence).json()))
    }

    private func reply(_ error: StreamError, to id: String) {
        condition.withLock {
            guard let session = sessions[id] else { return }
            session.lastMessageAt = clock.now
            queueError(error, session)
        }
    }
}
