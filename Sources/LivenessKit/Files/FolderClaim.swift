import Foundation
import LivenessEvidence

#if canImport(Glibc)
import Glibc
#endif

/// Which input an output folder belongs to, decided atomically across processes: two runs into
/// one `--output` whose inputs share a file name (`a/clip.mp4`, `b/clip.mp4`) used to write into
/// one `clip` folder at once, and one run's failed report replaced the other's passed report and
/// stills. The first run to claim a folder writes the input's path into its `.input` file with
/// `link(2)`, which cannot succeed twice; a run for another input then takes the folder named
/// with its input's hash.
package enum FolderClaim {
    /// The claim file's name inside a folder.
    package static let fileName = ".input"

    /// The input that claimed `folder`, if any.
    package static func owner(of folder: String) -> String? {
        guard let data = FileManager.default.contents(atPath: folder + "/" + fileName) else { return nil }
        return String(decoding: data, as: UTF8.self)
    }

    /// Claims `folder` (created when missing) for `input`; true when it is now, or already was,
    /// the input's. False when another input holds it, or it cannot be claimed.
    package static func claim(_ folder: String, for input: String) -> Bool {
        if let owner = owner(of: folder) { return owner == input }
        guard (try? AtomicFile.makeDirectory(folder)) != nil else { return false }
        let temporary = TemporaryFiles.name(for: folder + "/" + fileName) + "-\(UInt32.random(in: 0...UInt32.max))"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return false }
        let bytes = Array(input.utf8)
        let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        close(fd)
        defer { unlink(temporary) }
        guard written == bytes.count else { return false }
        if link(temporary, folder + "/" + fileName) == 0 { return true }
        return owner(of: folder) == input
    }
}
