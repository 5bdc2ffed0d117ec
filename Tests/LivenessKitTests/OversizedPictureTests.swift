import Foundation
import TestSupport
import XCTest

/// Issue 27, memory: a container that declares 64×64 while three of its MJPEG pictures are
/// 16000×16000 progressive JPEGs. Each picture used to be decoded before its size was checked
/// (937 MB peak for this 3 MB file, and decoding stopped there). Now libavcodec refuses it from
/// its header: the pictures are skipped with a warning, the others are read, the peak stays low.
final class OversizedPictureTests: XCTestCase {
    func testPicturesOverTheLimitAreRefusedBeforeDecodingAndTheRestIsRead() throws {
        let dir = try Fixtures.temporaryDirectory(self)
        // The pictures, made with OpenCV (python3-opencv), an independent encoder.
        let script = """
            import cv2, numpy as np, sys
            small = np.full((64, 64, 3), 128, np.uint8)
            big = np.full((16000, 16000), 128, np.uint8)
            for i in range(12):
                cv2.imwrite(sys.argv[1] + '/f%02d.jpg' % i, big if i in (5, 6, 7) else small, [cv2.IMWRITE_JPEG_PROGRESSIVE, 1])
            """
        let python = Process()
        python.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        python.arguments = ["-c", script, dir.path]
        try python.run()
        python.waitUntilExit()
        guard python.terminationStatus == 0 else { throw Skip.unavailable("python3-opencv could not write the pictures: run Tools/setup.sh --test") }
        let clip = dir.appendingPathComponent("clip.mkv").path
        try Fixtures.ffmpeg(["-framerate", "25", "-i", dir.appendingPathComponent("f%02d.jpg").path, "-c:v", "copy", clip])

        // Peak memory as the kernel counts it (GNU time's maximum resident set size).
        let trace = dir.appendingPathComponent("t.csv").path
        let run = try peak(["trace", clip, "--output", trace])
        let text = run.errors
        XCTAssertEqual(run.status, 0, text)
        XCTAssertTrue(text.contains("warning: 3 pictures were skipped: damaged, or larger than the frame limit"), text)
        let rows = try String(contentsOfFile: trace, encoding: .utf8).split(separator: "\n").dropFirst()
        XCTAssertEqual(rows.count, 9, "the nine 64×64 pictures are read")
        // One such picture decoded costs 256 MB of luma alone; the engine reading 64×64 frames
        // stays near its model's size (about 180 MB).
        XCTAssertGreaterThan(run.kilobytes, 0, text)
        XCTAssertLessThan(run.kilobytes, 400_000, "peak \(run.kilobytes) kB")
    }

    /// Peak memory (kB, GNU time) and standard error of `liveness` with `arguments`.
    private func peak(_ arguments: [String]) throws -> (status: Int32, kilobytes: Int, errors: String) {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/time") else {
            throw Skip.unavailable("/usr/bin/time is not installed: run Tools/setup.sh --test")
        }
        let run = try Fixtures.runTool("/usr/bin/time", ["-f", "peak-kb %M", try Fixtures.livenessExecutable()] + arguments)
        let kb = run.errors.split(separator: "\n").first { $0.hasPrefix("peak-kb ") }.flatMap { Int($0.dropFirst(8)) } ?? -1
        return (run.status, kb, run.errors)
    }

    /// Issue 27: an H.264 clip of 16384×3050 (49.97 MP, within the frame limits) cost 1.2 GB; a
    /// 4:4:4 10-bit one of the same size 1.3 GB. Any accepted file now stays within 1 GB: huge
    /// pictures are decoded with slice threads and fewer frames ahead, and a picture over 160 MB
    /// decoded is refused.
    func testTheLargestAcceptedVideoStaysWithinOneGigabyte() throws {
        let dir = try Fixtures.temporaryDirectory(self)
        let wide = dir.appendingPathComponent("wide.mp4").path, deep = dir.appendingPathComponent("deep.mp4").path
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "testsrc=s=16384x3050:r=5", "-t", "1.2", "-c:v", "libx264", "-preset", "ultrafast",
                             "-pix_fmt", "yuv420p", wide])
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "testsrc=s=16384x3050:r=5", "-t", "0.6", "-c:v", "libx264", "-preset", "ultrafast",
                             "-pix_fmt", "yuv444p10le", deep])
        for command in ["analyze", "trace"] {
            let output = command == "analyze" ? ["--output", dir.appendingPathComponent("out").path]
                : ["--output", dir.appendingPathComponent("t.csv").path]
            let run = try peak([command, wide] + output)
            XCTAssertNotEqual(run.status, 2, "\(command): \(run.errors)")
            XCTAssertGreaterThan(run.kilobytes, 0, run.errors)
            XCTAssertLessThan(run.kilobytes, 1_000_000, "\(command) of a 50 MP clip peaked at \(run.kilobytes) kB")
        }
        let refused = try peak(["trace", deep, "--output", dir.appendingPathComponent("d.csv").path])
        XCTAssertEqual(refused.status, 2)
        XCTAssertTrue(refused.errors.contains("yuv444p10le pictures are 285 MB each, above the limit of 160 MB a decoded picture"), refused.errors)
        XCTAssertLessThan(refused.kilobytes, 1_000_000)
    }
}
