import LivenessEvidence
import XCTest

/// HMAC-SHA256 (what webhooks are signed with) against the test vectors of RFC 4231, which
/// include a key longer than SHA-256's block (hashed first) and a message given in parts.
final class HMACTests: XCTestCase {
    private func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    func testRFC4231Vectors() {
        XCTAssertEqual(hex(HMACSHA256.code(key: [UInt8](repeating: 0x0B, count: 20), Array("Hi There".utf8))),
                       "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7")
        XCTAssertEqual(hex(HMACSHA256.code(key: Array("Jefe".utf8), Array("what do ya want ".utf8), Array("for nothing?".utf8))),
                       "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        XCTAssertEqual(hex(HMACSHA256.code(key: [UInt8](repeating: 0xAA, count: 131),
                                           Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8))),
                       "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54")
    }
}
