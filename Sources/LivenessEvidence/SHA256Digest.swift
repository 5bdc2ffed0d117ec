#if canImport(Glibc)
import Glibc
#endif

/// A SHA-256 digest (libsodium's `crypto_hash_sha256`), written as 64 lowercase hex digits.
public struct SHA256Digest: Sendable, Equatable, CustomStringConvertible {
    /// The 32 digest bytes.
    public let bytes: [UInt8]

    /// The digest of `bytes`.
    public init(of bytes: [UInt8]) { self.bytes = Sodium.sha256(bytes) }

    /// A digest from its 64 hex digits (either case); nil when `hex` is not that.
    public init?(hex: String) {
        guard let bytes = Hex.decode(hex), bytes.count == Sodium.sha256Bytes else { return nil }
        self.bytes = bytes
    }

    init(raw: [UInt8]) { bytes = raw }

    /// 64 lowercase hex digits.
    public var hex: String { Hex.encode(bytes) }
    public var description: String { hex }

    /// Constant-time comparison (libsodium's `sodium_memcmp`).
    public static func == (a: SHA256Digest, b: SHA256Digest) -> Bool { Sodium.equal(a.bytes, b.bytes) }

    /// The digest and size of a regular file, read in 1 MiB blocks (a video of any size is fine).
    /// A FIFO, device or directory is refused rather than read (reading a FIFO could block
    /// forever); so is a missing or unreadable file.
    /// - Returns: the digest and the file's length in bytes.
    public static func ofFile(_ path: String) throws(EvidenceError) -> (digest: SHA256Digest, byteCount: Int) {
        let fd = try RegularFile.open(path)
        defer { close(fd) }
        var stream = SHA256Stream()
        var total = 0
        let block = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { block.deallocate() }
        while true {
            let n = read(fd, block.baseAddress, block.count)
            if n < 0 {
                if errno == EINTR { continue }
                throw EvidenceError(subject: path, problem: "cannot read: \(String(cString: strerror(errno)))")
            }
            if n == 0 { break }
            stream.update(UnsafeRawBufferPointer(rebasing: block[0..<n]))
            total += n
        }
        return (SHA256Digest(raw: stream.finish()), total)
    }
}

/// Lowercase hexadecimal text for bytes.
enum Hex {
    static func encode(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 2)
        for b in bytes {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func decode(_ text: String) -> [UInt8]? {
        let chars = Array(text.utf8)
        guard chars.count % 2 == 0 else { return nil }
        func value(_ c: UInt8) -> UInt8? {
            switch c {
            case 0x30...0x39: return c - 0x30
            case 0x61...0x66: return c - 0x61 + 10
            case 0x41...0x46: return c - 0x41 + 10
            default: return nil
            }
        }
        var out = [UInt8]()
        out.reserveCapacity(chars.count / 2)
        var i = 0
        while i < chars.count {
            guard let hi = value(chars[i]), let lo = value(chars[i + 1]) else { return nil }
            out.append(hi << 4 | lo)
            i += 2
        }
        return out
    }
}

/// Opening files that must be regular files, without ever blocking on a FIFO or a device.
enum RegularFile {
    /// Opens `path` for reading; throws unless it is a readable regular file.
    static func open(_ path: String) throws(EvidenceError) -> Int32 {
        let fd = Glibc.open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else {
            let problem = errno == ENOENT ? "no such file" : "cannot open: \(String(cString: strerror(errno)))"
            throw EvidenceError(subject: path, problem: problem)
        }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let message = String(cString: strerror(errno))
            close(fd)
            throw EvidenceError(subject: path, problem: "cannot read: \(message)")
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            close(fd)
            let kind = info.st_mode & S_IFMT == S_IFDIR ? "a directory" : "not a regular file"
            throw EvidenceError(subject: path, problem: "is \(kind)")
        }
        // Regular files never block; clear O_NONBLOCK anyway so reads behave normally.
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
        return fd
    }

    /// The whole contents of a regular file of at most `limit` bytes.
    /// - Returns: the bytes and the file's permission bits.
    static func read(_ path: String, limit: Int) throws(EvidenceError) -> (bytes: [UInt8], mode: mode_t) {
        let fd = try open(path)
        defer { close(fd) }
        var info = stat()
        _ = fstat(fd, &info)
        guard Int(info.st_size) <= limit else {
            throw EvidenceError(subject: path, problem: "is \(info.st_size) bytes, more than the \(limit) bytes such a file can be")
        }
        var bytes = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw EvidenceError(subject: path, problem: "cannot read: \(String(cString: strerror(errno)))")
            }
            if n == 0 { break }
            bytes += chunk[0..<n]
            if bytes.count > limit {
                throw EvidenceError(subject: path, problem: "is more than the \(limit) bytes such a file can be")
            }
        }
        return (bytes, info.st_mode & 0o7777)
    }
}
