import Foundation
import LivenessEvidence

/// A parsed JSON value: the one view of outside JSON in the package (traces, policies, motion
/// sidecars, prompt logs, the stream protocol's messages and the HTTP API's bodies), read by the
/// strict RFC 8259 reader of LivenessEvidence (`CanonicalJSON`). Numbers are the nearest double,
/// so a 6-decimal trace value reads back as exactly the double that was written. Booleans and
/// numbers stay distinct: `true` is never a number and `1` is never a boolean.
package enum JSONValue: Equatable, Sendable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// Parses one line of text as a JSON value; the error message is one short sentence.
    package static func parse(_ text: Substring) throws(JSONLineError) -> JSONValue {
        try parse(Array(text.utf8))
    }

    /// Parses JSON text with the strict RFC 8259 reader (`CanonicalJSON`), once. It refuses what
    /// Foundation lets through silently: a **duplicate key** (Foundation keeps the first, Python
    /// and jq the last, so a reviewer would read another value than the one applied), and nesting
    /// deeper than 64 levels, which gets its own message. Numbers become the nearest double, as
    /// Foundation's reader gives them.
    package static func parse(_ bytes: [UInt8]) throws(JSONLineError) -> JSONValue {
        let value: CanonicalJSON.Value
        do {
            value = try CanonicalJSON.parse(bytes)
        } catch {
            if error.message.hasPrefix("duplicate key") {
                throw JSONLineError(message: "\(error.message) at byte \(error.offset): a key may appear only once")
            }
            if error.message.hasPrefix("nested more than") {
                throw JSONLineError(message: "valid JSON but \(error.message) (at byte \(error.offset)); no input of this engine nests that deep")
            }
            throw JSONLineError(message: "not valid JSON (\(error.message) at byte \(error.offset))")
        }
        return try JSONValue(value)
    }

    /// The same value as `JSONValue`. Two keys that differ in bytes but are one Swift string
    /// (canonically equivalent Unicode) are a duplicate here too.
    private init(_ value: CanonicalJSON.Value) throws(JSONLineError) {
        switch value {
        case .null: self = .null
        case let .bool(b): self = .bool(b)
        case let .integer(text):
            guard let d = Double(text), d.isFinite else { throw JSONLineError(message: "not valid JSON (a number too large for a double)") }
            self = .number(d)
        case let .number(d): self = .number(d)
        case let .string(s): self = .string(s)
        case let .array(items):
            var out: [JSONValue] = []
            out.reserveCapacity(items.count)
            for item in items { out.append(try JSONValue(item)) }
            self = .array(out)
        case let .object(members):
            var out: [String: JSONValue] = [:]
            out.reserveCapacity(members.count)
            for (key, member) in members {
                guard out.updateValue(try JSONValue(member), forKey: key) == nil else {
                    throw JSONLineError(message: "duplicate key \"\(key)\": a key may appear only once")
                }
            }
            self = .object(out)
        }
    }

    /// The JSON type's name, for messages ("a string", "an array", ...).
    package var typeName: String {
        switch self {
        case .null: return "null"
        case .bool: return "a boolean"
        case .number: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }
}

/// Why a line is not valid JSON.
package struct JSONLineError: Error {
    package var message: String
}

/// Literals, for the package's tests and defaults: `["challengeMode": "passive", "turnYawDegrees": 9]`.
extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral {
    package init(stringLiteral value: String) { self = .string(value) }
    package init(integerLiteral value: Int) { self = .number(Double(value)) }
    package init(floatLiteral value: Double) { self = .number(value) }
    package init(booleanLiteral value: Bool) { self = .bool(value) }
}
