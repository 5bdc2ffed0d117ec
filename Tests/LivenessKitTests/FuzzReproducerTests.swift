import Foundation
import LivenessCore
import LivenessKit
import XCTest

/// Every finding of the fuzzers (Tools/fuzz.sh, docs/hardening.md "Fuzzing") kept as a test:
/// the input that failed, and what must happen with it now. The same inputs are in the fuzz
/// seed corpus (Tools/Fuzz/corpus/<target>/repro-*).
final class FuzzReproducerTests: XCTestCase {
    private func bytes(_ base64: String) throws -> [UInt8] { [UInt8](try XCTUnwrap(Data(base64Encoded: base64))) }

    /// fuzz-policy, crash-7a67daee: a policy of 21 keys with 8 problems (mangled names such as "eyeBaClosureThreshold",
    /// "eyeMaxonDeScipds"). The message listed every problem: 638 characters, growing with
    /// the file (a 64 KiB file of unknown keys gives thousands). Now the first three are listed
    /// and the rest counted.
    func testManyUnknownKeysGiveAShortMessage() throws {
        let input = try bytes("ewogICJibGlua0Nsb3N1cmVUaHJlc2hvbGQiOiAwLjIyLAogICJleWVCYUNsb3N1cmVUaHJlc2hvbGQiOiAwLjIyLAogICJleWVCYXNlbGluZVBlcmNlbnRpbGUiOiAwLjc1LAogICJleWVCYXNlbWluZVdpbmRvd1NlY29uZHMiOiAxLAogICJleWVDbG9zdXJlRGVhZFpvbmUiOiAwLjA2LAogICJleWVDbG9zdXJlU2NhbGUiOiAxLAogICJleWVEaXBDb25maXJtU2Ukb25kcyI6IDAuNTQ1LAogICJleWVEaXBPbnNldExldmVsIjogMC4wOCwKICAiZXllTWF4b25EZVNjaXBkcyI6IDAuNDUsCiAgImV5ZVdhcm11cEZyYW1lcyI6IDUsCiAgImZyYW1lZEZyYW1lc1JlcXVpcmVkIjogMywKICAiZnJhbWluZ1RpbWVvdXRTZWNvbmRzIjogMi41LAogICJndWlkZUNlbnRlclgiOiAwLjUsCiAgImd1aWRlQ2VudGVyWSI6IDAuNSwKICAiZ3VpZGVSYWRpdXsiOiAwLjMsCiAgInJvdGF0aW9uTGltaXREZWdyZWVzb3JlZWNTUG5kIjogMTAsCiAgInNjYW5DYXBTZWZhbHNlIjogMjAsCiAgInNldHRsZVNlY29uZHMiOiAwLjMsCiAgInR1cm5IZGxkRnJhbWVzIjogNCwKICAidHVybllhd0RlZ3JlZXMiOiA3LjUsCiAgInlhd0Jhc2VsaW5lV2luZG93U2Vjb25kcyI6IDAuMgp9Cg==")
        XCTAssertThrowsError(try PolicyFile.parse(input, path: "fuzz")) { error in
            let message = "\(error)"
            XCTAssertLessThan(message.count, 600, message)
            XCTAssertTrue(message.hasPrefix("fuzz: unknown policy key 'eyeBaClosureThreshold' (did you mean 'eyeSlowClosureThreshold'?); "), message)
            XCTAssertTrue(message.hasSuffix("; and 5 more problems"), message)
        }
        // A file of 2000 unknown keys: still one short message.
        let many = "{" + (0..<2000).map { "\"k\($0)\": 1" }.joined(separator: ", ") + "}"
        XCTAssertThrowsError(try PolicyFile.parse(Array(many.utf8), path: "p")) { error in
            XCTAssertLessThan("\(error)".count, 300)
            XCTAssertTrue("\(error)".hasSuffix("; and 1997 more problems"), "\(error)")
        }
    }
}
