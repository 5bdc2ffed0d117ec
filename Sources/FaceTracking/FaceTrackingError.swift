import CFaceTracking

/// A failure reported by the C shim: bad input or a broken dependency. "No face" is never an
/// error; it is an observation.
public struct FaceTrackingError: Error, Equatable, CustomStringConvertible, Sendable {
    /// What kind of failure it was.
    public enum Kind: String, Sendable {
        case notFound, unsupported, decode, argument, model, encode, `internal`
        /// The input exceeds a resource limit (`ResourceLimits`).
        case limit
    }

    public let kind: Kind
    /// A readable message naming the file or call and the problem.
    public let message: String

    public init(kind: Kind, message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }
}

/// The one place where C status codes become Swift errors.
@inline(__always)
package func check(_ status: ft_status, _ error: inout ft_error) throws(FaceTrackingError) {
    let kind: FaceTrackingError.Kind
    switch status {
    case FT_OK, FT_END_OF_STREAM: return
    case FT_ERR_NOT_FOUND: kind = .notFound
    case FT_ERR_UNSUPPORTED: kind = .unsupported
    case FT_ERR_DECODE: kind = .decode
    case FT_ERR_ARGUMENT: kind = .argument
    case FT_ERR_MODEL: kind = .model
    case FT_ERR_ENCODE: kind = .encode
    case FT_ERR_LIMIT: kind = .limit
    default: kind = .internal
    }
    let message = withUnsafeBytes(of: &error.message) { raw in
        String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
    }
    throw FaceTrackingError(kind: kind, message: message.isEmpty ? "face tracking failed (\(kind))" : message)
}
