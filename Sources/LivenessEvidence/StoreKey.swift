import CSodium

#if canImport(Glibc)
import Glibc
#endif

/// The key that seals stills (biometric data) in the durable session store of `liveness serve
/// --data-dir` (docs/store.md): 32 random bytes for libsodium's `crypto_secretbox_easy`
/// (XSalsa20-Poly1305, a fresh random 24-byte nonce per sealed value).
///
/// A key file (`--store-key FILE`) holds exactly the 32 bytes (`head -c 32 /dev/urandom`) or
/// their 64 hex digits with an optional final newline (`openssl rand -hex 32`); only its owner
/// may read it (mode 0600 or stricter), as for `--sign-key`.
public struct StoreKey: Sendable {
    /// Key length in bytes (`crypto_secretbox_KEYBYTES`, 32).
    public static let keyBytes = Int(crypto_secretbox_keybytes())
    /// Nonce length in bytes (`crypto_secretbox_NONCEBYTES`, 24), stored in front of each value.
    public static let nonceBytes = Int(crypto_secretbox_noncebytes())
    /// Authentication tag length in bytes (`crypto_secretbox_MACBYTES`, 16).
    public static let tagBytes = Int(crypto_secretbox_macbytes())

    private let key: [UInt8]

    /// A key from its 32 bytes.
    /// - Throws: when `bytes` is not 32 bytes long or libsodium cannot be initialised.
    public init(bytes: [UInt8]) throws(EvidenceError) {
        try Sodium.ready()
        guard bytes.count == Self.keyBytes else {
            throw EvidenceError(subject: "store key", problem: "is \(bytes.count) bytes; a store key is exactly \(Self.keyBytes) random bytes")
        }
        key = bytes
    }

    /// Reads a key file: 32 raw bytes, or 64 hex digits (an optional final newline).
    /// - Throws: a missing or unreadable file, a file others can read, any other size or content,
    ///   each with what to do.
    public static func load(path: String) throws(EvidenceError) -> StoreKey {
        let make = "make one with: head -c 32 /dev/urandom > \(path) && chmod 600 \(path)"
        let (bytes, mode) = try RegularFile.read(path, limit: 4096)
        if mode & 0o077 != 0 {
            throw EvidenceError(subject: path, problem: "is a store key that others can access (mode \(String(mode, radix: 8, uppercase: false).leftPadded(4))); only its owner may: chmod 600 \(path)")
        }
        var text = bytes
        if text.last == 0x0A { text.removeLast() }
        if text.count == 2 * keyBytes, let decoded = Hex.decode(String(decoding: text, as: UTF8.self)) {
            return try StoreKey(bytes: decoded)
        }
        guard bytes.count == keyBytes else {
            throw EvidenceError(subject: path, problem: "holds \(bytes.count) bytes; a store key is exactly \(keyBytes) random bytes (or their \(2 * keyBytes) hex digits): \(make)")
        }
        return try StoreKey(bytes: bytes)
    }

    /// `plaintext` sealed: a random nonce (`randombytes_buf`) followed by `crypto_secretbox_easy`'s
    /// ciphertext and tag (`plaintext.count + 40` bytes in all).
    public func seal(_ plaintext: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: Self.nonceBytes + Self.tagBytes + plaintext.count)
        out.withUnsafeMutableBufferPointer { buffer in
            let base = buffer.baseAddress!
            randombytes_buf(base, Self.nonceBytes)
            _ = crypto_secretbox_easy(base + Self.nonceBytes, plaintext, UInt64(plaintext.count), base, key)
        }
        return out
    }

    /// The plaintext of a value `seal` made with this key (`crypto_secretbox_open_easy`); nil
    /// when it was sealed with another key, changed or truncated.
    public func open(_ sealed: [UInt8]) -> [UInt8]? {
        guard sealed.count >= Self.nonceBytes + Self.tagBytes else { return nil }
        var out = [UInt8](repeating: 0, count: sealed.count - Self.nonceBytes - Self.tagBytes)
        let status = sealed.withUnsafeBufferPointer { input in
            crypto_secretbox_open_easy(&out, input.baseAddress! + Self.nonceBytes, UInt64(input.count - Self.nonceBytes),
                                       input.baseAddress!, key)
        }
        return status == 0 ? out : nil
    }
}
