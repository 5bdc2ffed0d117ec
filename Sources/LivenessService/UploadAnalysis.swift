import FaceTracking
import Foundation
import LivenessCore
import LivenessKit

/// `POST /v1/analyze`: videos uploaded to the service, analysed one at a time on a thread of
/// their own (so that an upload never delays the real-time streams' workers), answered with the
/// report. At most a few are queued; more are refused with 503.
final class UploadAnalysis: @unchecked Sendable {
    private let model: LandmarkModel
    private let policy: LivenessPolicy
    private let condition = NSCondition()
    private var queue: [(id: UInt64, path: String)] = []
    private var stopping = false
    private var done: (@Sendable (UInt64, HTTPResponse) -> Void)?
    /// Uploads waiting at most.
    let maxQueued = 4

    init(model: LandmarkModel, policy: LivenessPolicy, limits: ServiceLimits) {
        self.model = model
        self.policy = policy
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
    func submit(id: UInt64, path: String) -> Bool {
        condition.withLock {
            guard queue.count < maxQueued else { return false }
            queue.append((id, path))
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
            let response = analyse(job.path)
            try? FileManager.default.removeItem(atPath: (job.path as NSString).deletingLastPathComponent)
            done?(job.id, response)
        }
    }

    /// The report of one uploaded video (no stills are kept: the relying party has the video).
    func analyse(_ path: String) -> HTTPResponse {
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
            return HTTPResponse(status: 200, contentType: "application/json", body: [UInt8](try report.jsonData()))
        } catch let error as InputError {
            return .error(422, "invalidInput", error.problem)
        } catch {
            return .error(422, "invalidInput", "\(error)")
        }
    }
}
