import FaceTracking

/// A problem with an input: a missing, unreadable, empty, corrupt or unsupported file, or a
/// malformed trace. The message names the file and the problem.
public struct InputError: Error, CustomStringConvertible, Sendable, Equatable {
    /// The input concerned.
    public var path: String
    /// What is wrong with it.
    public var problem: String

    public init(path: String, problem: String) {
        self.path = path
        self.problem = problem
    }

    package init(path: String, _ error: FaceTrackingError) {
        self.path = path
        // The shim's messages already start with the path; drop it to avoid saying it twice.
        let prefix = path + ": "
        problem = error.message.hasPrefix(prefix) ? String(error.message.dropFirst(prefix.count)) : error.message
    }

    public var description: String { "\(path): \(problem)" }
}
