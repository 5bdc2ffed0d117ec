#if canImport(Glibc)
import Glibc
#endif

/// Where commands print: standard output for results, standard error for messages.
public final class Console: @unchecked Sendable {
    public init() {}

    /// True when standard error is a terminal (progress bars go there).
    public var isTerminal: Bool { isatty(STDERR_FILENO) != 0 }

    public func out(_ text: String) { emit(text, to: .standardOutput()) }
    public func error(_ text: String) { emit(text, to: .standardError()) }

    /// Writes to standard error without a newline (progress bars).
    public func status(_ text: String) {
        let sink = OutputSink.standardError()
        sink.write(text)
        sink.flush()
    }

    private func emit(_ text: String, to sink: OutputSink) {
        sink.write(text.hasSuffix("\n") ? text : text + "\n")
        sink.flush()
    }

    /// Prints a usage error with the command's usage line; returns exit code 2.
    func usageError(_ error: UsageError, spec: CommandSpec) -> Int32 {
        self.error("error: \(error.message)\nusage: liveness \(spec.name) \(spec.usage)\n(see 'liveness \(spec.name) --help')")
        return 2
    }
}
