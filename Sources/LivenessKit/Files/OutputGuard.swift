import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Refuses to write an output over one of the run's own inputs: `analyze in.mp4 --trace in.mp4`
/// used to turn the video into a CSV. Two names are the same file when they reach the same inode
/// (symbolic links, hard links, `./` and `..` included); an output that does not exist yet
/// cannot be an input.
public enum OutputGuard {
    /// The (device, inode) of an existing file, following links.
    static func identity(_ path: String) -> (UInt64, UInt64)? {
        var info = stat()
        guard !path.isEmpty, stat(path, &info) == 0 else { return nil }
        return (UInt64(info.st_dev), UInt64(info.st_ino))
    }

    /// Whether `a` and `b` name one existing file.
    public static func sameFile(_ a: String, _ b: String) -> Bool {
        guard let x = identity(a), let y = identity(b) else { return false }
        return x == y
    }

    /// Throws when the output `output` is the same file as one of `inputs` (nil entries are
    /// skipped), naming both and the option that gave the output.
    public static func check(output: String?, option: String, inputs: [String?]) throws(InputError) {
        guard let output else { return }
        for case let input? in inputs where sameFile(output, input) {
            throw InputError(path: output, problem: "\(option) names the input \(input) itself; writing there would destroy it (choose another file)")
        }
    }
}
