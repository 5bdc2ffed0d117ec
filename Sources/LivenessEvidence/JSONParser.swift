/// A strict RFC 8259 JSON reader for `CanonicalJSON`. Foundation's parsers cannot serve here:
/// they turn large integers into doubles, drop the difference between `4` and `4.0`, keep one of
/// two duplicate keys silently and compare keys by canonical equivalence.
struct JSONParser {
    private let bytes: [UInt8]
    private let maximumDepth: Int
    private var index = 0
    private var depth = 0

    init(bytes: [UInt8], maximumDepth: Int) {
        self.bytes = bytes
        self.maximumDepth = maximumDepth
    }

    /// The one value of the text, with only whitespace around it.
    mutating func document() throws(CanonicalJSON.ParseError) -> CanonicalJSON.Value {
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { throw failure("a byte order mark; the text must be plain UTF-8") }
        skipWhitespace()
        if index == bytes.count { throw failure("no JSON value (the text is empty)") }
        let value = try self.value()
        skipWhitespace()
        if index != bytes.count { throw failure("text after the JSON value") }
        return value
    }

    /// A parse error at the current position; one found at the very end says the text is cut short.
    private func failure(_ message: String) -> CanonicalJSON.ParseError {
        let cut = index >= bytes.count && !bytes.isEmpty && !message.contains("truncated")
        return CanonicalJSON.ParseError(offset: index, message: cut ? message + " (the text ends there: truncated?)" : message)
    }

    private mutating func skipWhitespace() {
        while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
    }

    private mutating func value() throws(CanonicalJSON.ParseError) -> CanonicalJSON.Value {
        guard index < bytes.count else { throw failure("the text ends where a value should be (truncated?)") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try object()
        case UInt8(ascii: "["): return try array()
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
        default: throw failure("unexpected character '\(Self.show(bytes[index]))'")
        }
    }

    private static func show(_ byte: UInt8) -> String {
        (0x21...0x7E).contains(byte) ? String(UnicodeScalar(byte)) : "\\x" + String(byte, radix: 16)
    }

    private mutating func literal(_ word: String) throws(CanonicalJSON.ParseError) {
        let expected = Array(word.utf8)
        guard bytes[index...].starts(with: expected) else {
            // A literal cut by the end of the text is reported where the text ends (truncated),
            // like every other truncation; a wrong word where it starts.
            if expected.starts(with: bytes[index...]) { index = bytes.endIndex }
            throw failure("unexpected characters (expected \(word))")
        }
        index += expected.count
    }

    private mutating func enter() throws(CanonicalJSON.ParseError) {
        depth += 1
        if depth > maximumDepth { throw failure("nested more than \(maximumDepth) levels deep") }
    }

