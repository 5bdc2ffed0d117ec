import LivenessEvidence

#if canImport(Glibc)
import Glibc
#endif

/// Buffered text output to a file descriptor: a file, standard output or standard error.
///
/// Nothing written is lost silently: the first write error (a full disk, `/dev/full`, a closed
/// pipe) is kept, later writes are dropped, and `finish()` throws it naming the destination.
///
/// A file is written whole or not at all: into `<path>.tmp-<pid>` beside it, renamed over `path`
/// by a `finish()` that succeeds. A run that fails, is killed or fills the disk leaves an
/// existing file as it was, never a truncated one that looks complete (a device or a pipe, which
/// cannot be renamed over, is written directly).
public final class OutputSink {
    private let descriptor: Int32
    private let owned: Bool
    private var closed = false
    /// The temporary file written until `finish()` renames it to `name`.
    private var temporary: String?
    private var buffer: [UInt8] = []
    /// What the sink writes to, for messages: the file's path or "standard output".
    public let name: String
    /// The first write error (`errno`), if any.
    public private(set) var failure: Int32?

    /// Standard output.
    public static func standardOutput() -> OutputSink { OutputSink(descriptor: STDOUT_FILENO, owned: false, name: "standard output") }
    /// Standard error.
    public static func standardError() -> OutputSink { OutputSink(descriptor: STDERR_FILENO, owned: false, name: "standard error") }

    /// Creates or truncates `path` with permissions `mode` (0o644 by default; the mode is exact,
    /// whatever the umask).
    public init(path: String, mode: mode_t = 0o644) throws(InputError) {
        guard !path.isEmpty else { throw InputError(path: path, problem: "an empty path is not a file name") }
        var existing = stat()
        let special = stat(path, &existing) == 0 && (existing.st_mode & S_IFMT) != S_IFREG
        let target = special ? path : TemporaryFiles.name(for: path)
        if !special { TemporaryFiles.removeStale(of: path) }
        let fd = open(target, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
        guard fd >= 0 else { throw InputError(path: path, problem: "cannot write: \(String(cString: strerror(errno)))") }
        if !special {
            TemporaryFiles.register(target)
            temporary = target
        }
        var info = stat()
        if fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG { fchmod(fd, mode) }
        descriptor = fd
        owned = true
        name = path
    }

    private init(descriptor: Int32, owned: Bool, name: String) {
        self.descriptor = descriptor
        self.owned = owned
        self.name = name
    }

    deinit {
        if let temporary {
            // Never finished: the run failed or was abandoned; the destination keeps what it had.
            if !closed { close(descriptor) }
            unlink(temporary)
            TemporaryFiles.forget(temporary)
            return
        }
        flush()
        if owned && !closed { close(descriptor) }
    }

    /// Appends text; written out in blocks of 64 KiB.
    public func write(_ text: String) {
        guard failure == nil else { return }
        buffer.append(contentsOf: text.utf8)
        if buffer.count >= 1 << 16 { flush() }
    }

    /// Writes out what is buffered; on an error keeps it in `failure` and drops the rest.
    public func flush() {
        guard !buffer.isEmpty else { return }
        defer { buffer.removeAll(keepingCapacity: true) }
        guard failure == nil, !closed else { return }
        buffer.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let written = Glibc.write(descriptor, raw.baseAddress! + offset, raw.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    failure = errno
                    return
                }
                offset += written
            }
        }
    }

    /// Flushes; for a file also forces it to storage and closes it. Throws the first write error.
    public func finish() throws(InputError) {
        flush()
        if owned && !closed {
            // fsync reports late write errors (delayed allocation on a full disk); devices that
            // cannot sync say EINVAL, which is not a loss.
            if failure == nil, fsync(descriptor) != 0, errno != EINVAL, errno != EROFS { failure = errno }
            if close(descriptor) != 0, failure == nil, errno != EINTR { failure = errno }
            closed = true
            if let temporary {
                if failure == nil, rename(temporary, name) != 0 { failure = errno }
                if failure != nil { unlink(temporary) }
                TemporaryFiles.forget(temporary)
                self.temporary = nil
            }
        }
        if let failure { throw InputError(path: name, problem: "cannot write: \(String(cString: strerror(failure)))") }
    }
}
