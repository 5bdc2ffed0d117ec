import CSodium
import Foundation

/// An Ed25519 private key (libsodium), held in memory that libsodium guards and wipes when the
/// key is released (`sodium_malloc`/`sodium_free`). One key can sign from many threads at once.
public final class SigningKey: @unchecked Sendable {
    /// libsodium's secret key: the 32-byte seed followed by the 32-byte public key.
    private let secret: UnsafeMutablePointer<UInt8>
    /// The matching public key, to publish and to give verifiers.
    public let publicKey: PublicKey

    private init(secret: UnsafeMutablePointer<UInt8>, publicKey: PublicKey) {
        self.secret = secret
        self.publicKey = publicKey
    }

    deinit { sodium_free(secret) }

    private static func allocate() throws(EvidenceError) -> UnsafeMutablePointer<UInt8> {
        try Sodium.ready()
        guard let raw = sodium_malloc(Sodium.secretKeyBytes) else {
            throw EvidenceError(subject: "libsodium", problem: "cannot allocate guarded memory for a key")
        }
        return raw.assumingMemoryBound(to: UInt8.self)
    }

    /// A new random key pair (libsodium's `crypto_sign_keypair`, from the system's randomness).
    public static func generate() throws(EvidenceError) -> SigningKey {
        let secret = try allocate()
        var publicBytes = [UInt8](repeating: 0, count: Sodium.publicKeyBytes)
        guard crypto_sign_keypair(&publicBytes, secret) == 0 else {
            sodium_free(secret)
            throw EvidenceError(subject: "libsodium", problem: "crypto_sign_keypair failed")
        }
        return SigningKey(secret: secret, publicKey: PublicKey(bytes: publicBytes)!)
    }

    /// The key pair of a 32-byte Ed25519 seed (libsodium's `crypto_sign_seed_keypair`).
    static func fromSeed(_ seed: [UInt8]) throws(EvidenceError) -> SigningKey {
        precondition(seed.count == Sodium.seedBytes)
        let secret = try allocate()
        var publicBytes = [UInt8](repeating: 0, count: Sodium.publicKeyBytes)
        guard crypto_sign_seed_keypair(&publicBytes, secret, seed) == 0 else {
            sodium_free(secret)
            throw EvidenceError(subject: "libsodium", problem: "crypto_sign_seed_keypair failed")
        }
        return SigningKey(secret: secret, publicKey: PublicKey(bytes: publicBytes)!)
    }

    /// The Ed25519 signature (64 bytes) of `message` (libsodium's `crypto_sign_detached`).
    public func signature(of message: [UInt8]) -> [UInt8] {
        var signature = [UInt8](repeating: 0, count: Sodium.signatureBytes)
        var length: UInt64 = 0
        message.withUnsafeBufferPointer { m in
            _ = crypto_sign_detached(&signature, &length, m.baseAddress, UInt64(m.count), secret)
        }
        return signature
    }

    /// The private key as PEM PKCS#8 (`-----BEGIN PRIVATE KEY-----`), the `liveness.key` format,
    /// which OpenSSL reads too. Secret: write it only to a file of mode 0600.
    var privatePEM: String {
        var seed = [UInt8](repeating: 0, count: Sodium.seedBytes)
        _ = crypto_sign_ed25519_sk_to_seed(&seed, secret)
        var der = KeyEncoding.privatePrefix + seed
        defer {
            sodium_memzero(&seed, seed.count)
            sodium_memzero(&der, der.count)
        }
        return KeyEncoding.pem(der, label: KeyEncoding.privateLabel)
    }

    /// Reads a private key file: PEM PKCS#8 `PRIVATE KEY` holding an Ed25519 key, as
    /// `liveness keygen` writes `liveness.key` (and `openssl genpkey -algorithm ed25519` does).
    /// The file must be a regular file that only its owner can read or write (mode 0600 or 0400,
    /// as ssh requires of its keys).
    /// - Throws: `EvidenceError` naming the file and what is wrong: missing, open to others, empty,
    ///   a public key, another algorithm or format, damaged or truncated.
    public static func load(path: String) throws(EvidenceError) -> SigningKey {
        let (bytes, mode) = try RegularFile.read(path, limit: 65536)
        let text = String(decoding: bytes, as: UTF8.self)
        if text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
            throw EvidenceError(subject: path, problem: "is empty; expected an Ed25519 private key (PEM 'PRIVATE KEY', as 'liveness keygen' writes liveness.key)")
        }
        guard let block = KeyEncoding.parsePEM(text) else {
            throw EvidenceError(subject: path, problem: "is not a private key file: no '-----BEGIN PRIVATE KEY-----' line")
        }
        if block.label == KeyEncoding.publicLabel {
            throw EvidenceError(subject: path, problem: "holds a public key; signing needs the private key (liveness.key)")
        }
        guard block.label == KeyEncoding.privateLabel else {
            throw EvidenceError(subject: path, problem: "holds a '\(block.label)' block; an Ed25519 'PRIVATE KEY' (PKCS#8, as 'liveness keygen' or 'openssl genpkey -algorithm ed25519' write) is needed")
        }
        if mode & 0o077 != 0 {
            throw EvidenceError(subject: path, problem: "is a private key that others can access (mode \(String(mode, radix: 8, uppercase: false).leftPadded(4))); only its owner may: chmod 600 \(path)")
        }
        guard var der = block.der else {
            throw EvidenceError(subject: path, problem: "its PEM block is damaged or truncated (no END line, or the body is not base64)")
        }
        defer { sodium_memzero(&der, der.count) }
        switch KeyEncoding.key(in: der, prefix: KeyEncoding.privatePrefix, what: "private key") {
        case .success(var seed):
            defer { sodium_memzero(&seed, seed.count) }
            return try fromSeed(seed)
        case .failure(let problem):
            throw EvidenceError(subject: path, problem: problem.message)
        }
    }
}

extension String {
    /// The string with zeros in front up to `width` characters (file modes: `0644`).
    func leftPadded(_ width: Int) -> String { count >= width ? self : String(repeating: "0", count: width - count) + self }
}
