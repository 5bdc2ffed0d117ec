import LivenessKit

/// What `liveness serve` allows, published in `/v1/capabilities` and in each `session` message.
public struct ServiceLimits: Sendable, Equatable {
    /// Sessions created or streaming at once; more are refused with 503 and `Retry-After`.
    public var maxSessions = 16
    /// Largest WebSocket message (a frame with its header), bytes; a larger one closes the stream
    /// with 1009 (also when it comes in fragments).
    public var maxMessageBytes = 8 * 1024 * 1024
    /// Frames accepted per session (20 s at 60 fps with margin).
    public var maxFramesPerSession = 3000
    /// Highest frame rate accepted within a session (media time), frames per second.
    public var maxFramesPerSecond = 60.0
    /// Seconds without any message after which a stream is closed.
    public var idleTimeoutSeconds = 10.0
    /// Seconds a created session waits for its stream to start.
    public var startTimeoutSeconds = 180.0
    /// Seconds a finished session's report and stills are kept for the relying party.
    public var resultRetentionSeconds = 600.0
    /// Finished sessions kept at most (the oldest are forgotten first).
    public var maxRetainedResults = 1000
    /// Largest video accepted by `POST /v1/analyze`, bytes.
    public var maxUploadBytes = 256 * 1024 * 1024
    /// Largest streamed frame, pixels (width × height), checked from a JPEG's or PNG's header
    /// before it is decoded: what a camera sends (4K), not what a file may hold. A 7000×7000
    /// JPEG frame cost 330–475 MB per session under the file limits.
    public var maxStreamFramePixels = 3840 * 2160
    /// Largest side of a streamed frame, pixels.
    public var maxStreamFrameSide = 4096
    /// Grace in seconds added to the policy's settle + framing + scan cap before the server's own
    /// clock ends a stream with `timeout` (clients that stop sending frames cannot hold a session).
    public var serverClockGraceSeconds = 5.0

    /// Creates the defaults.
    public init() {}

    /// Memory of the process apart from sessions: the landmark model, the detector and the
    /// runtime, bytes (measured: 163 MB at start; a margin for the upload queue).
    static let baseMemoryBytes = 200 << 20

    /// What one session may hold at most, bytes: its largest frame as BGR and grey, the two
    /// stills it keeps (BGR), and one pending message.
    public var sessionMemoryBytes: Int { maxStreamFramePixels * (3 + 1 + 2 * 3) + maxMessageBytes }

    /// What one frame worker may hold at most while it processes a frame, bytes: the decoded
    /// JPEG and the working copies of the largest frame (pyramids, thumbnails, rotation).
    public var workerMemoryBytes: Int { maxStreamFramePixels * 12 }

    /// The service's worst case, bytes, with `maxSessions` sessions at their largest frames on
    /// `workers` workers: published in `/v1/capabilities` (`memoryWorstCaseBytes`). Measured
    /// against it: 16 sessions streaming 4K JPEG frames at once on 2 workers peaked at 1.22 GB; this
    /// bound is 1.87 GB there (`ServiceMemoryTests`).
    public func worstCaseMemoryBytes(workers: Int) -> Int {
        Self.baseMemoryBytes + maxSessions * sessionMemoryBytes + max(1, workers) * workerMemoryBytes
    }

    /// The limits as published (the `session` message, a created session, `/v1/capabilities`),
    /// with the engine's frame limits for uploads.
    var published: StreamLimits {
        let frames = ResourceLimits.standard
        // Uploads are analysed like files: the per-input budget of docs/hardening.md.
        return StreamLimits(maxSessions: maxSessions, maxMessageBytes: maxMessageBytes, maxFramesPerSession: maxFramesPerSession,
                            maxFramesPerSecond: maxFramesPerSecond, idleTimeoutSeconds: idleTimeoutSeconds,
                            startTimeoutSeconds: startTimeoutSeconds, resultRetentionSeconds: resultRetentionSeconds,
                            maxUploadBytes: maxUploadBytes, maxFramePixels: maxStreamFramePixels, maxFrameSide: maxStreamFrameSide,
                            uploadMaxFramePixels: frames.maxFramePixels, uploadMaxFrameSide: frames.maxFrameSide,
                            serverClockGraceSeconds: serverClockGraceSeconds, uploadMaxFramesPerSecond: frames.maxFramesPerSecond,
                            uploadMaxDecodedMegapixels: frames.maxDecodedMegapixels)
    }
}
