/// The `limits` object of the `session` message (and of `/v1/capabilities` and a created
/// session): what the service allows.
public struct StreamLimits: Sendable, Equatable, Codable {
    /// Sessions created or streaming at once.
    public var maxSessions: Int
    /// Largest WebSocket message (a frame with its header), bytes.
    public var maxMessageBytes: Int
    /// Frames accepted per session.
    public var maxFramesPerSession: Int
    /// Highest frame rate accepted within a session (media time), frames per second.
    public var maxFramesPerSecond: Double
    /// Seconds without any message after which a stream is closed.
    public var idleTimeoutSeconds: Double
    /// Seconds a created session waits for its stream to start.
    public var startTimeoutSeconds: Double
    /// Seconds a finished session's report and stills are kept.
    public var resultRetentionSeconds: Double
    /// Largest video accepted by `POST /v1/analyze`, bytes.
    public var maxUploadBytes: Int
    /// Largest streamed frame, pixels (width × height).
    public var maxFramePixels: Int
    /// Largest side of a streamed frame, pixels.
    public var maxFrameSide: Int
    /// Largest frame of an uploaded video, pixels (width × height).
    public var uploadMaxFramePixels: Int
    /// Largest side of an uploaded video's frame, pixels.
    public var uploadMaxFrameSide: Int
    /// Seconds added to the policy's time caps before the server's clock ends a stream.
    public var serverClockGraceSeconds: Double
    /// Highest frame rate of an uploaded video, frames per second.
    public var uploadMaxFramesPerSecond: Double
    /// Most pixels decoded from one upload, megapixels.
    public var uploadMaxDecodedMegapixels: Double

    public init(maxSessions: Int, maxMessageBytes: Int, maxFramesPerSession: Int, maxFramesPerSecond: Double,
                idleTimeoutSeconds: Double, startTimeoutSeconds: Double, resultRetentionSeconds: Double, maxUploadBytes: Int,
                maxFramePixels: Int, maxFrameSide: Int, uploadMaxFramePixels: Int, uploadMaxFrameSide: Int,
                serverClockGraceSeconds: Double, uploadMaxFramesPerSecond: Double, uploadMaxDecodedMegapixels: Double) {
        self.maxSessions = maxSessions
        self.maxMessageBytes = maxMessageBytes
        self.maxFramesPerSession = maxFramesPerSession
        self.maxFramesPerSecond = maxFramesPerSecond
        self.idleTimeoutSeconds = idleTimeoutSeconds
        self.startTimeoutSeconds = startTimeoutSeconds
        self.resultRetentionSeconds = resultRetentionSeconds
        self.maxUploadBytes = maxUploadBytes
        self.maxFramePixels = maxFramePixels
        self.maxFrameSide = maxFrameSide
        self.uploadMaxFramePixels = uploadMaxFramePixels
        self.uploadMaxFrameSide = uploadMaxFrameSide
        self.serverClockGraceSeconds = serverClockGraceSeconds
        self.uploadMaxFramesPerSecond = uploadMaxFramesPerSecond
        self.uploadMaxDecodedMegapixels = uploadMaxDecodedMegapixels
    }
}
