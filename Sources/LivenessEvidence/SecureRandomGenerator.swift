import CSodium

/// Random numbers from libsodium's `randombytes_buf` (the kernel's `getrandom`): unpredictable,
/// for what an attacker must not be able to guess — the prompts of a live prompted session.
/// Never seeded, never reproducible; tests and `analyze` use `SeededGenerator` instead.
public struct SecureRandomGenerator: RandomNumberGenerator, Sendable {
    /// A generator; fails only when libsodium cannot be initialised (no entropy source).
    public init() throws(EvidenceError) { try Sodium.ready() }

    /// The next 64 random bits (`randombytes_buf`).
    public mutating func next() -> UInt64 {
        var value: UInt64 = 0
        withUnsafeMutableBytes(of: &value) { randombytes_buf($0.baseAddress!, 8) }
        return value
    }
}
