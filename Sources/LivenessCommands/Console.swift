import Foundation

#if canImport(Glibc)
import Glibc
import LivenessKit
#endif

/// Where commands print: standard output for results, standard error for messages. A
/// capturing console (for tests and embedding) keeps the lines instead.
package final class Console: @unchecked Sendable {
    private let capturing: Bool
    private let lock = NSLock()
    private var outLines: [String] = []
    private var errorLines: [String] = []
    private var outputFailure: String?
    private var outputClosed = false

    /// A console on the process's standard output and error.
    package init() { capturing = false }

    /// A console that keeps what is printed (see `printed`, `errors`).
    package static func capturing() -> Console { Console(capturing: true) }

    private init(capturing: Bool) { self.capturing = capturing }

    /// What was printed to standard output, when capturing.
    package var printed: String { lock.withLock { outLines.joined() } }
    /// What was printed to standard error, when capturing.
    package var errors: String { lock.withLock { errorLines.joined() } }

    /// Why writing to standard output failed (a full disk, a closed pipe or descriptor), if it
    /// did: results were lost, so the command must not report success.
    package var standardOutputFailure: String? { lock.withLock { outputFailure } }

    /// Marks standard output as closed when the process started (`liveness` checks its
    /// descriptors and puts /dev/null in place of a closed one, so that no file it opens takes
    /// descriptor 1): anything printed there is then a failure, not a silent loss.
    package func markStandardOutputClosed() { lock.withLock { outputClosed = true } }

    /// A sink on standard output for bulk results (traces); throws when standard output was
    /// closed when the process started.
    package func standardOutputSink() throws(InputError) -> OutputSink {
        if lock.withLock({ outputClosed }) {
            throw InputError(path: "standard output", problem: "is closed; give --output FILE")
        }
        return OutputSink.standardOutput()
    }

    /// True when standard error is a terminal (progress bars go there).
    package var isTerminal: Bool { !capturing && isatty(STDERR_FILENO) != 0 }

    package func out(_ text: String) { emit(text, error: false) }
    package func error(_ text: String) { emit(text, error: true) }

    /// Writes to standard error without a newline (progress bars).
    package func status(_ text: String) {
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
        if !error && lock.withLock({ outputClosed }) {
            lock.withLock { if outputFailure == nil { outputFailure = "standard output is closed" } }
            return
        }
        let sink = error ? OutputSink.standardError() : OutputSink.standardOutput()
        sink.write(line)
        sink.flush()
        if !error, let failure = sink.failure {
            lock.withLock { if outputFailure == nil { outputFailure = String(cString: strerror(failure)) } }
        }
    }

    /// `text` with control characters shown as escapes (`\n`, `\t`, `\u{1B}`, ...), so that a file
    /// name holding a newline or a terminal escape cannot break a one-line message.
    package static func printable(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default: out += isControl(scalar) ? "\\u{\(String(scalar.value, radix: 16, uppercase: true))}" : String(scalar)
            }
        }
        return out
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }

    /// Prints a usage error with the command's usage line; returns exit code 2.
    package func usageError(_ error: UsageError, spec: CommandSpec) -> Int32 {
        self.error("error: \(error.message)\nusage: \(spec.commandLine) \(spec.usage)\n(see '\(spec.commandLine) --help')")
        return 2
    }
}
