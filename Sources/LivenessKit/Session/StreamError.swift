/// Why a pushed frame (or message) was refused. A refused frame changes nothing in the session;
/// `isRecoverable` says whether the stream may go on.
public struct StreamError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kind of problem, also the protocol's `error.code`.
    public enum Code: String, Sendable, Codable {
        /// The bytes are not a frame: not JPEG/PNG, too few bytes, odd sizes for YUV 4:2:0.
        case invalidFrame
        /// The frame is larger than the limits or than the size announced at start.
        case frameTooLarge
        /// The timestamp does not exceed the previous frame's.
        case nonIncreasingTimestamp
        /// Frames arrive faster than the session's frame-rate limit (media time).
        case tooFast
        /// A motion sample that is not finite or not on the frames' clock.
        case invalidMotion
        /// A text message that is not valid JSON of the protocol, or arrives at the wrong time.
        case invalidMessage
        /// The client is not allowed this (a token, a policy weaker than the session's).
        case forbidden
        /// The session was idle, or reached the server's limits (frames, time).
        case limitReached
        /// The session is over (verdict given, cancelled or expired).
        case sessionEnded
        /// Something else inside the engine; the session cannot go on.
        case `internal`
    }

    /// What went wrong.
    public var code: Code
    /// A sentence for people, in the engine's words.
    public var message: String
    /// True when later frames may still be accepted.
    public var isRecoverable: Bool

    /// Creates an error.
    public init(_ code: Code, _ message: String, recoverable: Bool = true) {
        self.code = code
        self.message = message
        isRecoverable = recoverable
    }

    public var description: String { "\(code.rawValue): \(message)" }
}
