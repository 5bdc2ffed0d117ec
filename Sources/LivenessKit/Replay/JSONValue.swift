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

    /// Parses JSON text. It is first read by the strict RFC 8259 reader (`CanonicalJSON`), which
    /// refuses what Foundation lets through silently: a **duplicate key** (Foundation keeps the
    /// first, Python and jq the last, so a reviewer would read another value than the one
    /// applied), and nesting deeper than 64 levels, which gets its own message.
    static func parse(_ bytes: [UInt8]) throws(JSONLineError) -> JSONValue {
        do {
            _ = try CanonicalJSON.parse(bytes)
        } catch {
            if error.message.hasPrefix("duplicate key") {
                throw JSONLineError(message: "\(error.message) at byte \(error.offset): a key may appear only once")
            }
            if error.message.hasPrefix("nested more than") {
                throw JSONLineError(message: "valid JSON but \(error.message) (at byte \(error.offset)); no input of this engine nests that deep")
            }
            throw JSONLineError(message: "not valid JSON (\(error.message) at byte \(error.offset))")
        }
        do {
            return try JSONDecoder().decode(JSONValue.self, from: Data(bytes))
        } catch let DecodingError.dataCorrupted(context) {
            let underlying = (context.underlyingError as? NSError)?.userInfo[NSDebugDescriptionErrorKey] as? String
            throw JSONLineError(message: "not valid JSON (\(underlying ?? context.debugDescription))")
        } catch {
            throw JSONLineError(message: "not valid JSON")
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
