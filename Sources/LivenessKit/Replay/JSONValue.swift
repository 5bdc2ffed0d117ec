import Foundation
import LivenessEvidence

/// A parsed JSON value, decoded with Foundation's `JSONDecoder` (which parses numbers to the
/// nearest double, so a 6-decimal trace value reads back as exactly the double that was written).
/// Booleans and numbers stay distinct: `true` is never a number and `1` is never a boolean.
enum JSONValue: Decodable, Equatable, Sendable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() {
            self = .null
        } else if let b = try? c.decode(Bool.self) {
            self = .bool(b)
        } else if let d = try? c.decode(Double.self) {
            self = .number(d)
        } else if let s = try? c.decode(String.self) {
            self = .string(s)
        } else if let a = try? c.decode([JSONValue].self) {
            self = .array(a)
        } else if let o = try? c.decode([String: JSONValue].self) {
            self = .object(o)
        } else {
            throw DecodingError.dataCorruptedError(in: c, debugDescription: "unsupported JSON value (a number out of range?)")
        }
    }

    /// Parses one line of text as a JSON value; the error message is one short sentence.
    static func parse(_ text: Substring) throws(JSONLineError) -> JSONValue {
        try parse(Array(text.utf8))
    }

    /// Parses JSON text with the strict RFC 8259 reader (`CanonicalJSON`), once. It refuses what
    /// Foundation lets through silently: a **duplicate key** (Foundation keeps the first, Python
    /// and jq the last, so a reviewer would read another value than the one applied), and nesting
    /// deeper than 64 levels, which gets its own message. Numbers become the nearest double, as
    /// Foundation's reader gives them.
    static func parse(_ bytes: [UInt8]) throws(JSONLineError) -> JSONValue {
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
    var typeName: String {
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
struct JSONLineError: Error {
    var message: String
}
