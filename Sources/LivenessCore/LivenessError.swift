/// Errors for input the machine cannot accept. A rejected frame changes nothing.
public enum LivenessError: Error, Equatable, CustomStringConvertible, Sendable {
    /// The frame's timestamp does not exceed the previous accepted frame's.
    case nonIncreasingTimestamp(frameIndex: Int, timestampMicroseconds: Int64, previousMicroseconds: Int64)
    /// The frame's timestamp lies beyond ±`LivenessMachine.timestampLimitMicroseconds`.
    case timestampOutOfRange(frameIndex: Int, timestampMicroseconds: Int64)
    /// A value of the observation is not a finite number.
    case nonFiniteValue(frameIndex: Int, field: String)
    /// The session already has a verdict (for front ends that refuse work after it; `observe`
    /// itself counts such frames instead of throwing).
    case alreadyFinished

    /// A message that names the frame and the values.
    public var description: String {
        switch self {
        case let .nonIncreasingTimestamp(i, t, p):
            return "frame \(i): timestamp \(t) µs does not increase on the previous frame's \(p) µs; timestamps must increase strictly"
        case let .timestampOutOfRange(i, t):
            return "frame \(i): timestamp \(t) µs lies beyond ±\(LivenessMachine.timestampLimitMicroseconds) µs"
        case let .nonFiniteValue(i, field):
            return "frame \(i): \(field) is not a finite number"
        case .alreadyFinished:
            return "the session already has a verdict"
        }
    }
}
