/// The canonical encoding of JSON that signatures are computed over (`docs/signing.md`,
/// "Canonical form"): the same value always gives the same bytes, whatever whitespace, key order
/// or number spelling the file it was read from used. It is exactly what Python's
///
///     json.dumps(json.loads(text), sort_keys=True, separators=(',', ':'), ensure_ascii=False).encode('utf-8')
///
/// gives for the JSON values it accepts, so a verifier in another language can recompute it:
///
/// * no whitespace outside strings; object members as `"key":value` joined by `,`;
/// * object members sorted by key, comparing Unicode code points (UTF-8 bytes); duplicate keys
///   are an error;
/// * strings in UTF-8, escaping only `"` `\` and U+0000…U+001F: `\b \f \n \r \t` and `\u00xx`
///   (lowercase hex) for the other control characters; everything else (`/`, DEL, any
///   non-ASCII character) as is;
/// * a number written without fraction or exponent is an integer, written in decimal with no
///   sign but `-`, exactly whatever its size (`-0` is `0`);
/// * any other number is the nearest IEEE-754 double, written as the shortest decimal that reads
///   back as that double: positional when its decimal exponent is in −4…15 (at least one digit after
///   the point, `4.0`, `0.0001`), otherwise `d.ddde±XX` with at least two exponent digits
///   (`1e-05`, `1.5e+16`); a number out of the double range is an error;
/// * `true`, `false`, `null`.
///
/// The input must be UTF-8 (no byte order mark), RFC 8259 JSON, nested at most `maximumDepth`
/// levels, with no unpaired surrogate escape.
public enum CanonicalJSON {
    /// The deepest nesting accepted (a report is 3 levels deep).
    public static let maximumDepth = 64

    /// A parsed JSON value that keeps what canonicalisation needs: integers as their exact decimal
    /// text, object members in canonical order.
    public indirect enum Value: Sendable, Equatable {
        case null
        case bool(Bool)
        /// An integer, as canonical decimal text (`-12`, `0`, `18446744073709551615`).
        case integer(String)
        /// A number with a fraction or exponent: the nearest double (finite).
        case number(Double)
        case string(String)
        case array([Value])
        /// Members sorted by key in code point order, no duplicate keys.
        case object([(key: String, value: Value)])

        public static func == (a: Value, b: Value) -> Bool { CanonicalJSON.encode(a) == CanonicalJSON.encode(b) }

        /// An object's member, nil when absent or not an object.
        public subscript(key: String) -> Value? {
            guard case .object(let members) = self else { return nil }
            return members.first { $0.key.utf8.elementsEqual(key.utf8) }?.value
        }

        /// The string, when this is a string.
        public var string: String? { if case .string(let s) = self { return s } else { return nil } }

        /// An object from members in any order (sorted here); nil when two keys are equal.
        public static func sortedObject(_ members: [(String, Value)]) -> Value? {
            let sorted = members.map { (key: $0.0, value: $0.1) }.sorted { CanonicalJSON.precedes($0.key, $1.key) }
            for i in sorted.indices.dropFirst() where sorted[i].key.utf8.elementsEqual(sorted[i - 1].key.utf8) { return nil }
            return .object(sorted)
        }

        /// This object without the member `key`.
        public func removing(_ key: String) -> Value {
            guard case .object(let members) = self else { return self }
            return .object(members.filter { !$0.key.utf8.elementsEqual(key.utf8) })
        }
    }

    /// Parses JSON text.
    /// - Throws: `CanonicalJSON.ParseError` saying what is wrong and at which byte offset.
    public static func parse(_ bytes: [UInt8]) throws(ParseError) -> Value {
        var parser = JSONParser(bytes: bytes, maximumDepth: maximumDepth)
        return try parser.document()
    }

    /// The canonical bytes of `text` (see the type's documentation).
    public static func canonicalize(_ text: [UInt8]) throws(ParseError) -> [UInt8] { encode(try parse(text)) }

    /// The canonical bytes of a value.
    public static func encode(_ value: Value) -> [UInt8] {
        var out = [UInt8]()
        write(value, to: &out, indent: nil, level: 0)
        return out
    }

    /// The value as readable JSON: the canonical form with line breaks and two-space indentation
    /// (`"key": value`), ending in a newline. Parsing it gives the same value back.
    public static func pretty(_ value: Value) -> [UInt8] {
        var out = [UInt8]()
        write(value, to: &out, indent: 2, level: 0)
        out.append(0x0A)
        return out
    }

