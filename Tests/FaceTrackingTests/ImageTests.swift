import FaceTracking
import Foundation
import TestSupport
import XCTest

final class ImageTests: XCTestCase {
    func testDecodesAPNGFileAndBytes() throws {
        let path = try Fixtures.generated("astronaut.png")
        let image = try Image(contentsOfFile: path)
        XCTAssertEqual(image.width, 512)
        XCTAssertEqual(image.height, 512)
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let fromBytes = try Image(encoded: bytes)
        XCTAssertEqual(fromBytes.width, 512)
        XCTAssertTrue(Image.isImageFile(path))
    }

    func testJPEGRoundTripKeepsSizeAndLooksLikeAJPEG() throws {
        let image = try Image(contentsOfFile: try Fixtures.generated("astronaut.png"))
        let jpeg = try image.jpegData(quality: 85)
        XCTAssertEqual(Array(jpeg.prefix(3)), [0xFF, 0xD8, 0xFF], "JPEG SOI marker")
        XCTAssertLessThan(jpeg.count, 200_000)
        let decoded = try Image(encoded: jpeg)
        XCTAssertEqual(decoded.width, image.width)
        XCTAssertEqual(decoded.height, image.height)
        let png = try image.pngData()
        XCTAssertEqual(Array(png.prefix(4)), [0x89, 0x50, 0x4E, 0x47])
    }

    func testRawPixelsInEveryLayout() throws {
        let width = 4, height = 3
        for format in [Image.PixelFormat.bgr, .rgb, .gray, .bgra, .rgba] {
            let stride = width * format.bytesPerPixel + 2  // padded rows
            let pixels = [UInt8](repeating: 200, count: stride * height)
            let image = try pixels.withUnsafeBytes {
                try Image(pixels: $0, width: width, height: height, bytesPerRow: stride, format: format)
            }
            XCTAssertEqual(image.width, width)
            XCTAssertEqual(image.height, height)
            XCTAssertEqual(try image.quality().brightness, 200, accuracy: 1)
        }
    }

    func testRawPixelsTooFewBytesIsAnError() {
        let pixels = [UInt8](repeating: 0, count: 10)
        XCTAssertThrowsError(try pixels.withUnsafeBytes {
            try Image(pixels: $0, width: 4, height: 4, bytesPerRow: 12, format: .bgr)
        }) { error in
            XCTAssertEqual((error as? FaceTrackingError)?.kind, .argument)
        }
    }

    func testMissingFileIsNotFound() {
        XCTAssertThrowsError(try Image(contentsOfFile: "/nonexistent/face.jpg")) { error in
            let e = error as? FaceTrackingError
            XCTAssertEqual(e?.kind, .notFound)
            XCTAssertTrue(e?.message.contains("/nonexistent/face.jpg") ?? false, "\(error)")
        }
    }

    func testTextAndEmptyFilesAreNotImages() throws {
        let dir = try Fixtures.temporaryDirectory(self)
        let text = dir.appendingPathComponent("notes.jpg")
        try "hello, not a JPEG".write(to: text, atomically: true, encoding: .utf8)
        let empty = dir.appendingPathComponent("empty.png")
        FileManager.default.createFile(atPath: empty.path, contents: Data())
        for url in [text, empty] {
            XCTAssertFalse(Image.isImageFile(url.path))
            XCTAssertThrowsError(try Image(contentsOfFile: url.path)) { error in
                XCTAssertEqual((error as? FaceTrackingError)?.kind, .unsupported, "\(url.lastPathComponent): \(error)")
            }
        }
        XCTAssertThrowsError(try Image(encoded: Array("not an image".utf8)))
    }

    func testDrawingChangesPixels() throws {
        let image = try Image(width: 64, height: 64, color: .black)
        XCTAssertEqual(try image.quality().brightness, 0)
        image.drawCircle(center: Point(x: 32, y: 32), radius: 20, color: .white, thickness: -1)
        image.drawText("Hi", at: Point(x: 2, y: 60), color: .white)
        XCTAssertGreaterThan(try image.quality().brightness, 60)
    }
}
