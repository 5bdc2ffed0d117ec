import Foundation
import LivenessCommands
import LivenessCore
import LivenessKit
import TestSupport
import XCTest

/// The README and the docs read against what the code does, so that their counts and tables
/// cannot drift: the command rows are the usage lines the parsers are made from, the counts of
/// generated cases are the recipes on disk, the policy's key count is the encoded policy's, and
/// the trace table's column order is the header `liveness trace` writes.
final class DocConsistencyTests: XCTestCase {
    private func read(_ path: String) throws -> String {
        try String(contentsOf: Fixtures.packageRoot.appendingPathComponent(path), encoding: .utf8)
    }

    private func numbers(_ pattern: String, in text: String) throws -> [Int] {
        let regex = try NSRegularExpression(pattern: pattern)
        return regex.matches(in: text, range: NSRange(text.startIndex..., in: text)).compactMap { match in
            Range(match.range(at: 1), in: text).flatMap { Int(text[$0]) }
        }
    }

    func testTheREADMECommandRowsAreTheUsageLines() throws {
        let rows = try read("README.md").split(separator: "\n").map(String.init).filter { $0.hasPrefix("| `liveness") }
        let specs = LivenessCLI.specs.values.sorted { $0.name < $1.name } + [BenchmarkOptions.spec]
        for spec in specs {
            let line = "\(spec.commandLine) \(spec.usage)".replacingOccurrences(of: "|", with: "\\|")
            XCTAssertEqual(rows.filter { $0.hasPrefix("| `\(line)` |") }.count, 1,
                           "README's commands table has no row (or several) starting with `\(line)`")
        }
        XCTAssertEqual(rows.count, specs.count, "README rows for commands that do not exist:\n" + rows.joined(separator: "\n"))
    }

    func testEveryCountOfGeneratedCasesIsTheNumberOfRecipes() throws {
        let folder = Fixtures.packageRoot.appendingPathComponent("Recordings/cases")
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path)
            .filter { FileManager.default.fileExists(atPath: folder.appendingPathComponent("\($0)/recipe.json").path) }
        // A case runs once per rotation source its expected.json lists (default: the video estimate),
        // and once more per source with the recapture check off when it says `withRecaptureOff`.
        var runs = 0
        for name in names {
            let data = try Data(contentsOf: folder.appendingPathComponent("\(name)/expected.json"))
            let expected = try XCTUnwrap(try JSONSerialization.jsonObject(with: data) as? [String: Any], name)
            let sources = (expected["sources"] as? [String])?.count ?? 1
            runs += sources * (expected["withRecaptureOff"] == nil ? 1 : 2)
        }
        XCTAssertGreaterThan(names.count, 0)
        var checked = 0
        for file in ["README.md", "docs/generator.md", "docs/regression.md"] {
            let text = try read(file)
            for n in try numbers(#"(\d+) generated cases"#, in: text) + numbers(#"all (\d+) cases"#, in: text) {
                XCTAssertEqual(n, names.count, "\(file) says \(n) generated cases; Recordings/cases has \(names.count)")
                checked += 1
            }
            for n in try numbers(#"(\d+) generated runs"#, in: text) {
                XCTAssertEqual(n, runs, "\(file) says \(n) generated runs; the cases' expected.json give \(runs)")
                checked += 1
            }
        }
        XCTAssertGreaterThanOrEqual(checked, 4, "the docs no longer state the counts this test reads")
    }

    func testTheReportSchemaCountsAndShowsEveryPolicyKey() throws {
        let encoded = try JSONSerialization.jsonObject(with: JSONEncoder().encode(LivenessPolicy()))
        let keys = Set(try XCTUnwrap(encoded as? [String: Any]).keys)
        let schema = try read("docs/report-schema.md")
        XCTAssertEqual(try numbers(#"\*\*all (\d+) keys\*\*"#, in: schema), [keys.count],
                       "docs/report-schema.md must say the policy has all \(keys.count) keys")
        // The example report: the first JSON block after "## Example".
        let example = try XCTUnwrap(schema.range(of: "## Example"))
        let open = try XCTUnwrap(schema.range(of: "```json\n", range: example.upperBound..<schema.endIndex))
        let close = try XCTUnwrap(schema.range(of: "\n```", range: open.upperBound..<schema.endIndex))
        let report = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(schema[open.upperBound..<close.lowerBound].utf8)) as? [String: Any])
        let policy = try XCTUnwrap(report["policy"] as? [String: Any])
        XCTAssertEqual(Set(policy.keys), keys, "the example report's policy keys differ from LivenessPolicy's")
    }

    func testTheTraceTableListsTheColumnsInTheOrderTraceWritesThem() throws {
        let image = try Fixtures.generated("astronaut.png")
        let run = try Fixtures.runLiveness(["trace", image])
        XCTAssertEqual(run.status, 0, run.errors)
        let header = try XCTUnwrap(run.output.split(separator: "\n").first).split(separator: ",").map(String.init)
        // The table of docs/trace-formats.md: each row's first cell names its columns in backticks.
        let doc = try read("docs/trace-formats.md")
        let start = try XCTUnwrap(doc.range(of: "| column | unit | read on replay | meaning |"))
        var columns: [String] = []
        for line in doc[start.upperBound...].split(separator: "\n", omittingEmptySubsequences: false).dropFirst(2) {
            guard line.hasPrefix("|") else { break }
            let cell = line.split(separator: "|", omittingEmptySubsequences: true).first ?? ""
            let names = cell.split(separator: "`").enumerated().filter { $0.offset % 2 == 1 }.map { String($0.element) }
            if names.first?.hasPrefix("lm") == true { continue }  // the landmark columns, only with --landmarks
            columns += names
        }
        XCTAssertEqual(columns, header, "docs/trace-formats.md's table is not the header `liveness trace` writes")
    }
}
