import FaceTracking
import Foundation
import TestSupport
import XCTest

/// Image decoding against an independent decoder (ffmpeg's), and the size limits that apply
/// before any pixel is decoded.
final class ImageDecodingTests: XCTestCase {
    /// ffmpeg's own decode of an image to packed BGR bytes.
    private func ffmpegBGR(_ path: String, in dir: URL) throws -> [UInt8] {
        let raw = dir.appendingPathComponent(UUID().uuidString + ".bgr").path
        try Fixtures.ffmpeg(["-i", path, "-f", "rawvideo", "-pix_fmt", "bgr24", raw])
        return [UInt8](try Data(contentsOf: URL(fileURLWithPath: raw)))
    }

    private func packed(_ image: Image) -> [UInt8] {
        image.withBGRBytes { p, stride in
            var out: [UInt8] = []
            out.reserveCapacity(image.width * image.height * 3)
            for y in 0..<image.height { out += p[(y * stride)..<(y * stride + image.width * 3)] }
            return out
        }
    }

    func testPNGLayoutsDecodeToTheSamePixelsAsFFmpeg() throws {
        let dir = try Fixtures.temporaryDirectory(self)
        let photo = try Fixtures.generated("astronaut.png")
        // (ffmpeg pixel format of the PNG written, largest per-value difference allowed: 16-bit
        // samples are reduced to 8 bits by truncation in libpng and by rounding in ffmpeg)
        let layouts: [(String, Int)] = [("rgb24", 0), ("rgba", 0), ("gray", 0), ("pal8", 0), ("rgb48be", 1), ("monob", 0)]
        for (format, tolerance) in layouts {
            let path = dir.appendingPathComponent("\(format).png").path
            try Fixtures.ffmpeg(["-i", photo, "-vf", "scale=200:150", "-pix_fmt", format, path])
            let image = try Image(contentsOfFile: path)
            XCTAssertEqual(image.width, 200, format)
            XCTAssertEqual(image.height, 150, format)
            let ours = packed(image)
            let reference = try ffmpegBGR(path, in: dir)
            XCTAssertEqual(ours.count, reference.count, format)
            let worst = zip(ours, reference).map { abs(Int($0) - Int($1)) }.max() ?? 0
            XCTAssertLessThanOrEqual(worst, tolerance, "\(format): largest difference from ffmpeg's decode \(worst)")
            // The same bytes through the in-memory decoder.
            let fromBytes = try Image(encoded: [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))))
            XCTAssertEqual(packed(fromBytes), ours, format)
        }
    }

    /// A PNG header claiming `width`×`height` 1-bit pixels, with a valid zlib stream of all-zero
    /// rows: a few hundred kilobytes that would decode to gigabytes.
    private func pngBomb(width: Int, height: Int, to path: String) throws {
        let script = """
            import struct, sys, zlib
            w, h = \(width), \(height)
            def chunk(kind, data):
                return struct.pack('>I', len(data)) + kind + data + struct.pack('>I', zlib.crc32(kind + data) & 0xffffffff)
            row = b'\\x00' * (1 + (w + 7) // 8)
            z = zlib.compressobj(9)
            body = b''.join(z.compress(row) for _ in range(h)) + z.flush()
            png = b'\\x89PNG\\r\\n\\x1a\\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', w, h, 1, 0, 0, 0, 0)) + chunk(b'IDAT', body) + chunk(b'IEND', b'')
            open(sys.argv[1], 'wb').write(png)
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["-c", script, path]
        try process.run()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0)
    }

    func testADecompressionBombIsRefusedFromItsHeader() throws {
        let dir = try Fixtures.temporaryDirectory(self)
        let bomb = dir.appendingPathComponent("bomb.png").path
        try pngBomb(width: 30000, height: 30000, to: bomb)
        let size = try FileManager.default.attributesOfItem(atPath: bomb)[.size] as? Int ?? 0
        XCTAssertLessThan(size, 300_000, "a small file")
        XCTAssertThrowsError(try Image(contentsOfFile: bomb)) { error in
            let e = error as? FaceTrackingError
            XCTAssertEqual(e?.kind, .limit, "\(error)")
            XCTAssertTrue(e?.message.contains("30000x30000") ?? false, "\(error)")
        }
        XCTAssertThrowsError(try Image(encoded: [UInt8](try Data(contentsOf: URL(fileURLWithPath: bomb))))) { error in
            XCTAssertEqual((error as? FaceTrackingError)?.kind, .limit, "\(error)")
        }
        // Within the limits the same construction decodes (the limit, not the file, refused it).
        let fine = dir.appendingPathComponent("fine.png").path
        try pngBomb(width: 2000, height: 1000, to: fine)
        XCTAssertEqual(try Image(contentsOfFile: fine).width, 2000)
    }

    func testAJPEGLargerThanTheLimitIsRefused() throws {
        let dir = try Fixtures.temporaryDirectory(self)
        let big = dir.appendingPathComponent("big.jpg").path
        // 9000 × 6000 = 54 megapixels, above the 50-megapixel limit.
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "color=c=gray:s=9000x6000", "-frames:v", "1", big])
        XCTAssertGreaterThan(FrameLimits.maxFramePixels, 0)
        XCTAssertLessThan(FrameLimits.maxFramePixels, 9000 * 6000)
        XCTAssertThrowsError(try Image(contentsOfFile: big)) { error in
            XCTAssertEqual((error as? FaceTrackingError)?.kind, .limit, "\(error)")
        }
    }

    func testRawPixelsLargerThanTheLimitAreRefused() {
        let side = FrameLimits.maxFrameSide + 1
        let row = [UInt8](repeating: 0, count: side)
        XCTAssertThrowsError(try row.withUnsafeBytes {
            try Image(pixels: $0, width: side, height: 1, bytesPerRow: side, format: .gray)
        }) { error in
            XCTAssertEqual((error as? FaceTrackingError)?.kind, .limit, "\(error)")
        }
    }
}
