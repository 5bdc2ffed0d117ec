import Foundation
import LivenessCore
import TestSupport
import XCTest

/// docs/hardening.md prints the policy bounds table; it must say what the code does.
final class HardeningDocTests: XCTestCase {
    func testTheDocumentedBoundsAreTheTable() throws {
        let doc = try String(contentsOf: Fixtures.packageRoot.appendingPathComponent("docs/hardening.md"), encoding: .utf8)
        var rows: [String: [String]] = [:]
        for line in doc.split(separator: "\n") where line.hasPrefix("| `") {
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count == 5 else { continue }
            rows[cells[0].trimmingCharacters(in: CharacterSet(charactersIn: "`"))] = cells
        }
        for bound in LivenessPolicy.bounds {
            let cells = try XCTUnwrap(rows[bound.key], "docs/hardening.md has no row for \(bound.key)")
            let lo = PolicyBound.format(bound.range.lowerBound), hi = PolicyBound.format(bound.range.upperBound)
            XCTAssertEqual(cells[1], "\(lo) … \(hi)", bound.key)
            XCTAssertEqual(cells[2], bound.unit, bound.key)
            XCTAssertEqual(cells[3], PolicyBound.format(bound.reference), bound.key)
            if let weaker = bound.weaker {
                XCTAssertTrue(cells[4].hasPrefix("\(weaker.rawValue) \(PolicyBound.format(bound.reference))"), "\(bound.key): \(cells[4])")
                XCTAssertEqual(cells[4].hasSuffix("(spec)"), bound.isSpecNumber, bound.key)
            } else if let at = bound.weakerAt {
                XCTAssertTrue(cells[4].hasPrefix("\(PolicyBound.format(at)) ("), "\(bound.key): \(cells[4])")
            } else {
                XCTAssertTrue(cells[4].hasPrefix("—"), "\(bound.key): \(cells[4])")
            }
            if bound.weaker != nil, let at = bound.weakerAt {
                XCTAssertTrue(cells[4].contains("or \(PolicyBound.format(at)) ("), "\(bound.key): \(cells[4])")
            }
        }
        XCTAssertEqual(Set(rows.keys).intersection(LivenessPolicy.bounds.map(\.key)).count, LivenessPolicy.bounds.count)
    }
}
