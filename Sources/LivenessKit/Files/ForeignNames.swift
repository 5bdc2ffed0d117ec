import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// File names that are not UTF-8 (a Latin-1 `café.mp4` from an old archive, say).
///
/// Swift's strings hold Unicode only: such a name decodes with its bad bytes replaced by U+FFFD,
/// and the file "does not exist". The engine reads such a file through an **alias**: a symbolic
/// link with a UTF-8 name, in a private folder of the process (`$TMPDIR/liveness-names-…`, mode
/// 0700, removed at exit), pointing at the name's exact bytes. The alias's own name is the
/// original with each byte that is not UTF-8 written `\xNN` (`caf\xe9.mp4`), so reports, output
/// folders and messages name the file recognisably. Only files and folders that exist can be
/// aliased; an output that does not exist yet must have a UTF-8 name.
public enum ForeignNames {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var folder: String?
    nonisolated(unsafe) private static var count = 0
    nonisolated(unsafe) private static var originals: [String: String] = [:]

    /// `bytes` with every byte that is not part of valid UTF-8 (and every control byte) written
    /// as `\xNN` (the standard library's UTF-8 parser decides what is valid).
    public static func escaped(_ bytes: [UInt8]) -> String {
        var text = ""
        var parser = Unicode.UTF8.ForwardParser()
        var input = bytes.makeIterator()
        var position = 0
        while true {
            switch parser.parseScalar(from: &input) {
            case let .valid(encoded):
                let scalar = Unicode.UTF8.decode(encoded)
                if scalar.value < 0x20 || scalar.value == 0x7F {
                    text += String(format: "\\x%02x", scalar.value)
                } else {
                    text.unicodeScalars.append(scalar)
                }
                position += encoded.count
            case let .error(length):
                for byte in bytes[position..<(position + length)] { text += String(format: "\\x%02x", byte) }
                position += length
            case .emptyInput:
                return text
            }
        }
    }

    /// Whether `bytes` are valid UTF-8.
    public static func isUTF8(_ bytes: [UInt8]) -> Bool {
        String(validating: bytes, as: UTF8.self) != nil
    }

    /// A UTF-8 path through which the existing file or folder named by `bytes` (absolute, or
    /// relative to the working directory) can be read; throws `InputError` when nothing is there
    /// or the alias cannot be made.
    public static func alias(forPath bytes: [UInt8]) throws(InputError) -> String {
        let shown = escaped(bytes)
        var target = bytes
        if target.first != UInt8(ascii: "/") {
            var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            guard getcwd(&buffer, buffer.count) != nil else {
                throw InputError(path: shown, problem: "the working directory cannot be read to resolve this name")
            }
            target = Array(buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }) + [UInt8(ascii: "/")] + target
        }
        var info = stat()
        let exists = (target + [0]).withUnsafeBufferPointer { pointer in
            pointer.withMemoryRebound(to: CChar.self) { stat($0.baseAddress!, &info) == 0 }
        }
        guard exists else {
            throw InputError(path: shown, problem: "no such file or folder (its name is not UTF-8: the bytes written \\xNN)")
        }
        let base = target.split(separator: UInt8(ascii: "/")).last.map(Array.init) ?? target
        lock.lock()
        defer { lock.unlock() }
        do {
            let root = try privateFolder()
            count += 1
            let holder = root + "/\(count)"
            guard mkdir(holder, 0o700) == 0 else {
                throw InputError(path: shown, problem: "an alias for this name cannot be made in \(root): \(String(cString: strerror(errno)))")
            }
            let link = holder + "/" + escaped(base).replacingOccurrences(of: "/", with: "_")
            let made = (target + [0]).withUnsafeBufferPointer { pointer in
                pointer.withMemoryRebound(to: CChar.self) { symlink($0.baseAddress!, link) == 0 }
            }
            guard made else {
                throw InputError(path: shown, problem: "an alias for this name cannot be made in \(root): \(String(cString: strerror(errno)))")
            }
            originals[link] = shown
            return link
        }
    }

    /// The original name, escaped, of a path made by `alias(forPath:)` (or of a path below an
    /// aliased folder); `nil` for any other path.
    public static func original(of path: String) -> String? {
        lock.withLock {
            if let name = originals[path] { return name }
            for (link, name) in originals where path.hasPrefix(link + "/") {
                return name + path.dropFirst(link.count)
            }
            return nil
        }
    }

    /// Names `alias` (made by `alias(forPath:)`) as `shown` from now on.
    public static func register(_ alias: String, shownAs shown: String) {
        lock.withLock { originals[alias] = shown }
    }

    /// `path` as a person should see it: the escaped original of an alias, else `path`.
    public static func shown(_ path: String) -> String { original(of: path) ?? path }

    /// The files below `folder` (recursively, not following links to folders) whose path below
    /// it is not UTF-8, as (alias, escaped relative path): those Foundation cannot name.
    public static func nonUTF8Files(below folder: String) -> [(alias: String, relative: String)] {
        var found: [(String, String)] = []
        walk(Array(folder.utf8), relative: [], into: &found, depth: 0)
        return found.sorted { $0.1 < $1.1 }
    }

    private static func walk(_ directory: [UInt8], relative: [UInt8], into found: inout [(String, String)], depth: Int) {
        guard depth < 64 else { return }
        let handle = (directory + [0]).withUnsafeBufferPointer { pointer in
            pointer.withMemoryRebound(to: CChar.self) { opendir($0.baseAddress!) }
        }
        guard let handle else { return }
        defer { closedir(handle) }
        while let entry = readdir(handle) {
            let name: [UInt8] = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                Array(raw.prefix { $0 != 0 })
            }
            if name == [UInt8(ascii: ".")] || name == [UInt8(ascii: "."), UInt8(ascii: ".")] { continue }
            let path = directory + [UInt8(ascii: "/")] + name
            let below = relative.isEmpty ? name : relative + [UInt8(ascii: "/")] + name
            var info = stat()
            let known = (path + [0]).withUnsafeBufferPointer { pointer in
                pointer.withMemoryRebound(to: CChar.self) { lstat($0.baseAddress!, &info) == 0 }
            }
            guard known else { continue }
            let kind = info.st_mode & S_IFMT
            if kind == S_IFDIR {
                walk(path, relative: below, into: &found, depth: depth + 1)
            } else if !isUTF8(below), let link = try? alias(forPath: path) {
                found.append((link, escaped(below)))
            }
        }
    }

    /// Creates the process's alias folder once; it is removed at exit.
    private static func privateFolder() throws(InputError) -> String {
        if let folder { return folder }
        let temporary = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        var template = Array((temporary + "/liveness-names-XXXXXX").utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw InputError(path: temporary, problem: "a private folder for name aliases cannot be made: \(String(cString: strerror(errno)))")
        }
        let path = String(cString: made)
        folder = path
        atexit { ForeignNames.removeAliases() }
        return path
    }

    /// Removes the alias folder (the links only, never what they point at).
    public static func removeAliases() {
        guard let root = lock.withLock({ folder }) else { return }
        if let holders = try? FileManager.default.contentsOfDirectory(atPath: root) {
            for holder in holders {
                let path = root + "/" + holder
                for link in (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? [] { unlink(path + "/" + link) }
                rmdir(path)
            }
        }
        rmdir(root)
    }

}
