extension KeyedEncodingContainer {
    /// Encodes `value`, or an explicit `null` when it is `nil` (the report schema never omits a
    /// key): the evidence types of the core and the report's types of LivenessKit write absent
    /// values this way.
    public mutating func encodeOrNull<T: Encodable>(_ value: T?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { try encodeNil(forKey: key) }
    }
}

/// An optional that is written as an explicit JSON `null` when absent, where Swift's synthesized
/// encoding would leave the key out: the report schema and the evidence never omit a key. Reads
/// `null` and a missing key alike as absent.
///
///     public struct Timing: Codable {
///         public var wallSeconds: Double
///         @NullWhenAbsent public var framesPerSecond: Double?   // "framesPerSecond": null
///     }
@propertyWrapper
public struct NullWhenAbsent<Value: Codable> {
    public var wrappedValue: Value?
    public init(wrappedValue: Value?) { self.wrappedValue = wrappedValue }
}

extension NullWhenAbsent: Codable {
    public init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        wrappedValue = c.decodeNil() ? nil : try c.decode(Value.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        if let wrappedValue { try c.encode(wrappedValue) } else { try c.encodeNil() }
    }
}

extension NullWhenAbsent: Sendable where Value: Sendable {}
extension NullWhenAbsent: Equatable where Value: Equatable {}
extension NullWhenAbsent: Hashable where Value: Hashable {}

extension KeyedDecodingContainer {
    /// A missing key reads as absent, as for a plain optional.
    public func decode<T>(_ type: NullWhenAbsent<T>.Type, forKey key: Key) throws -> NullWhenAbsent<T> {
        try decodeIfPresent(type, forKey: key) ?? NullWhenAbsent(wrappedValue: nil)
    }
}
