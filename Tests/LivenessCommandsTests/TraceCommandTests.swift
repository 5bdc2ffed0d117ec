import Foundation
import LivenessCommands
import LivenessKit
import TestSupport
import XCTest

final class TraceCommandTests: XCTestCase {
    /// Runs `liveness trace` in-process into a temporary CSV and returns its rows as dictionaries.
    private func trace(_ input: String, _ extra: [String] = []) throws -> (status: Int32, rows: [[String: String]], console: Console) {
        let out = try Fixtures.temporaryDirectory(self).appendingPathComponent("trace.csv").path
        let console = Console.capturing()
        let status = LivenessCLI.run(["trace", input, "--output", out] + extra, console: console)
        guard status == 0 else { return (status, [], console) }
        let lines = try String(contentsOfFile: out, encoding: .utf8).split(separator: "\n").map(String.init)
        let header = lines[0].split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        let rows = lines.dropFirst().map { line -> [String: String] in
            let fields = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            XCTAssertEqual(fields.count, header.count, line)
            return Dictionary(uniqueKeysWithValues: zip(header, fields))
        }
        return (status, rows, console)
    }

    func testHeaderHasTheDocumentedColumns() throws {
        let (status, rows, _) = try trace(try Fixtures.generated("astronaut.png"))
        XCTAssertEqual(status, 0)
        let required = ["frame", "seconds", "face", "faces", "box_x", "box_y", "box_w", "box_h", "face_center_x",
                        "face_center_y", "ear_left", "ear_right", "yaw_degrees", "line_of_sight_yaw_degrees", "pitch_degrees", "roll_degrees",
                        "eye_distance_px", "eye_closure_left", "eye_closure_right", "device_rotation_dps",
                        "rotation_source", "credited", "phase", "hud"]
        for column in required { XCTAssertNotNil(rows.first?[column], column) }
    }

    func testAstronautPortraitHasExactlyOneFace() throws {
        let (_, rows, _) = try trace(try Fixtures.shared("astronaut.png"))
        XCTAssertEqual(rows.count, 1)
        XCTAssertEqual(rows[0]["face"], "1")
        XCTAssertEqual(rows[0]["faces"], "1")
        // The real face is in the upper half, left of centre; the patch and badge are lower.
        XCTAssertLessThan(Double(rows[0]["face_center_y"]!)!, 0.35)
    }

    func testDogsHaveNoFace() throws {
        let (_, rows, _) = try trace(try Fixtures.shared("dlib-dogs-noface.jpg"))
        XCTAssertEqual(rows.count, 1)
        XCTAssertEqual(rows[0]["face"], "0")
        XCTAssertEqual(rows[0]["faces"], "0")
        XCTAssertEqual(rows[0]["hud"], "noFace")
    }

    func testPortraitPhoneSelfieIsUprightWithAFaceOnNearlyEveryFrame() throws {
        let (_, rows, _) = try trace(try Fixtures.shared("lp-d13-phone-selfie-glasses.mp4"))
        XCTAssertEqual(rows.count, 352, "one record per frame (ffprobe counts 352)")
        XCTAssertEqual(rows[0]["frame_width"], "720")
        XCTAssertEqual(rows[0]["frame_height"], "1280")
        let withFace = rows.filter { $0["face"] == "1" }.count
        XCTAssertGreaterThanOrEqual(Double(withFace) / Double(rows.count), 0.95)
        let seconds = rows.map { Double($0["seconds"]!)! }
        XCTAssertEqual(seconds.first, 0)
        for (a, b) in zip(seconds, seconds.dropFirst()) { XCTAssertGreaterThan(b, a) }
        XCTAssertEqual(rows.map { Int($0["frame"]!)! }, Array(0..<352))
    }

    func testTruncatedAVIEndsCleanly() throws {
        let (status, rows, console) = try trace(try Fixtures.shared("opencv-tree-noface-truncated.avi"))
        XCTAssertEqual(status, 0, console.errors)
        XCTAssertEqual(rows.count, 68)
        XCTAssertTrue(rows.allSatisfy { $0["face"] == "0" })
        XCTAssertEqual(console.errors, "")
    }

    func testJSONLinesCarryTheSameKeysAndLandmarks() throws {
        let out = try Fixtures.temporaryDirectory(self).appendingPathComponent("trace.jsonl").path
        let console = Console.capturing()
        XCTAssertEqual(LivenessCLI.run(["trace", try Fixtures.generated("astronaut.png"), "--format", "jsonl",
                                        "--landmarks", "--output", out], console: console), 0)
        let line = try String(contentsOfFile: out, encoding: .utf8).split(separator: "\n")[0]
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        XCTAssertEqual(object["face"] as? Int, 1)
        XCTAssertEqual((object["landmarks"] as? [Double])?.count, 136)
        XCTAssertNotNil(object["yaw_degrees"] as? Double)
        XCTAssertEqual(object["rotation_source"] as? String, "unknown")
    }

    func testUsageErrorsExitWithTwo() throws {
        let cases: [[String]] = [
            ["trace"], ["trace", "a.mp4", "b.mp4"], ["trace", "a.mp4", "--format", "xml"], ["trace", "a.mp4", "--bogus"],
            ["trace", "/nonexistent/clip.mp4"], ["nonsense"],
        ]
        for arguments in cases {
            let console = Console.capturing()
            XCTAssertEqual(LivenessCLI.run(arguments, console: console), 2, "\(arguments)")
            XCTAssertTrue(console.errors.hasPrefix("error: "), "\(arguments): \(console.errors)")
        }
    }
}
