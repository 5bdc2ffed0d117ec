#if canImport(Glibc)
import Glibc
#endif

/// Writes files so that a reader (or a rerun after a killed process) sees either the old file
/// or the complete new one: write a temporary file in the same folder, fsync, rename.
public enum AtomicFile {
    /// Writes `bytes` to `path` with permissions `mode` (0600 for biometric stills).
    public static func write(_ bytes: [UInt8], to path: String, mode: mode_t = 0o644) throws(InputError) {
        let temporary = TemporaryFiles.name(for: path)
        TemporaryFiles.removeStale(of: path)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
        guard fd >= 0 else { throw InputError(path: path, problem: "cannot write: \(String(cString: strerror(errno)))") }
        TemporaryFiles.register(temporary)
        defer { TemporaryFiles.forget(temporary) }
        var offset = 0
        var failure: Int32 = 0
        bytes.withUnsafeBytes { raw in
            while offset < raw.count {
                let n = Glibc.write(fd, raw.baseAddress! + offset, raw.count - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    failure = errno
                    return
                }
                offset += n
            }
        }
        // open() applies the umask; make the mode exact.
        fchmod(fd, mode)
        if failure == 0 && fsync(fd) != 0 { failure = errno }
        close(fd)
        if failure == 0 && rename(temporary, path) != 0 { failure = errno }
        if failure != 0 {
            unlink(temporary)
            throw InputError(path: path, problem: "cannot write: \(String(cString: strerror(failure)))")
        }
    }

    /// Creates `path` and its parents (mode 0700: the folders hold biometric stills).
    public static func makeDirectory(_ path: String) throws(InputError) {
        var prefix = path.hasPrefix("/") ? "/" : ""
        for part in path.split(separator: "/") {
            prefix += part + "/"
            if mkdir(prefix, 0o700) != 0 && errno != EEXIST {
                throw InputError(path: path, problem: "cannot create the folder: \(String(cString: strerror(errno)))")
            }
        }
    }
}
