#if canImport(Glibc)
import Glibc
#endif

/// Files that appear complete or not at all: the bytes go to a synced temporary file in the
/// target's folder (`TemporaryFiles`: registered, so that an interrupted run removes it, and
/// named so that a later run removes what a killed one left), which is then renamed over the
/// target (`replace`) or linked to it (`createNew`, which fails when the target exists). The one
/// implementation for the package: signatures and keys here, reports, stills, traces and plots
/// through LivenessKit's `AtomicFile`.
package enum SyncedFile {
    /// Writes `bytes` to `path`, replacing any file there.
    package static func replace(_ path: String, with bytes: [UInt8], mode: mode_t) throws(EvidenceError) {
        let temporary = try writeTemporary(bytes, beside: path, mode: mode)
        defer { TemporaryFiles.forget(temporary) }
        if rename(temporary, path) != 0 {
            let failure = errno
            unlink(temporary)
            throw EvidenceError(subject: path, problem: "cannot write: \(String(cString: strerror(failure)))")
        }
    }

    /// Writes `bytes` to a new file `path`; throws (subject `path`, problem `alreadyExists`) when
    /// there is a file there.
    package static func createNew(_ path: String, with bytes: [UInt8], mode: mode_t, alreadyExists: String) throws(EvidenceError) {
        let temporary = try writeTemporary(bytes, beside: path, mode: mode)
        defer {
            unlink(temporary)
            TemporaryFiles.forget(temporary)
        }
        if link(temporary, path) != 0 {
            let failure = errno
            throw EvidenceError(subject: path, problem: failure == EEXIST ? alreadyExists : "cannot write: \(String(cString: strerror(failure)))")
        }
    }

    private static func writeTemporary(_ bytes: [UInt8], beside path: String, mode: mode_t) throws(EvidenceError) -> String {
        let temporary = TemporaryFiles.name(for: path)
        TemporaryFiles.removeStale(of: path)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
        guard fd >= 0 else { throw EvidenceError(subject: path, problem: "cannot write: \(String(cString: strerror(errno)))") }
        TemporaryFiles.register(temporary)
        var failure: Int32 = 0
        if fchmod(fd, mode) != 0 { failure = errno }  // open() applied the umask
        var offset = 0
        bytes.withUnsafeBytes { raw in
            while failure == 0 && offset < raw.count {
                let n = write(fd, raw.baseAddress! + offset, raw.count - offset)
                if n < 0 {
                    if errno != EINTR { failure = errno }
                } else {
                    offset += n
                }
            }
        }
        if failure == 0 && fsync(fd) != 0 { failure = errno }
        close(fd)
        if failure != 0 {
            unlink(temporary)
            TemporaryFiles.forget(temporary)
            throw EvidenceError(subject: path, problem: "cannot write: \(String(cString: strerror(failure)))")
        }
        return temporary
    }
}
