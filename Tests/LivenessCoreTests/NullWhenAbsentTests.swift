import Foundation
import LivenessCore
import XCTest

/// `@NullWhenAbsent`: the report schema never omits a key. Read back with Foundation's own JSON
/// reader, which knows nothing of the wrapper.
final class NullWhenAbsentTests: XCTestCase {
    private struct Sample: Codable, Equatable {
        var kept: Int
        @NullWhenAbsent var maybe: Double?
        var omitted: Bool?
    }

    private func object(_ value: Sample) throws -> [String: Any] {
        try XCTUnwrap(try JSONSerialization.jsonObject(with: try JSONEncoder().encode(value)) as? [String: Any])
    }

    func testAnAbsentValueIsWrittenAsNullAndAPlainOptionalIsLeftOut() throws {
        let absent = try object(Sample(kept: 1, maybe: nil, omitted: nil))
        XCTAssertEqual(Set(absent.keys), ["kept", "maybe"])
        XCTAssertTrue(absent["maybe"] is NSNull)
        let present = try object(Sample(kept: 1, maybe: 0.25, omitted: true))
        XCTAssertEqual(present["maybe"] as? Double, 0.25)
        XCTAssertEqual(present["omitted"] as? Bool, true)
    }

    func testNullAndAMissingKeyBothReadAsAbsent() throws {
        for text in [#"{"kept": 2, "maybe": null}"#, #"{"kept": 2}"#] {
            let decoded = try JSONDecoder().decode(Sample.self, from: Data(text.utf8))
            XCTAssertEqual(decoded, Sample(kept: 2, maybe: nil, omitted: nil), text)
        }
        let value = try JSONDecoder().decode(Sample.self, from: Data(#"{"kept": 3, "maybe": 1.5}"#.utf8))
        XCTAssertEqual(value.maybe, 1.5)
        XCTAssertThrowsError(try JSONDecoder().decode(Sample.self, from: Data(#"{"kept": 3, "maybe": "x"}"#.utf8)))
    }
}
