import Foundation
import LivenessEvidence

/// A parsed JSON value: the package's one JSON value type is `CanonicalJSON.Value` of
/// LivenessEvidence, the tree signatures are computed over. `JSONValue` is its name where outside
/// JSON is read (traces, policies, motion sidecars, prompt logs, the stream protocol's client
/// messages and the HTTP API's bodies), with the accessors those readers use: `double` (any
/// number, as the nearest double, so a 6-decimal trace value reads back as exactly the double
/// that was written), `members` (an object as a dictionary), `isNull` and `typeName`. Booleans
/// and numbers stay distinct: `true` is never a number and `1` is never a boolean.
package typealias JSONValue = CanonicalJSON.Value

extension CanonicalJSON.Value {
    /// Parses one line of text as a JSON value; the error message is one short sentence.
    package static func parse(_ text: Substring) throws(JSONLineError) -> JSONValue {
        try parse(Array(text.utf8))
    }

    /// Parses JSON text with the strict RFC 8259 reader (`CanonicalJSON`), once. It refuses what
    /// Foundation lets through silently: a **duplicate key** (Foundation keeps the first, Python
    /// and jq the last, so a reviewer would read another value than the one applied), also two
    /// keys that differ in bytes but are one Swift string (canonically equivalent Unicode), so
    /// that `members` loses nothing; an integer beyond the double range; and nesting deeper than
    /// 64 levels, which gets its own message.
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
        try value.checkReadable()
        return value
    }

    /// Throws when an integer is out of the double range or two keys of an object are one Swift string.
    private func checkReadable() throws(JSONLineError) {
        switch self {
        case .null, .bool, .number, .string: return
        case let .integer(text):
            guard let d = Double(text), d.isFinite else { throw JSONLineError(message: "not valid JSON (a number too large for a double)") }
        case let .array(items):
            for item in items { try item.checkReadable() }
        case let .object(members):
            var keys = Set<String>(minimumCapacity: members.count)
            for member in members {
                guard keys.insert(member.key).inserted else {
                    throw JSONLineError(message: "duplicate key \"\(member.key)\": a key may appear only once")
                }
                try member.value.checkReadable()
            }
        }
    }

    /// A number (integer or not) as the nearest double; nil for any other value.
    package var double: Double? {
        switch self {
        case let .number(d): return d
        case let .integer(text): return Double(text)
        default: return nil
        }
    }

    /// An object's members by key; nil for any other value.
    package var members: [String: JSONValue]? {
        guard case let .object(pairs) = self else { return nil }
        return Dictionary(pairs.map { ($0.key, $0.value) }, uniquingKeysWith: { first, _ in first })
    }

    /// True for `null`.
    package var isNull: Bool { if case .null = self { true } else { false } }

    /// The JSON type's name, for messages ("a string", "an array", ...).
    package var typeName: String {
        switch self {
        case .null: return "null"
        case .bool: return "a boolean"
        case .integer, .number: return "a number"
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
