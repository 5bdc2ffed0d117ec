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
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/time") else {
            throw Skip.unavailable("/usr/bin/time is not installed: run Tools/setup.sh --test")
        }
        let trace = dir.appendingPathComponent("t.csv").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/time")
        process.arguments = ["-f", "peak-kb %M", try Fixtures.livenessExecutable(), "trace", clip, "--output", trace]
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, text)
        XCTAssertTrue(text.contains("warning: 3 pictures were skipped: damaged, or larger than the frame limit"), text)
        let rows = try String(contentsOfFile: trace, encoding: .utf8).split(separator: "\n").dropFirst()
        XCTAssertEqual(rows.count, 9, "the nine 64×64 pictures are read")
        let peak = try XCTUnwrap(text.split(separator: "\n").first { $0.hasPrefix("peak-kb ") }.flatMap { Int($0.dropFirst(8)) })
        // One such picture decoded costs 256 MB of luma alone; the engine reading 64×64 frames
        // stays near its model's size (about 180 MB).
        XCTAssertLessThan(peak, 400_000, "peak \(peak) kB")
    }
}
