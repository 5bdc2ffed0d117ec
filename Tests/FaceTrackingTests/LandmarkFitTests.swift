import FaceTracking
import FaceTrackingReference
import Foundation
import TestSupport
import XCTest

/// The engine evaluates dlib's 68-point model with its leaves packed and prefetched
/// (landmarks.cpp); the oracle is dlib's own `shape_predictor` loading the same file
/// (`referenceDlibLandmarks`): every fit must give the same 68 points.
final class LandmarkFitTests: XCTestCase {
    private let model = { try! LandmarkModel.load() }()

    /// Boxes around `face`: itself, moved, smaller and larger, partly and wholly off the image,
    /// thin and wide.
    private func boxes(around face: Rect, in image: Image) -> [Rect] {
        var out: [Rect] = []
        for dx in [-0.3, 0, 0.2] {
            for dy in [-0.25, 0, 0.3] {
                for size in [0.5, 1, 1.6] {
                    let w = face.width * size, h = face.height * size
                    out.append(Rect(x: face.x + dx * face.width - (w - face.width) / 2,
                                    y: face.y + dy * face.height - (h - face.height) / 2, width: w, height: h))
                }
            }
        }
        let W = Double(image.width), H = Double(image.height)
        out.append(Rect(x: -face.width / 2, y: -face.height / 2, width: face.width, height: face.height))
        out.append(Rect(x: W - face.width / 3, y: H - face.height / 3, width: face.width, height: face.height))
        out.append(Rect(x: W + 10, y: 10, width: 50, height: 50))
        out.append(Rect(x: -W, y: -H, width: 3 * W, height: 3 * H))
        out.append(Rect(x: face.x, y: face.y, width: face.width * 3, height: face.height / 3))
        out.append(Rect(x: 5, y: 5, width: 3, height: 3))
        return out
    }

    private func checkSame(_ image: Image, _ box: Rect, _ label: String) throws {
        let ours = try model.fitLandmarks(in: image, box: box)
        let dlib = try model.referenceDlibLandmarks(in: image, box: box)
        XCTAssertEqual(ours, dlib, "\(label), box \(box)")
    }

    func testFitsOnThePortraitAreDlibsToThePoint() throws {
        let image = try Image(contentsOfFile: try Fixtures.generated("astronaut.png"))
        let face = try XCTUnwrap(try model.detectFaces(in: image).first, "the portrait's face").box
        let gray = Image()
        try image.gray(into: gray)
        var fits = 0
        for box in boxes(around: face, in: image) {
            try checkSame(image, box, "astronaut")
            try checkSame(gray, box, "astronaut, grey")
            fits += 2
        }
        try image.flipHorizontally()
        for box in boxes(around: face, in: image) { try checkSame(image, box, "astronaut mirrored"); fits += 1 }
        XCTAssertGreaterThan(fits, 80)
        // The fit is not a constant: boxes apart give points apart.
        let a = try model.fitLandmarks(in: gray, box: face)
        let b = try model.fitLandmarks(in: gray, box: Rect(x: face.x + 40, y: face.y, width: face.width, height: face.height))
        XCTAssertNotEqual(a, b)
    }

    func testFitsAlongARealClipAreDlibs() throws {
        // Blinks, glasses and head motion in a phone selfie: the tracked boxes of 90 frames.
        let reader = try VideoReader(path: try Fixtures.shared("lp-d13-phone-selfie-glasses.mp4"))
        let tracker = try FaceTracker(model: model)
        let frame = Image()
        var fits = 0
        while fits < 90, let ms = try reader.read(into: frame) {
            guard let face = try tracker.process(frame, timestampMilliseconds: ms).face else { continue }
            try checkSame(frame, face.box, "lp-d13 at \(ms) ms")
            fits += 1
        }
        XCTAssertEqual(fits, 90)
    }

    func testADamagedModelFileIsAModelErrorNotACrash() throws {
        let dir = try Fixtures.temporaryDirectory(self)
        let original = try Data(contentsOf: URL(fileURLWithPath: model.path))
        let cases: [(String, Data)] = [
            ("truncated", original.prefix(original.count / 3)),
            ("empty", Data()),
            ("another version", Data([0x82]) + original.dropFirst()),
            ("noise", Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 2654435761 >> 7) })),
        ]
        for (name, bytes) in cases {
            let path = dir.appendingPathComponent("\(name).dat").path
            try bytes.write(to: URL(fileURLWithPath: path))
            XCTAssertThrowsError(try LandmarkModel.load(path: path), name) { error in
                XCTAssertEqual((error as? FaceTrackingError)?.kind, .model, "\(name): \(error)")
            }
        }
    }
}
