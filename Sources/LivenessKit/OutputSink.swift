#if canImport(Glibc)
import Glibc
#endif

/// Buffered text output to a file descriptor: a file or standard output.
public final class OutputSink {
    private let descriptor: Int32
    private let owned: Bool
    private var buffer: [UInt8] = []

    /// Standard output.
    public static func standardOutput() -> OutputSink { OutputSink(descriptor: STDOUT_FILENO, owned: false) }
    /// Standard error.
    public static func standardError() -> OutputSink { OutputSink(descriptor: STDERR_FILENO, owned: false) }

    /// Creates or truncates `path` with permissions `mode` (0o644 by default).
    public init(path: String, mode: mode_t = 0o644) throws(InputError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
        guard fd >= 0 else { throw InputError(path: path, problem: "cannot write: \(String(cString: strerror(errno)))") }
        descriptor = fd
        owned = true
    }

    private init(descriptor: Int32, owned: Bool) {
        self.descriptor = descriptor
        self.owned = owned
    }

    deinit {
        flush()
        if owned { close(descriptor) }
    }

    /// Appends text; written out in blocks of 64 KiB.
    public func write(_ text: String) {
        buffer.append(contentsOf: text.utf8)
        if buffer.count >= 1 << 16 { flush() }
    }

    /// Writes out what is buffered.
    public func flush() {
        guard !buffer.isEmpty else { return }
        buffer.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let written = Glibc.write(descriptor, raw.baseAddress! + offset, raw.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    break  // a closed pipe: nothing more can be written
                }
                offset += written
            }
        }
        buffer.removeAll(keepingCapacity: true)
    }
}
