/// A problem with signing or verification material: a key file, a signature envelope, a report,
/// a still or an input that cannot be read or used. The message names the thing and the problem.
public struct EvidenceError: Error, CustomStringConvertible, Sendable, Equatable {
    /// The file (or thing) concerned, e.g. `keys/liveness.key` or `report.sig`.
    public var subject: String
    /// What is wrong with it, one sentence.
    public var problem: String

    public init(subject: String, problem: String) {
        self.subject = subject
        self.problem = problem
    }

    public var description: String { "\(subject): \(problem)" }
}
