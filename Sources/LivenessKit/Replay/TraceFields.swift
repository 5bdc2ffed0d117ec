/// A problem with one field of one record; the reader adds the file and line.
struct FieldError: Error {
    var message: String
}

/// One record's fields by name, from a CSV row or a JSON object. Accessors return `nil` when
/// the field is absent (no such column, an empty CSV field, a missing key or JSON `null`) and
/// throw when it is present with the wrong type.
protocol TraceFields {
    /// "column" (CSV) or "key" (JSON), for messages.
    var noun: String { get }
    /// A number (JSON number, or CSV text that parses as a decimal number).
    func number(_ name: String) throws(FieldError) -> Double?
    /// Text (JSON string, or the CSV field as is).
    func text(_ name: String) throws(FieldError) -> String?
    /// A 0/1 flag: JSON `true`/`false`/`1`/`0`, CSV `1`/`0`/`true`/`false`.
    func flag(_ name: String) throws(FieldError) -> Bool?
}

extension TraceFields {
    /// A number that must be present.
    func requiredNumber(_ name: String) throws(FieldError) -> Double {
        guard let v = try number(name) else { throw FieldError(message: "missing \(noun) '\(name)'") }
        return v
    }

    /// A whole number (written without a fraction), or `nil` when absent.
    func integer(_ name: String) throws(FieldError) -> Int? {
        guard let v = try number(name) else { return nil }
        guard let i = Int(exactly: v) else { throw FieldError(message: "\(noun) '\(name)' must be a whole number, not \(v)") }
        return i
    }

    /// A whole number that must be present.
    func requiredInteger(_ name: String) throws(FieldError) -> Int {
        guard let v = try integer(name) else { throw FieldError(message: "missing \(noun) '\(name)'") }
        return v
    }

    /// A flag that must be present.
    func requiredFlag(_ name: String) throws(FieldError) -> Bool {
        guard let v = try flag(name) else { throw FieldError(message: "missing \(noun) '\(name)'") }
        return v
    }
}

/// A CSV data row, its fields looked up through the header.
struct CSVRow: TraceFields {
    /// Column name → index, from the header.
    let columns: [String: Int]
    /// The row's fields.
    let fields: [Substring]
    var noun: String { "column" }

    private func raw(_ name: String) -> Substring? {
        guard let i = columns[name], i < fields.count else { return nil }
        let f = fields[i]
        return f.isEmpty ? nil : f
    }

    func number(_ name: String) throws(FieldError) -> Double? {
        guard let f = raw(name) else { return nil }
        guard let v = Double(f), v.isFinite else {
            throw FieldError(message: "column '\(name)' is not a number: '\(TraceReader.quoted(String(f)))'")
        }
        return v
    }

    func text(_ name: String) throws(FieldError) -> String? { raw(name).map(String.init) }

    func flag(_ name: String) throws(FieldError) -> Bool? {
        guard let f = raw(name) else { return nil }
        switch f {
        case "1", "true": return true
        case "0", "false": return false
        default: throw FieldError(message: "column '\(name)' must be 1 or 0, not '\(TraceReader.quoted(String(f)))'")
        }
    }
}

/// A JSON object's members.
struct JSONFields: TraceFields {
    let members: [String: JSONValue]
    var noun: String { "key" }

    private func value(_ name: String) -> JSONValue? {
        guard let v = members[name], !v.isNull else { return nil }
        return v
    }

    func number(_ name: String) throws(FieldError) -> Double? {
        guard let v = value(name) else { return nil }
        guard let d = v.double else { throw FieldError(message: "key '\(name)' must be a number, not \(v.typeName)") }
        return d
    }

    func text(_ name: String) throws(FieldError) -> String? {
        guard let v = value(name) else { return nil }
        guard case let .string(s) = v else { throw FieldError(message: "key '\(name)' must be a string, not \(v.typeName)") }
        return s
    }

    func flag(_ name: String) throws(FieldError) -> Bool? {
        switch value(name) {
        case nil: return nil
        case let .bool(b)?: return b
        case let v? where v.double == 1: return true
        case let v? where v.double == 0: return false
        case let v?: throw FieldError(message: "key '\(name)' must be 1, 0, true or false, not \(v.typeName == "a number" ? "\(try number(name)!)" : v.typeName)")
        }
    }

    /// A JSON boolean (strict: `1` is not accepted), or `nil` when absent.
    func bool(_ name: String) throws(FieldError) -> Bool? {
        guard let v = value(name) else { return nil }
        guard case let .bool(b) = v else { throw FieldError(message: "key '\(name)' must be true or false, not \(v.typeName)") }
        return b
    }

    /// An array of exactly `count` numbers, or `nil` when absent.
    func numbers(_ name: String, count: Int) throws(FieldError) -> [Double]? {
        guard let v = value(name) else { return nil }
        guard case let .array(items) = v else {
            throw FieldError(message: "key '\(name)' must be an array of \(count) numbers, not \(v.typeName)")
        }
        var result: [Double] = []
        for item in items {
            guard let d = item.double else {
                throw FieldError(message: "key '\(name)' must be an array of \(count) numbers; it holds \(item.typeName)")
            }
            result.append(d)
        }
        guard result.count == count else {
            throw FieldError(message: "key '\(name)' must hold \(count) numbers, not \(result.count)")
        }
        return result
    }
}
