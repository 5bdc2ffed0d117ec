import FaceTracking
import Foundation
import LivenessCommands
import LivenessCore
import LivenessKit
import TestSupport
import XCTest

/// Issue 10: motion sidecars in CRLF, with short quoted errors, a size limit, and a coverage
/// rule so that a sidecar elsewhere on the clock cannot switch the rotation check off.
final class MotionSidecarTests: XCTestCase {
    private var dir: URL!

    override func setUpWithError() throws { dir = try Fixtures.temporaryDirectory(self) }

    private func file(_ text: String, _ name: String = "motion.csv") throws -> String {
        let path = dir.appendingPathComponent(name).path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    private func loadError(_ text: String, _ name: String = "motion.csv") throws -> InputError? {
        let path = try file(text, name)
        do {
            _ = try MotionSamples.load(path)
            XCTFail("\(name) loaded")
        } catch {
            return error
        }
        return nil
    }

    /// The generated case's sidecar (200 Hz, 5 s), and the same in JSON Lines.
    private func generatedSidecar() throws -> (csv: String, jsonl: String) {
        let csv = try String(contentsOfFile: try Fixtures.generated("cases/camera-pan-20dps/motion.csv"), encoding: .utf8)
        let jsonl = csv.split(separator: "\n").dropFirst().map { line -> String in
            let f = line.split(separator: ",")
            return #"{"t": \#(f[0]), "rotationRate": [\#(f[1]), \#(f[2]), \#(f[3])]}"#
        }.joined(separator: "\n") + "\n"
        return (csv, jsonl)
    }

    /// Issue 10: CRLF motion files were rejected ("not valid JSON").
    func testCRLFFilesReadLikeLFFiles() throws {
        let (csv, jsonl) = try generatedSidecar()
        for (text, name) in [(csv, "m.csv"), (jsonl, "m.jsonl")] {
            let lf = try MotionSamples.load(try file(text, name))
            XCTAssertEqual(lf.samples.count, 995, name)
            let crlf = try MotionSamples.load(try file(text.replacingOccurrences(of: "\n", with: "\r\n"), "crlf-" + name))
            XCTAssertEqual(crlf.samples, lf.samples, name)
        }
    }

    /// Issue 10: the error echoed the whole file (601 lines); quoted text is cut to 40 characters.
    func testErrorsQuoteAtMostFortyCharacters() throws {
        let rows = (0..<600).map { "\(Double($0) / 100),0.01,0.02,0.03" }
        // A file with lone CR line ends is one line: its "header" is the whole file.
        let crOnly = try XCTUnwrap(try loadError((["t,x,y,z"] + rows).joined(separator: "\r")))
        XCTAssertLessThan(crOnly.description.count, 300, crOnly.description)
        XCTAssertTrue(crOnly.description.contains("motion.csv:1"), crOnly.description)
        let badHeader = try XCTUnwrap(try loadError((["time,a,b,c"] + rows).joined(separator: "\n")))
        XCTAssertEqual(badHeader.description, "\(dir.path)/motion.csv:1: the CSV header needs a column named t (header: 'time,a,b,c')")
        let badField = try XCTUnwrap(try loadError("t,x,y,z\n0,0,0,0\n0.1,0,\(String(repeating: "7", count: 500))x,0\n"))
        XCTAssertEqual(badField.problem, "y '\(String(repeating: "7", count: 40))…' is not a finite number")
        XCTAssertEqual(badField.path, "\(dir.path)/motion.csv:3")
    }

    /// Issue 10: a header-only file said "no samples" without the file name.
    func testAHeaderOnlyFileNamesTheFile() throws {
        let error = try XCTUnwrap(try loadError("t,x,y,z\r\n\r\n"))
        XCTAssertEqual(error.description, "\(dir.path)/motion.csv: the motion file has a header but no samples")
        XCTAssertEqual(try loadError("\n \n")?.problem, "the motion file is empty")
    }

    func testImplausibleValuesAndTheSizeLimit() throws {
        XCTAssertEqual(try loadError("t,x,y,z\n0,0,0,0\n1e13,0,0,0\n")?.path, "\(dir.path)/motion.csv:3")
        XCTAssertEqual(try loadError("t,x,y,z\n0,1e300,0,0\n")?.problem, "x 1e+300 rad/s is outside the plausible range ±100 rad/s of a gyroscope")
        XCTAssertEqual(try loadError(#"{"t": 0, "rotationRate": [0, true, 0]}"#, "m.jsonl")?.problem,
                       "\"rotationRate\" must hold 3 numbers [x, y, z] in rad/s")
        // Over the size limit: refused before reading (a sparse file of zeros).
        let path = dir.appendingPathComponent("big.csv").path
        FileManager.default.createFile(atPath: path, contents: Data("t,x,y,z\n".utf8))
        let handle = try XCTUnwrap(FileHandle(forWritingAtPath: path))
        try handle.truncate(atOffset: UInt64(MotionSamples.maximumFileBytes) + 1)
        try handle.close()
        XCTAssertThrowsError(try MotionSamples.load(path)) { e in
            XCTAssertEqual((e as? InputError)?.problem, "the motion file holds 16777217 bytes; the limit for a motion file is 16 MiB")
        }
    }

    // MARK: - Coverage, on the generated camera-pan-20dps case

    /// Analyses the generated case with `sidecar`; returns the exit code and the report.
    private func analyse(sidecar: String) throws -> (code: Int32, report: LivenessReport) {
        let video = try Fixtures.generated("cases/camera-pan-20dps/video.mp4")
        let out = dir.appendingPathComponent("out-\(UUID().uuidString)")
        let console = Console.capturing()
        let code = LivenessCLI.run(["analyze", video, "--motion", sidecar, "--output", out.path], console: console)
        let report = try JSONDecoder().decode(LivenessReport.self, from: Data(contentsOf: out.appendingPathComponent("video/report.json")))
        XCTAssertFalse(FileManager.default.fileExists(atPath: out.appendingPathComponent("video/autoshot.jpg").path) && report.verdict.status != .passed)
        return (code, report)
    }

    /// The sidecar's samples with every time moved by `shift` seconds (or kept when `keep` says so).
    private func edited(_ csv: String, shift: Double = 0, keep: (Double) -> Bool = { _ in true }) throws -> String {
        let lines = csv.split(separator: "\n")
        let rows = lines.dropFirst().compactMap { line -> String? in
            var f = line.split(separator: ",").map(String.init)
            let t = Double(f[0])!
            guard keep(t) else { return nil }
            f[0] = String(t + shift)
            return f.joined(separator: ",")
        }
        return try file(([String(lines[0])] + rows).joined(separator: "\n") + "\n", "edited-\(UUID().uuidString).csv")
    }

    /// Issue 10: a sidecar whose samples cover none of the video's frames turned the rotation check
    /// off, and the camera pan — which fails without a sidecar and with its real one — passed.
    /// Now such a sidecar makes the input invalid, with the reason, and releases no stills.
    func testASidecarThatDoesNotCoverTheVideoIsInvalidInput() throws {
        let (csv, _) = try generatedSidecar()
        // The real sidecar: the pan's frames are not credited, no turn (expected.json: failed).
        let real = try analyse(sidecar: try file(csv, "real.csv"))
        XCTAssertEqual(real.report.verdict.reason, .inputEnded)
        XCTAssertFalse(real.report.actions.turnHead.credited)

        for (name, sidecar) in [
            ("later on the clock", try edited(csv, shift: 1000)),
            ("all negative", try edited(csv, shift: -100)),
            ("stops after 1 s", try edited(csv, keep: { $0 < 1.0 })),
            ("a gap over the pan", try edited(csv, keep: { $0 < 2.0 || $0 > 4.0 })),
        ] {
            let run = try analyse(sidecar: sidecar)
            XCTAssertEqual(run.code, 2, name)
            XCTAssertEqual(run.report.verdict.status, .failed, name)
            XCTAssertEqual(run.report.verdict.reason, .invalidInput, name)
            let error = run.report.error ?? ""
            XCTAssertTrue(error.contains("has no motion sample within 100 ms") && error.hasPrefix(sidecar), "\(name): \(error)")
        }
        // Times around 1e13 s are refused when the file is read.
        let far = try analyse(sidecar: try edited(csv, shift: 1e13))
        XCTAssertEqual(far.report.verdict.reason, .invalidInput)
        XCTAssertTrue(far.report.error?.contains("outside the plausible range") == true, far.report.error ?? "no error")
    }

    /// A sidecar that starts a little after the first frame (within 100 ms) still covers it.
    func testASidecarStartingWithin100msCoversTheFirstFrame() throws {
        let (csv, _) = try generatedSidecar()
        let late = try analyse(sidecar: try edited(csv, keep: { $0 >= 0.09 }))
        XCTAssertEqual(late.code, 1)
        XCTAssertEqual(late.report.verdict.reason, .inputEnded)
        XCTAssertEqual(late.report.frames.rotationUnknown, 0)
    }

    /// Samples made in memory: the rule holds for a library caller too.
    func testSensorRotationNamesTheUncoveredFrame() throws {
        let rotation = try SensorRotation(samples: MotionSamples(samples: [.init(seconds: 0, x: 0, y: 0, z: 0.1),
                                                                            .init(seconds: 0.2, x: 0, y: 0, z: 0.1)]))
        let image = Image()
        XCTAssertEqual(try rotation.rotation(for: image, timestampMicroseconds: 5_000_000).degreesPerSecond ?? -1,
                       0.1 * 180 / .pi, accuracy: 1e-9)
        XCTAssertNotNil(try rotation.rotation(for: image, timestampMicroseconds: 5_100_000).degreesPerSecond)   // nearest: 0.0 s
        XCTAssertNotNil(try rotation.rotation(for: image, timestampMicroseconds: 5_250_000).degreesPerSecond)   // 0.2 s in (0.1, 0.25]
        XCTAssertThrowsError(try rotation.rotation(for: image, timestampMicroseconds: 5_500_000)) { e in
            XCTAssertEqual((e as? InputError)?.description,
                           "motion samples: frame 3 at 0.5 s has no motion sample within 100 ms (the samples span 0.0 s to 0.2 s on the video's clock, 0 = the first frame); a motion file must cover every frame judged")
        }
        XCTAssertThrowsError(try SensorRotation(samples: MotionSamples(samples: [])))
    }
}
