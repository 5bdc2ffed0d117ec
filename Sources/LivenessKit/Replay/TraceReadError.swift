/// A trace that cannot be read or replayed: the file, the 1-based line (when one line is at
/// fault) and the problem. Printed as `FILE:LINE: problem`, the shape compilers use.
public struct TraceReadError: Error, CustomStringConvertible, Sendable, Equatable {
    /// The trace file's path (or the name given to in-memory text).
    public var path: String
    /// The 1-based line number at fault, or `nil` for a problem with the whole file (unreadable, empty).
    public var line: Int?
    /// What is wrong, one sentence.
    public var problem: String

    /// Creates an error for `path`, at `line` when one line is at fault.
    public init(path: String, line: Int?, problem: String) {
        self.path = path
        self.line = line
        self.problem = problem
    }

    /// `FILE:LINE: problem`, or `FILE: problem` without a line.
    public var description: String {
        if let line { return "\(path):\(line): \(problem)" }
        return "\(path): \(problem)"
    }
}
