import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Where commands print: standard output for results, standard error for messages. A
/// capturing console (for tests and embedding) keeps the lines instead.
public final class Console: @unchecked Sendable {
    private let capturing: Bool
    private let lock = NSLock()
    private var outLines: [String] = []
    private var errorLines: [String] = []

    /// A console on the process's standard output and error.
    public init() { capturing = false }

    /// A console that keeps what is printed (see `printed`, `errors`).
    public static func capturing() -> Console { Console(capturing: true) }

    private init(capturing: Bool) { self.capturing = capturing }

    /// What was printed to standard output, when capturing.
    public var printed: String { lock.withLock { outLines.joined() } }
    /// What was printed to standard error, when capturing.
    public var errors: String { lock.withLock { errorLines.joined() } }

    /// True when standard error is a terminal (progress bars go there).
    public var isTerminal: Bool { !capturing && isatty(STDERR_FILENO) != 0 }

    public func out(_ text: String) { emit(text, error: false) }
    public func error(_ text: String) { emit(text, error: true) }

    /// Writes to standard error without a newline (progress bars).
    public func status(_ text: String) {
        guard !capturing else { return }
        let sink = OutputSink.standardError()
        sink.write(text)
        sink.flush()
    }

    private func emit(_ text: String, error: Bool) {
        let line = text.hasSuffix("\n") ? text : text + "\n"
        if capturing {
            lock.withLock { error ? errorLines.append(line) : outLines.append(line) }
            return
        }
        let sink = error ? OutputSink.standardError() : OutputSink.standardOutput()
        sink.write(line)
        sink.flush()
    }

    /// Prints a usage error with the command's usage line; returns exit code 2.
    func usageError(_ error: UsageError, spec: CommandSpec) -> Int32 {
        self.error("error: \(error.message)\nusage: liveness \(spec.name) \(spec.usage)\n(see 'liveness \(spec.name) --help')")
        return 2
    }
}
