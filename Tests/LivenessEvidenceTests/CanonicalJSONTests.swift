import Foundation
import LivenessEvidence
import XCTest

/// The canonical form against a hand-computed vector and against Python's
/// `json.dumps(json.loads(text), sort_keys=True, separators=(',', ':'), ensure_ascii=False)`.
final class CanonicalJSONTests: XCTestCase {
    private func canonical(_ text: String) throws -> String {
        String(decoding: try CanonicalJSON.canonicalize(Array(text.utf8)), as: UTF8.self)
    }

    /// Worked out by hand from the rules in docs/signing.md: keys in code point order ("" < "Z" <
    /// "a" < "aa" < "b" < "~" < "é"), integers exact (-0 is 0), other numbers as the shortest
    /// double in Python's layout, only `"` `\` and control characters escaped.
    func testHandComputedVector() throws {
        let text = #"""
            { "b" : [1, 4.0, -0, 1E5, 1e-7, 0.0001, 123.4560, 18446744073709551616, 1.5e16, 2.5E-3, -7.25e+2],
              "a" : "\u00e9 é \ud83d\ude00 \u0001\u001f \t\/ \"q\" \\ \u007f",
              "é": null, "Z": true, "aa": false, "~": {}, "": [] }
            """#
        let expected = "{\"\":[],\"Z\":true,\"a\":\"é é 😀 \\u0001\\u001f \\t/ \\\"q\\\" \\\\ \u{7F}\",\"aa\":false,"
            + "\"b\":[1,4.0,0,100000.0,1e-07,0.0001,123.456,18446744073709551616,1.5e+16,0.0025,-725.0],\"~\":{},\"é\":null}"
        XCTAssertEqual(try canonical(text), expected)
    }

    func testNumberLayoutAtTheBoundaries() throws {
        // Decimal exponent -4 and 15 are positional, -5 and 16 scientific (Python's repr).
        XCTAssertEqual(try canonical("[0.0001,0.00001,1e15,1e16,123456789012345.6,5e-324,1.7976931348623157e308,-0.0,0.0]"),
                       "[0.0001,1e-05,1000000000000000.0,1e+16,123456789012345.6,5e-324,1.7976931348623157e+308,-0.0,0.0]")
    }

    func testRejectsWhatHasNoSingleMeaning() {
        let cases: [(String, String)] = [
            (#"{"a":1,"a":2}"#, "duplicate key"),
            (#"{"é":1,"é":2}"#, "duplicate key"),
            (#"["\ud800"]"#, "unpaired"),
            (#"["\udc00x"]"#, "unpaired"),
            ("[1] 2", "text after"),
            ("[1e400]", "too large"),
            ("\u{FEFF}{}", "byte order mark"),
            ("[01]", "leading zero"),
            ("[\"a\u{1}\"]", "control character"),
            (#"{"a":"#, "truncated"),
            ("", "empty"),
            ("[1.]", "digits"),
            ("[NaN]", "unexpected"),
            (String(repeating: "[", count: 65) + String(repeating: "]", count: 65), "nested"),
        ]
        for (text, fragment) in cases {
            XCTAssertThrowsError(try CanonicalJSON.canonicalize(Array(text.utf8)), text) { error in
                XCTAssertTrue("\(error)".contains(fragment), "\(text): \(error)")
            }
        }
        XCTAssertThrowsError(try CanonicalJSON.canonicalize([0x5B, 0x22, 0xC3, 0x28, 0x22, 0x5D]))  // invalid UTF-8
        XCTAssertThrowsError(try CanonicalJSON.canonicalize([0x5B, 0x22, 0xC0, 0xAF, 0x22, 0x5D]))  // overlong "/"
    }

    func testPrettyFormReadsBackAsTheSameValue() throws {
        let value = try CanonicalJSON.parse(Array(#"{"b":[1,{"c":[]},2.5e-9],"a":{"x":"\n"},"d":{}}"#.utf8))
        let pretty = CanonicalJSON.pretty(value)
        XCTAssertTrue(String(decoding: pretty, as: UTF8.self).contains("\n  \"a\": {\n    \"x\": \"\\n\"\n  },"))
        XCTAssertEqual(CanonicalJSON.encode(try CanonicalJSON.parse(pretty)), CanonicalJSON.encode(value))
    }

    /// 400 random documents (random doubles over the whole range, written in several spellings,
    /// huge integers, strings of control, non-ASCII and astral characters raw or escaped, keys that
    /// order differently by code point and by UTF-16) canonicalised here and by Python.
    func testMatchesPythonOnRandomDocuments() throws {
        var generator = SplitMix(seed: 0x5EED)
        var lines: [String] = []
        for _ in 0..<400 { lines.append(randomValue(&generator, depth: 0, forceObject: true)) }
        let program = """
            import json, sys
            for line in sys.stdin.buffer.read().decode('utf-8').split('\\n'):
                if line:
                    sys.stdout.buffer.write(json.dumps(json.loads(line), sort_keys=True, separators=(',', ':'), ensure_ascii=False).encode('utf-8') + b'\\n')
            """
        let python = try ExternalTools.python(program, input: Data(lines.joined(separator: "\n").utf8))
        XCTAssertEqual(python.status, 0, python.errors)
        let expected = python.text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
        XCTAssertEqual(expected.count, lines.count)
        var compared = 0
        for (line, reference) in zip(lines, expected) {
            let ours = try canonical(line)
            XCTAssertEqual(ours, reference, "input: \(line)")
            compared += 1
        }
        XCTAssertEqual(compared, 400)
    }

    // MARK: Random documents

    private struct SplitMix: RandomNumberGenerator {
        var state: UInt64
        init(seed: UInt64) { state = seed }
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    private func randomValue(_ g: inout SplitMix, depth: Int, forceObject: Bool = false) -> String {
        let kind = forceObject ? 6 : Int.random(in: 0..<(depth < 3 ? 8 : 5), using: &g)
        switch kind {
        case 0: return ["true", "false", "null"].randomElement(using: &g)!
        case 1, 2: return randomNumber(&g)
        case 3, 4: return randomString(&g)
        case 5:
            let items = (0..<Int.random(in: 0...4, using: &g)).map { _ in randomValue(&g, depth: depth + 1) }
            return "[" + items.joined(separator: [",", ", ", " ,\t"].randomElement(using: &g)!) + "]"
        default:
            var keys: [String] = []
            var seen = Set<[Unicode.Scalar]>()
            for _ in 0..<Int.random(in: 0...6, using: &g) {
                let key = randomScalars(&g)
                if seen.insert(key).inserted { keys.append(quote(key, &g)) }
            }
            let members = keys.map { $0 + [":", " : "].randomElement(using: &g)! + randomValue(&g, depth: depth + 1) }
            return "{" + members.joined(separator: ",") + "}"
        }
    }

    private func randomNumber(_ g: inout SplitMix) -> String {
        switch Int.random(in: 0..<7, using: &g) {
        case 0:  // an integer of up to 40 digits
            let digits = (0..<Int.random(in: 1...40, using: &g)).map { _ in String(Int.random(in: 0...9, using: &g)) }.joined()
            let trimmed = digits.drop { $0 == "0" }
            return (Bool.random(using: &g) ? "-" : "") + (trimmed.isEmpty ? "0" : String(trimmed))
        case 1:  // any finite double, shortest spelling
            var d: Double
            repeat { d = Double(bitPattern: g.next()) } while !d.isFinite
            return "\(d)"
        case 2:  // any finite double, 17 significant digits (not the shortest)
            var d: Double
            repeat { d = Double(bitPattern: g.next()) } while !d.isFinite
            return String(format: "%.17g", d).replacingOccurrences(of: "inf", with: "1")
        case 3:  // a measurement with 6 decimals, as reports have
            return String(format: "%.6f", Double.random(in: -400...400, using: &g))
        case 4:  // small and large magnitudes around the layout boundaries
            let exponent = Int.random(in: -8...20, using: &g)
            return "\(Int.random(in: 1...999, using: &g))e\(exponent)"
        case 5:
            return ["0.0", "-0.0", "0e0", "1E+2", "1.0", "100.000", "0.1", "2.5e-3"].randomElement(using: &g)!
        default:
            return String(format: "%.3f", Double.random(in: 0...1e17, using: &g))
        }
    }

    private func randomScalars(_ g: inout SplitMix) -> [Unicode.Scalar] {
        let pools: [ClosedRange<UInt32>] = [0x00...0x1F, 0x20...0x7E, 0x7F...0xFF, 0x100...0x7FF, 0xE000...0xFFFD, 0x1F600...0x1F64F,
                                            0x10000...0x10FFFF]
        return (0..<Int.random(in: 0...8, using: &g)).compactMap { _ in
            Unicode.Scalar(UInt32.random(in: pools.randomElement(using: &g)!, using: &g))
        }
    }

    private func randomString(_ g: inout SplitMix) -> String { quote(randomScalars(&g), &g) }

    /// JSON string text, written independently of the code under test: each character raw or as
    /// a \u escape (surrogate pairs above U+FFFF), at random; those that must be escaped always are.
    private func quote(_ scalars: [Unicode.Scalar], _ g: inout SplitMix) -> String {
        var out = "\""
        for s in scalars {
            let mustEscape = s.value < 0x20 || s == "\"" || s == "\\"
            if mustEscape || Int.random(in: 0..<4, using: &g) == 0 {
                if s.value > 0xFFFF {
                    let v = s.value - 0x10000
                    out += String(format: "\\u%04X\\u%04x", 0xD800 + (v >> 10), 0xDC00 + (v & 0x3FF))
                } else {
                    out += String(format: Bool.random(using: &g) ? "\\u%04x" : "\\u%04X", s.value)
                }
            } else {
                out.unicodeScalars.append(s)
            }
        }
        return out + "\""
    }
}
