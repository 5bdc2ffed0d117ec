import FaceTracking
import Foundation
import LivenessCore
import LivenessEvidence
import LivenessKit

/// `POST /v1/analyze`: videos uploaded to the service, analysed one at a time on a thread of
/// their own (so that an upload never delays the real-time streams' workers), answered with the
/// report — or, at `POST /v1/analyze/signed`, with its `report.sig` (the report inside, signed
/// with the upload's SHA-256). At most a few are queued; more are refused with 503.
final class UploadAnalysis: @unchecked Sendable {
    private let model: LandmarkModel
    private let policy: LivenessPolicy
    private let condition = NSCondition()
    private let signingKey: SigningKey?
    private var queue: [(id: UInt64, path: String, signed: Bool)] = []
    private var stopping = false
    private var done: (@Sendable (UInt64, HTTPResponse) -> Void)?
    /// Uploads waiting at most.
    let maxQueued = 4

    init(model: LandmarkModel, policy: LivenessPolicy, limits: ServiceLimits, signingKey: SigningKey? = nil) {
        self.model = model
        self.policy = policy
        self.signingKey = signingKey
    }

    func start(_ done: @escaping @Sendable (UInt64, HTTPResponse) -> Void) {
        self.done = done
        let thread = Thread { [self] in run() }
        thread.name = "liveness-uploads"
        thread.stackSize = 8 << 20
        thread.start()
    }

    func stop() {
        condition.withLock {
            stopping = true
            condition.broadcast()
        }
    }

    /// Queues an upload; false when the queue is full.
    func submit(id: UInt64, path: String, signed: Bool = false) -> Bool {
        condition.withLock {
            guard queue.count < maxQueued else { return false }
            queue.append((id, path, signed))
            condition.signal()
            return true
        }
    }

    private func run() {
        while true {
            condition.lock()
            while queue.isEmpty && !stopping { condition.wait() }
            if stopping { condition.unlock(); return }
            let job = queue.removeFirst()
            condition.unlock()
            let response = analyse(job.path, signed: job.signed)
            try? FileManager.default.removeItem(atPath: (job.path as NSString).deletingLastPathComponent)
            done?(job.id, response)
        }
    }

    /// The report of one uploaded video (no stills are kept: the relying party has the video);
    /// with `signed`, its `report.sig` instead (input: `upload`, with the upload's SHA-256).
    func analyse(_ path: String, signed: Bool = false) -> HTTPResponse {
        do {
            let source = try FrameSource(path: path)
            let rotation = try RotationChoice.provider(motionPath: nil, estimateFromVideo: true, source: source)
            let session = try AnalysisSession(source: source, model: model, policy: policy, seed: UInt64.random(in: 0...UInt64.max),
                                              rotation: rotation)
            let outcome = try session.run { _ in }
            var input = ReportInput(source: source, framesDecoded: outcome.framesDecoded)
            input.path = "upload"
            let report = LivenessReport(machine: outcome.machine, input: input, wallSeconds: outcome.wallSeconds,
                                        stills: (nil, nil), warnings: outcome.warnings.map { $0.replacingOccurrences(of: path, with: "upload") })
            if signed, let signingKey {
                var evidence = InputEvidence.file(path)
                evidence.path = "upload"
                let envelope = try report.signatureEnvelope(key: signingKey, autoshot: nil, snapshot: nil, input: evidence)
                return HTTPResponse(status: 200, contentType: "application/json", body: envelope.jsonData)
            }
            return HTTPResponse(status: 200, contentType: "application/json", body: [UInt8](try report.jsonData()))
        } catch let error as InputError {
            return .error(422, "invalidInput", error.problem)
        } catch {
            return .error(422, "invalidInput", "\(error)")
        }
    }
}
