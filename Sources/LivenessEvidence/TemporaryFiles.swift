import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The temporary files this process has open (`<name>.tmp-<pid>…` beside the file they will
/// become), so that an interrupted run removes them (`Interruption`) and a later run removes
/// those a killed run left (`removeStale`).
public enum TemporaryFiles {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var paths: Set<String> = []

    /// The temporary name for `path` in this process: `path.tmp-<pid>` plus `suffix` (an
    /// extension a writer needs, such as ".mp4").
    public static func name(for path: String, suffix: String = "") -> String { "\(path).tmp-\(getpid())\(suffix)" }

    /// Notes a temporary file that exists now.
    public static func register(_ path: String) {
        lock.lock()
        paths.insert(path)
        lock.unlock()
    }

    /// Forgets a temporary file (renamed into place or removed by its writer).
    public static func forget(_ path: String) {
        lock.lock()
        paths.remove(path)
        lock.unlock()
    }

    /// Removes every registered temporary file; returns how many there were.
    @discardableResult
    public static func removeAll() -> Int {
        lock.lock()
        let all = paths
        paths.removeAll()
        lock.unlock()
        for path in all { unlink(path) }
        return all.count
    }

    /// Removes the temporaries of `path` (`path.tmp-<pid>` with any suffix) that a process no
    /// longer running left behind: a killed run, a full disk, a machine that lost power.
    /// A temporary of a process that is still running is left alone.
    public static func removeStale(of path: String) {
        let url = URL(fileURLWithPath: path)
        let folder = url.deletingLastPathComponent().path
        let prefix = url.lastPathComponent + ".tmp-"
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return }
        for name in names where name.hasPrefix(prefix) {
            let digits = name.dropFirst(prefix.count).prefix { $0.isASCII && $0.isNumber }
            guard let pid = Int32(digits), pid > 0, pid != getpid() else { continue }
            if kill(pid, 0) != 0 && errno == ESRCH { unlink(folder + "/" + name) }
        }
    }
}