    private mutating func object() throws(CanonicalJSON.ParseError) -> CanonicalJSON.Value {
        try enter()
        defer { depth -= 1 }
        index += 1
        var members: [(key: String, value: CanonicalJSON.Value)] = []
        var seen = Set<[UInt8]>()
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return .object([])
        }
        while true {
            skipWhitespace()
            guard index < bytes.count else { throw failure("the text ends inside an object (truncated?)") }
            guard bytes[index] == UInt8(ascii: "\"") else { throw failure("expected a key in quotes") }
            let keyStart = index
            let key = try string()
            guard seen.insert(Array(key.utf8)).inserted else {
                index = keyStart
                throw failure("duplicate key \"\(key)\"")
            }
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw failure("expected ':' after a key") }
            index += 1
            skipWhitespace()
            members.append((key, try value()))
            skipWhitespace()
            guard index < bytes.count else { throw failure("the text ends inside an object (truncated?)") }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            if bytes[index] == UInt8(ascii: "}") { index += 1; break }
            throw failure("expected ',' or '}' in an object")
        }
        return .object(members.sorted { CanonicalJSON.precedes($0.key, $1.key) })
    }

    private mutating func array() throws(CanonicalJSON.ParseError) -> CanonicalJSON.Value {
        try enter()
        defer { depth -= 1 }
        index += 1
        var items: [CanonicalJSON.Value] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return .array([])
        }
        while true {
            skipWhitespace()
            items.append(try value())
            skipWhitespace()
            guard index < bytes.count else { throw failure("the text ends inside an array (truncated?)") }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            if bytes[index] == UInt8(ascii: "]") { index += 1; break }
            throw failure("expected ',' or ']' in an array")
        }
        return .array(items)
    }

    private mutating func string() throws(CanonicalJSON.ParseError) -> String {
        index += 1  // the opening quote
        var scalars = String.UnicodeScalarView()
        var pendingHigh: UInt32?
        func unpaired() -> CanonicalJSON.ParseError { failure("an unpaired UTF-16 surrogate escape") }
        while true {
            guard index < bytes.count else { throw failure("the text ends inside a string (truncated?)") }
            let byte = bytes[index]
            if byte == UInt8(ascii: "\\") {
                guard index + 1 < bytes.count else { throw failure("the text ends inside a string (truncated?)") }
                let escape = bytes[index + 1]
                index += 2
                var scalar: UInt32
                switch escape {
                case UInt8(ascii: "\""): scalar = 0x22
                case UInt8(ascii: "\\"): scalar = 0x5C
                case UInt8(ascii: "/"): scalar = 0x2F
                case UInt8(ascii: "b"): scalar = 0x08
                case UInt8(ascii: "f"): scalar = 0x0C
                case UInt8(ascii: "n"): scalar = 0x0A
                case UInt8(ascii: "r"): scalar = 0x0D
                case UInt8(ascii: "t"): scalar = 0x09
                case UInt8(ascii: "u"):
                    guard index + 4 <= bytes.count, let code = UInt32(String(decoding: bytes[index..<index + 4], as: UTF8.self), radix: 16),
                          bytes[index..<index + 4].allSatisfy({ $0 != UInt8(ascii: "+") && $0 != UInt8(ascii: "-") })
                    else { throw failure("a \\u escape needs four hex digits") }
                    index += 4
                    scalar = code
                default:
                    index -= 1
                    throw failure("an unknown escape '\\\(Self.show(escape))' in a string")
                }
                if let high = pendingHigh {
                    guard (0xDC00...0xDFFF).contains(scalar) else { throw unpaired() }
                    scalar = 0x10000 + ((high - 0xD800) << 10) + (scalar - 0xDC00)
                    pendingHigh = nil
                } else if (0xD800...0xDBFF).contains(scalar) {
                    pendingHigh = scalar
                    continue
                } else if (0xDC00...0xDFFF).contains(scalar) {
                    throw unpaired()
                }
                scalars.append(UnicodeScalar(scalar)!)
                continue
            }
            if pendingHigh != nil { throw unpaired() }
            if byte == UInt8(ascii: "\"") {
                index += 1
                return String(scalars)
            }
            if byte < 0x20 { throw failure("a control character (0x\(String(byte, radix: 16))) inside a string; it must be escaped") }
            if byte < 0x80 {
                scalars.append(UnicodeScalar(byte))
                index += 1
                continue
            }
            guard let (scalar, length) = Self.decodeUTF8(bytes, at: index) else { throw failure("bytes that are not UTF-8") }
            scalars.append(scalar)
            index += length
        }
    }

    /// One UTF-8 sequence (shortest form, no surrogates, at most U+10FFFF) at `i`.
    private static func decodeUTF8(_ b: [UInt8], at i: Int) -> (UnicodeScalar, Int)? {
        let lead = b[i]
        let length: Int, initial: UInt32, minimum: UInt32
        switch lead {
        case 0xC2...0xDF: (length, initial, minimum) = (2, UInt32(lead & 0x1F), 0x80)
        case 0xE0...0xEF: (length, initial, minimum) = (3, UInt32(lead & 0x0F), 0x800)
        case 0xF0...0xF4: (length, initial, minimum) = (4, UInt32(lead & 0x07), 0x10000)
        default: return nil
        }
        guard i + length <= b.count else { return nil }
        var value = initial
        for k in 1..<length {
            let c = b[i + k]
            guard c & 0xC0 == 0x80 else { return nil }
            value = value << 6 | UInt32(c & 0x3F)
        }
        guard value >= minimum, let scalar = UnicodeScalar(value) else { return nil }
        return (scalar, length)
    }

    private mutating func number() throws(CanonicalJSON.ParseError) -> CanonicalJSON.Value {
        let start = index
        func digits() -> Int {
            let from = index
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
            return index - from
        }
        let negative = bytes[index] == UInt8(ascii: "-")
        if negative { index += 1 }
        let integerStart = index
        let count = digits()
        guard count > 0 else { throw failure("a '-' without digits") }
        if count > 1 && bytes[integerStart] == UInt8(ascii: "0") {
            index = integerStart
            throw failure("a number with a leading zero")
        }
        var isInteger = true
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            isInteger = false
            guard digits() > 0 else { throw failure("a number without digits after its '.'") }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            isInteger = false
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard digits() > 0 else { throw failure("a number without digits in its exponent") }
        }
        if isInteger {
            let magnitude = String(decoding: bytes[integerStart..<index], as: UTF8.self)
            return .integer(negative && magnitude != "0" ? "-" + magnitude : magnitude)
        }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        guard let value = Double(text), value.isFinite else {
            index = start
            throw failure("a number too large for a double (\(text.prefix(40)))")
        }
        return .number(value)
    }
}
