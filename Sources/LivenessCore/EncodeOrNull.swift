extension KeyedEncodingContainer {
    /// Encodes `value`, or an explicit `null` when it is `nil` (the report schema never omits a
    /// key): the evidence types of the core and the report's types of LivenessKit write absent
    /// values this way.
    public mutating func encodeOrNull<T: Encodable>(_ value: T?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { try encodeNil(forKey: key) }
    }
}
