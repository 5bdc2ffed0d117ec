import CSodium

/// The few libsodium calls the module makes, in one place. Every cryptographic operation of the
/// engine is libsodium's: Ed25519 (`crypto_sign_*`), SHA-256 (`crypto_hash_sha256*`) and
/// constant-time comparison (`sodium_memcmp`).
enum Sodium {
    /// Ed25519 public key length in bytes (32).
    static let publicKeyBytes = Int(crypto_sign_publickeybytes())
    /// Ed25519 secret key length in bytes as libsodium keeps it: seed ‖ public key (64).
    static let secretKeyBytes = Int(crypto_sign_secretkeybytes())
    /// Ed25519 seed length in bytes: what a private key file holds (32).
    static let seedBytes = Int(crypto_sign_seedbytes())
    /// Ed25519 signature length in bytes (64).
    static let signatureBytes = Int(crypto_sign_bytes())
    /// SHA-256 digest length in bytes (32).
    static let sha256Bytes = Int(crypto_hash_sha256_bytes())

    /// `sodium_init()`, run once for the process (libsodium makes it safe to call from any thread).
    private static let initialized: Bool = sodium_init() >= 0

    /// Makes sure libsodium is initialised; throws when it could not be (no entropy source).
    static func ready() throws(EvidenceError) {
        guard initialized else { throw EvidenceError(subject: "libsodium", problem: "sodium_init failed: no usable source of randomness") }
    }

    /// SHA-256 of `bytes`.
    static func sha256(_ bytes: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: sha256Bytes)
        bytes.withUnsafeBufferPointer { input in
            _ = crypto_hash_sha256(&out, input.baseAddress, UInt64(input.count))
        }
        return out
    }

    /// Constant-time equality of two byte strings of the same length (false when lengths differ).
    static func equal(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        if a.isEmpty { return true }
        return a.withUnsafeBytes { x in b.withUnsafeBytes { y in sodium_memcmp(x.baseAddress!, y.baseAddress!, a.count) == 0 } }
    }

    /// True when `signature` is a valid Ed25519 signature of `message` by `publicKey`.
    static func verify(signature: [UInt8], message: [UInt8], publicKey: [UInt8]) -> Bool {
        guard signature.count == signatureBytes, publicKey.count == publicKeyBytes, (try? ready()) != nil else { return false }
        return message.withUnsafeBufferPointer { m in
            crypto_sign_verify_detached(signature, m.baseAddress, UInt64(m.count), publicKey) == 0
        }
    }
}

/// Incremental SHA-256 (libsodium's `crypto_hash_sha256_init/update/final`) for inputs too large
/// to hold in memory, such as videos.
struct SHA256Stream {
    private var state = crypto_hash_sha256_state()

    init() { _ = crypto_hash_sha256_init(&state) }

    mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        _ = crypto_hash_sha256_update(&state, base.assumingMemoryBound(to: UInt8.self), UInt64(bytes.count))
    }

    mutating func finish() -> [UInt8] {
        var out = [UInt8](repeating: 0, count: Sodium.sha256Bytes)
        _ = crypto_hash_sha256_final(&state, &out)
        return out
    }
}
