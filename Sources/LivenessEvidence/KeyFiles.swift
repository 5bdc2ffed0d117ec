#if canImport(Glibc)
import Glibc
#endif

/// The key pair files `liveness keygen` writes: `liveness.key` (private, mode 0600) and
/// `liveness.pub` (public, mode 0644), both PEM. Existing files are never overwritten.
public enum KeyFiles {
    /// File name of the private key.
    public static let privateName = "liveness.key"
    /// File name of the public key.
    public static let publicName = "liveness.pub"

    /// Writes `key` into `directory` (created with mode 0700 when missing) as `liveness.key` and
    /// `liveness.pub`. Each file appears complete or not at all; when either name is taken
    /// (even by a dangling link), nothing is written.
    /// - Returns: the paths of the private and the public key file.
    /// - Throws: `EvidenceError` when a file exists or cannot be written.
    public static func create(in directory: String, key: SigningKey) throws(EvidenceError) -> (privateKey: String, publicKey: String) {
        try makeDirectory(directory)
        let base = directory.hasSuffix("/") ? String(directory.dropLast()) : directory
        let privatePath = base + "/" + privateName
        let publicPath = base + "/" + publicName
        let exists = "already exists; keygen never overwrites a key (move it away, or give another --out)"
        for path in [privatePath, publicPath] {
            var info = stat()
            if lstat(path, &info) == 0 { throw EvidenceError(subject: path, problem: exists) }
        }
        try SyncedFile.createNew(privatePath, with: Array(key.privatePEM.utf8), mode: 0o600, alreadyExists: exists)
        do {
            try SyncedFile.createNew(publicPath, with: Array(key.publicKey.pem.utf8), mode: 0o644, alreadyExists: exists)
        } catch {
            unlink(privatePath)
            throw error
        }
        return (privatePath, publicPath)
    }

    private static func makeDirectory(_ path: String) throws(EvidenceError) {
        var prefix = path.hasPrefix("/") ? "/" : ""
        for part in path.split(separator: "/") {
            prefix += part + "/"
            if mkdir(prefix, 0o700) != 0 && errno != EEXIST {
                throw EvidenceError(subject: path, problem: "cannot create the folder: \(String(cString: strerror(errno)))")
            }
        }
        var info = stat()
        guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else {
            throw EvidenceError(subject: path, problem: "is not a folder")
        }
    }
}
