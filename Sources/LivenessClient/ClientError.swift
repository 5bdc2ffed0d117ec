/// What went wrong on the client's side of `liveness-stream/1`: the service could not be reached,
/// refused the request or the stream, answered in an unexpected way, or did not answer in time.
public struct ClientError: Error, CustomStringConvertible, Sendable {
    /// One line for humans, naming the request and what happened.
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
