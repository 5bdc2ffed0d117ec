#if canImport(Glibc)
import Glibc
#endif

import LivenessEvidence

/// Writes files so that a reader (or a rerun after a killed process) sees either the old file
/// or the complete new one: write a temporary file in the same folder, fsync, rename.
public enum AtomicFile {
    /// Writes `bytes` to `path` with permissions `mode` (0600 for biometric stills), through
    /// LivenessEvidence's `SyncedFile` (the package's one implementation).
    public static func write(_ bytes: [UInt8], to path: String, mode: mode_t = 0o644) throws(InputError) {
        do {
            try SyncedFile.replace(path, with: bytes, mode: mode)
        } catch {
            throw InputError(path: path, problem: error.problem)
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
