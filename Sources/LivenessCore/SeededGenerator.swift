/// SplitMix64 (Steele, Lea & Flood 2014): a tiny, fast, seedable generator. Equal seeds give
/// equal sequences on every platform, which makes a session's challenge order reproducible.
/// Not cryptographic: the seed is recorded in the evidence on purpose.
public struct SeededGenerator: RandomNumberGenerator, Sendable, Equatable {
    /// The generator's 64-bit state; advances by the golden-ratio increment per draw.
    public private(set) var state: UInt64

    /// Creates a generator whose sequence is fixed by `seed`.
    public init(seed: UInt64) { state = seed }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
