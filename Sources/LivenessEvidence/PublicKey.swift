import Foundation

/// An Ed25519 public key: what a verifier trusts, and what `liveness serve` publishes.
public struct PublicKey: Sendable, Equatable, Hashable, CustomStringConvertible {
    /// The 32 key bytes.
    public let bytes: [UInt8]

    /// A key from its 32 bytes; nil for any other length.
    public init?(bytes: [UInt8]) {
        guard bytes.count == Sodium.publicKeyBytes else { return nil }
        self.bytes = bytes
    }

    /// A key from the standard base64 of its 32 bytes (as in `report.sig` and `/v1/capabilities`).
    public init?(base64: String) {
        guard let data = Data(base64Encoded: base64) else { return nil }
        self.init(bytes: [UInt8](data))
    }

    /// The standard base64 (with padding) of the 32 key bytes: 44 characters.
    public var base64: String { Data(bytes).base64EncodedString() }

    /// A short name for the key, to compare by eye or in logs: `ed25519:` and the first 16 bytes
    /// of the SHA-256 of the 32 key bytes in lowercase hex (32 digits). It names a key; trust is
    /// decided on the whole key, never on the fingerprint.
    public var fingerprint: String { "ed25519:" + Hex.encode(Array(Sodium.sha256(bytes).prefix(16))) }

    public var description: String { fingerprint }

    /// The key as PEM SubjectPublicKeyInfo (`-----BEGIN PUBLIC KEY-----`), the `liveness.pub`
    /// format; OpenSSL and Python's `cryptography` read it as it is.
    public var pem: String { KeyEncoding.pem(KeyEncoding.publicPrefix + bytes, label: KeyEncoding.publicLabel) }

    /// True when `signature` is a valid Ed25519 signature of `message` by this key
    /// (libsodium's `crypto_sign_verify_detached`).
    public func isValidSignature(_ signature: [UInt8], of message: [UInt8]) -> Bool {
        Sodium.verify(signature: signature, message: message, publicKey: bytes)
    }

    /// Key equality in constant time.
    public static func == (a: PublicKey, b: PublicKey) -> Bool { Sodium.equal(a.bytes, b.bytes) }
    public func hash(into hasher: inout Hasher) { hasher.combine(bytes) }

    /// Reads a public key file: PEM `PUBLIC KEY` (what `liveness keygen` writes as `liveness.pub`,
    /// and `openssl pkey -pubout` of an Ed25519 key), or one line holding the key's base64 (as
    /// `/v1/capabilities` publishes it).
    /// - Throws: `EvidenceError` naming the file and saying what is wrong with it (missing, a
    ///   private key, another algorithm, a damaged or truncated key).
    public static func load(path: String) throws(EvidenceError) -> PublicKey {
        let (bytes, _) = try RegularFile.read(path, limit: 65536)
        do {
            return try parse(String(decoding: bytes, as: UTF8.self))
        } catch {
            throw EvidenceError(subject: path, problem: error.message)
        }
    }

    /// Parses the contents of a public key file (see `load(path:)`).
    static func parse(_ text: String) throws(KeyFormatProblem) -> PublicKey {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if trimmed.isEmpty { throw KeyFormatProblem("is empty; expected an Ed25519 public key (PEM 'PUBLIC KEY', as 'liveness keygen' writes liveness.pub)") }
        guard let block = KeyEncoding.parsePEM(text) else {
            if let key = PublicKey(base64: trimmed) { return key }
            throw KeyFormatProblem("is not a public key file: no '-----BEGIN PUBLIC KEY-----' line, nor the base64 of a 32-byte key")
        }
        if block.label == KeyEncoding.privateLabel {
            throw KeyFormatProblem("holds a private key; give the public key (liveness.pub), which is all a verifier needs")
        }
        guard block.label == KeyEncoding.publicLabel else {
            throw KeyFormatProblem("holds a '\(block.label)' block, not an Ed25519 'PUBLIC KEY'")
        }
        guard let der = block.der else { throw KeyFormatProblem("its PEM block is damaged or truncated (no END line, or the body is not base64)") }
        switch KeyEncoding.key(in: der, prefix: KeyEncoding.publicPrefix, what: "public key") {
        case .success(let bytes): return PublicKey(bytes: bytes)!
        case .failure(let problem): throw problem
        }
    }
}