    /// Code point (UTF-8 byte) order of keys, as Python's `sort_keys` and unlike Swift's `<` on
    /// `String`, which compares canonically equivalent strings as equal.
    static func precedes(_ a: String, _ b: String) -> Bool { a.utf8.lexicographicallyPrecedes(b.utf8) }

    /// What is wrong with a JSON text.
    public struct ParseError: Error, CustomStringConvertible, Sendable, Equatable {
        /// Byte offset in the text where the problem was found.
        public var offset: Int
        /// What is wrong, e.g. "duplicate key \"status\"".
        public var message: String
        public var description: String { "\(message) at byte \(offset)" }
    }

    // MARK: Writing

    private static func write(_ value: Value, to out: inout [UInt8], indent: Int?, level: Int) {
        func newline(_ level: Int) {
            guard let indent else { return }
            out.append(0x0A)
            out += [UInt8](repeating: 0x20, count: indent * level)
        }
        switch value {
        case .null: out += Array("null".utf8)
        case .bool(let b): out += Array((b ? "true" : "false").utf8)
        case .integer(let digits): out += Array(digits.utf8)
        case .number(let d): out += Array(NumberText.shortest(d).utf8)
        case .string(let s): writeString(s, to: &out)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (i, item) in items.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                newline(level + 1)
                write(item, to: &out, indent: indent, level: level + 1)
            }
            if !items.isEmpty { newline(level) }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            for (i, member) in members.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                newline(level + 1)
                writeString(member.key, to: &out)
                out.append(UInt8(ascii: ":"))
                if indent != nil { out.append(0x20) }
                write(member.value, to: &out, indent: indent, level: level + 1)
            }
            if !members.isEmpty { newline(level) }
            out.append(UInt8(ascii: "}"))
        }
    }

    private static func writeString(_ s: String, to out: inout [UInt8]) {
        let hex = Array("0123456789abcdef".utf8)
        out.append(UInt8(ascii: "\""))
        for byte in s.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out += [0x5C, 0x22]
            case UInt8(ascii: "\\"): out += [0x5C, 0x5C]
            case 0x08: out += [0x5C, UInt8(ascii: "b")]
            case 0x0C: out += [0x5C, UInt8(ascii: "f")]
            case 0x0A: out += [0x5C, UInt8(ascii: "n")]
            case 0x0D: out += [0x5C, UInt8(ascii: "r")]
            case 0x09: out += [0x5C, UInt8(ascii: "t")]
            case 0x00..<0x20: out += [0x5C, UInt8(ascii: "u"), 0x30, 0x30, hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}

/// Numbers as the canonical form writes them.
enum NumberText {
    /// The shortest decimal that reads back as `value` (finite), positional when the decimal
    /// exponent is in −4…15, else scientific with a signed exponent of at least two digits: the
    /// format of Python's `repr(float)`. The digits come from Swift's `description`, which is
    /// also shortest-round-trip (closest of the shortest); only the layout is done here.
    static func shortest(_ value: Double) -> String {
        precondition(value.isFinite, "the canonical form has no non-finite numbers")
        let sign = value.sign == .minus ? "-" : ""
        if value == 0 { return sign + "0.0" }
        let (digits, point) = decompose(value.magnitude.description)
        // value = 0.d1d2d3… × 10^point
        if point <= -4 || point > 16 {
            let exponent = point - 1
            var text = String(digits.first!)
            if digits.count > 1 { text += "." + digits.dropFirst() }
            let magnitude = String(abs(exponent))
            return sign + text + "e" + (exponent < 0 ? "-" : "+") + (magnitude.count < 2 ? "0" : "") + magnitude
        }
        if point <= 0 { return sign + "0." + String(repeating: "0", count: -point) + digits }
        if point >= digits.count { return sign + digits + String(repeating: "0", count: point - digits.count) + ".0" }
        let cut = digits.index(digits.startIndex, offsetBy: point)
        return sign + digits[..<cut] + "." + digits[cut...]
    }

    /// The significant digits (no leading or trailing zeros) and decimal point position of a
    /// positive number's text such as `123.45`, `0.0001`, `1e-05` or `1.5e+16`.
    static func decompose(_ text: String) -> (digits: String, point: Int) {
        let parts = text.lowercased().split(separator: "e", maxSplits: 1)
        let exponent = parts.count > 1 ? Int(parts[1])! : 0
        let mantissa = parts[0].split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        let whole = String(mantissa[0])
        let fraction = mantissa.count > 1 ? String(mantissa[1]) : ""
        var all = Substring(whole + fraction)
        var point = whole.count + exponent
        while all.first == "0" { all.removeFirst(); point -= 1 }
        while all.last == "0" { all.removeLast() }
        return (String(all), point)
    }
}
