/// Literals, for tests and defaults: `["challengeMode": "passive", "turnYawDegrees": 9]`. An
/// integer literal is an integer, a float literal the double it spells.
extension CanonicalJSON.Value: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral {
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int) { self = .integer(String(value)) }
    public init(floatLiteral value: Double) { self = .number(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}
