import Foundation

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
        do {
            return try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
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
