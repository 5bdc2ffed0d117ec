import FaceTracking
import Foundation
import LivenessCore
import LivenessKit

/// Pushes a recording to `liveness serve` as a camera client would: creates a session, opens its
/// stream, sends `start` and the frames with their own timestamps, and hands every server message
/// to `onMessage`. The reference client of `liveness stream`, the tests and the benchmark.
public struct RecordingStreamer {
    /// How frames are sent.
    public enum Pacing: Sendable {
        /// Wait for each frame's `ack` before the next: nothing is dropped, as fast as processed.
        case lockStep
        /// At the recording's pace (a camera's): frames the server cannot keep up with are dropped
        /// by the server, the latest winning.
        case realTime
    }

    public var address: ServiceAddress
    public var tls = ClientTLS()
    /// The service's API token, to create the session and read its report.
    public var bearer: String?
    public var pacing = Pacing.lockStep
    /// Send JPEG (`jpegQuality`) instead of the decoded pixels (the decoder's I420 planes when the
    /// picture is 8-bit 4:2:0 limited range, upright and even-sized, else BGR).
    public var jpeg = false
    /// The JPEG quality of `jpeg` frames, 1…100 (libjpeg's scale; a browser's
    /// `toBlob('image/jpeg', 0.8)` is about 80).
    public var jpegQuality = 90
    /// Send raw frames as BGR even when the decoder's I420 planes could go.
    public var alwaysBGR = false
    /// Send at most this many frames per second of the recording.
    public var maxFramesPerSecond: Double?
    /// The challenge mode the session is created with (`POST /v1/sessions` with
    /// `{"policy": {"challengeMode": …}}`, the relying party's choice); nil: the service's default
    /// (prompted unless its `--policy` says otherwise).
    public var challengeMode: ChallengeMode?

    /// What a run produced.
    public struct Outcome {
        public var sessionID: String
        /// The `verdict` message, nil when the stream ended without one.
        public var verdict: ServerMessage.Verdict?
        /// Every text message received that is a `liveness-stream/1` message, in order.
        public var messages: [ServerMessage]
        /// Every text message received, as sent (JSON text), in order: also those that could not
        /// be read as a `ServerMessage`.
        public var texts: [String]
        /// Frames sent.
        public var framesSent: Int
        /// The session's report (`GET /v1/sessions/{id}`) when it could be read.
        public var report: [UInt8]?
    }

    public init(address: ServiceAddress) { self.address = address }

    /// Streams `source` and returns when the verdict came (or the recording ended and the stream
    /// was cancelled).
    public func run(_ source: FrameSource, onMessage: (String) -> Void = { _ in }) throws -> Outcome {
        let body = challengeMode.map { Array(#"{"policy":{"challengeMode":"\#($0.rawValue)"}}"#.utf8) } ?? []
        let created = try ServiceClient.request("POST", "/v1/sessions", at: address, tls: tls, bearer: bearer, body: body)
        guard created.status == 201, let session = try? created.decoded(as: ServiceClient.CreatedSession.self) else {
            throw ClientError("POST /v1/sessions answered \(created.status): \(String(decoding: created.body, as: UTF8.self))")
        }
        return try stream(source, id: session.id, token: session.token, onMessage: onMessage)
    }

    /// Streams `source` into session `id`, created beforehand (by the relying party, perhaps
    /// through another instance), with its single-use camera `token`; returns as `run` does.
    public func stream(_ source: FrameSource, id: String, token: String, onMessage: (String) -> Void = { _ in }) throws -> Outcome {
        let connection = try WebSocketConnection(address: address, path: "/v1/sessions/\(id)/stream", token: token, tls: tls)
        defer { connection.close() }
        var outcome = Outcome(sessionID: id, verdict: nil, messages: [], texts: [], framesSent: 0, report: nil)
        var closed = false
        func take(_ message: WebSocketConnection.Received) -> ServerMessage? {
            switch message {
            case let .text(text):
                onMessage(text)
                outcome.texts.append(text)
                guard let decoded = try? ServerMessage(json: text) else { return nil }
                outcome.messages.append(decoded)
                if case let .verdict(verdict) = decoded { outcome.verdict = verdict }
                return decoded
            case .closed:
                closed = true
                return nil
            }
        }
        _ = connection.next(timeout: 10).map(take)
        let lockStep = pacing == .lockStep
        connection.send(text: #"{"type":"start","ack":\#(lockStep),"width":\#(source.width),"height":\#(source.height)}"#)
        let frame = Image()
        var sequence: UInt32 = 0
        var lastSent: Int64?
        let clock = ContinuousClock()
        let started = clock.now
        var first: Int64?
        while outcome.verdict == nil && !closed, let t = try source.next(into: frame) {
            if let maxFramesPerSecond, let last = lastSent, Double(t - last) < 1e6 / maxFramesPerSecond { continue }
            if first == nil { first = t }
            if !lockStep {
                let due = started + .microseconds(t - first!)
                while clock.now < due && !closed {
                    if let message = connection.next(timeout: max(0.001, (due - clock.now).inSeconds)) { _ = take(message) }
                }
                if outcome.verdict != nil || closed { break }
            }
            // Raw frames go as the decoder's own I420 planes when the picture allows (the service
            // then sees exactly what `analyze` decodes), else as BGR.
            let planes = jpeg || alwaysBGR ? nil : frame.i420Bytes()
            let format: FrameFormat = jpeg ? .jpeg : planes != nil ? .i420 : .bgr
            let header = FrameHeader(sequence: sequence, captureMicroseconds: t, format: format,
                                     width: jpeg ? 0 : frame.width, height: jpeg ? 0 : frame.height)
            var payload = header.encoded()
            if jpeg {
                payload += try frame.jpegData(quality: jpegQuality)
            } else if let planes {
                payload += planes
            } else {
                payload += frame.withBGRBytes { bytes, stride in
                    stride == frame.width * 3 ? Array(bytes)
                        : (0..<frame.height).flatMap { Array(bytes[($0 * stride)..<($0 * stride + frame.width * 3)]) }
                }
            }
            connection.send(binary: payload)
            outcome.framesSent += 1
            lastSent = t
            if lockStep {
                while outcome.verdict == nil && !closed {
                    guard let message = connection.next(timeout: 60) else { throw ClientError("no answer for frame \(sequence) within 60 s") }
                    guard let received = take(message) else { continue }
                    if case let .ack(ack) = received, ack.seq >= Int64(sequence) { break }
                    // A refused frame (too large, not an image) is answered with an error and no
                    // ack: in lock-step it is the frame in flight, so the next one goes.
                    if case .error = received { break }
                }
            }
            sequence &+= 1
        }
        if outcome.verdict == nil && !closed {
            // The recording ended before a verdict: the stream is closed, the session cancelled.
            connection.send(text: #"{"type":"cancel"}"#)
            while outcome.verdict == nil && !closed, let message = connection.next(timeout: 10) { _ = take(message) }
        }
        let report = try ServiceClient.request("GET", "/v1/sessions/\(id)", at: address, tls: tls, bearer: bearer)
        if report.status == 200 { outcome.report = report.body }
        return outcome
    }
}
