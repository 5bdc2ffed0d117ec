import FaceTracking
import Foundation
import LivenessCore
import XCTest

/// `FaceEnclosure` against pictures whose borders are placed exactly: a panel of one brightness
/// on a surround of another (a screen or a print held up), drawn at known distances from a face
/// centre, with seeded noise on both. The oracle is the construction: the step across each edge
/// (the two levels' difference), its distance in face widths and its tilt.
final class FaceEnclosureTests: XCTestCase {
    private let width = 640, height = 720
    private let centre = (x: 320.0, y: 300.0)
    private let faceWidth = 120.0

    /// A grey picture: `level(x, y)` plus seeded noise of ±`noise` levels.
    private func picture(noise: Int = 4, _ level: (Double, Double) -> Double) throws -> Image {
        var rng = SeededGenerator(seed: 11)
        var pixels = [UInt8](repeating: 0, count: width * height)
        for y in 0..<height {
            for x in 0..<width {
                let n = noise == 0 ? 0 : Int(rng.next() % UInt64(2 * noise + 1)) - noise
                pixels[y * width + x] = UInt8(clamping: Int(level(Double(x), Double(y)).rounded()) + n)
            }
        }
        return try pixels.withUnsafeBytes { try Image(pixels: $0, width: width, height: height, bytesPerRow: width, format: .gray) }
    }

    /// Whether (x, y) lies in the panel spanning `left`…`right` face widths across and `top`…`bottom`
    /// down from the face centre, turned by `degrees` about the centre.
    private func inPanel(_ x: Double, _ y: Double, left: Double, right: Double, top: Double, bottom: Double,
                         degrees: Double = 0) -> Bool {
        let a = degrees * .pi / 180
        let dx = x - centre.x, dy = y - centre.y
        let u = (dx * cos(a) + dy * sin(a)) / faceWidth, v = (-dx * sin(a) + dy * cos(a)) / faceWidth
        return u >= left && u <= right && v >= top && v <= bottom
    }

    private func measure(_ image: Image, eyeLine: Double = 0) throws -> FaceEnclosure {
        try FaceEnclosure.measure(gray: image, centerX: centre.x, centerY: centre.y, faceWidth: faceWidth, eyeLineDegrees: eyeLine)
    }

    func testAPanelRoundTheFaceReadsItsFourEdges() throws {
        // A bright screen (170) on a dark room (60): 1.2 face widths each side, 1.3 above, 1.6 below.
        let image = try picture { x, y in
            self.inPanel(x, y, left: -1.2, right: 1.2, top: -1.3, bottom: 1.6) ? 170 : 60
        }
        let e = try measure(image)
        for (side, distance) in [(e.imageLeft, 1.2), (e.imageRight, 1.2), (e.above, 1.3), (e.below, 1.6)] {
            XCTAssertEqual(side.contrast, 110, accuracy: 8, "the step is 170 - 60")
            XCTAssertGreaterThanOrEqual(side.consistency, 0.95)
            XCTAssertEqual(side.distanceFaceWidths, distance, accuracy: 0.1)
            XCTAssertEqual(side.tiltDegrees, 0, accuracy: 0.1)
        }
        XCTAssertEqual(e.enclosure, 110, accuracy: 8)
    }

    func testABorderBelowAndTwoMoreSidesEncloseADoorwayDoesNot() throws {
        // A phone whose top is out of the picture: left, right and the edge below the chin.
        let phone = try measure(try picture { x, y in self.inPanel(x, y, left: -1.2, right: 1.2, top: -9, bottom: 1.6) ? 170 : 60 })
        XCTAssertEqual(phone.above.strength, 0)
        XCTAssertEqual(phone.enclosure, 110, accuracy: 8)
        // A doorway or a window behind a live subject: its sides and its top, nothing under the
        // face (the body goes on there). Three strong sides, no enclosure.
        let door = try measure(try picture { x, y in self.inPanel(x, y, left: -1.2, right: 1.2, top: -1.3, bottom: 9) ? 170 : 60 })
        XCTAssertEqual(door.imageLeft.contrast, 110, accuracy: 8)
        XCTAssertEqual(door.above.contrast, 110, accuracy: 8)
        XCTAssertEqual(door.below.strength, 0)
        XCTAssertEqual(door.enclosure, 0, "no border under the face")
        // The border below and one side only: no enclosure either.
        let corner = try measure(try picture { x, y in self.inPanel(x, y, left: -1.2, right: 9, top: -9, bottom: 1.6) ? 170 : 60 })
        XCTAssertEqual(corner.below.contrast, 110, accuracy: 8)
        XCTAssertEqual(corner.enclosure, 0, "two sides are no enclosure")
    }

    func testAScreenHeldAtAnAngleIsFoundAtItsTilt() throws {
        let image = try picture { x, y in self.inPanel(x, y, left: -1.1, right: 1.3, top: -1.4, bottom: 1.5, degrees: 5) ? 40 : 150 }
        let e = try measure(image)
        XCTAssertEqual(e.enclosure, 110, accuracy: 12)
        XCTAssertEqual(e.imageLeft.tiltDegrees, 4, accuracy: 1, "the nearest tilt tried to 5 degrees")
        // The face itself rolled by 20 degrees with the screen: the face's own axes are used.
        let rolled = try picture { x, y in self.inPanel(x, y, left: -1.2, right: 1.2, top: -1.3, bottom: 1.6, degrees: 20) ? 170 : 60 }
        XCTAssertEqual(try measure(rolled, eyeLine: 20).enclosure, 110, accuracy: 8)
        XCTAssertLessThan(try measure(rolled, eyeLine: 0).enclosure, 110 * 0.5, "20 degrees off the face's axes is no straight line")
    }

    func testTextureIsNoBorder() throws {
        // Stripes of alternating brightness, 9 px wide, round the face: every line crosses steps of
        // both signs. High contrast, low consistency: no side is a border.
        let image = try picture { x, y in
            (Int(x / 9) + Int(y / 9)) % 2 == 0 ? 200 : 40
        }
        let e = try measure(image)
        XCTAssertEqual(e.strengths, [0, 0, 0, 0])
    }

    func testPaddingIsNoBorder() throws {
        // A camera picture (noise on a gradient) centred in a flat black frame, its edges 1.0-1.5
        // face widths from the face: the padding's edge is the picture's, not a border in it.
        let image = try picture(noise: 0) { x, y in
            if !self.inPanel(x, y, left: -1.5, right: 1.5, top: -1.2, bottom: 1.9) { return 0 }
            return 90 + 40 * sin(x / 23) * cos(y / 31) + Double((Int(x) * 7 + Int(y) * 13) % 9)
        }
        XCTAssertEqual(try measure(image).enclosure, 0)
        // The same picture with a screen's border drawn inside it is still found.
        let screen = try picture(noise: 0) { x, y in
            if !self.inPanel(x, y, left: -1.5, right: 1.5, top: -1.2, bottom: 1.9) { return 0 }
            let base = 90 + Double((Int(x) * 7 + Int(y) * 13) % 9)
            return self.inPanel(x, y, left: -1.1, right: 1.1, top: -0.95, bottom: 1.5) ? base + 80 : base
        }
        XCTAssertEqual(try measure(screen).enclosure, 80, accuracy: 8)
    }

    func testBadArgumentsAreRefused() throws {
        let image = try picture { _, _ in 100 }
        XCTAssertThrowsError(try FaceEnclosure.measure(gray: image, centerX: 10, centerY: 10, faceWidth: 4, eyeLineDegrees: 0))
        XCTAssertThrowsError(try FaceEnclosure.measure(gray: image, centerX: .nan, centerY: 10, faceWidth: 100, eyeLineDegrees: 0))
        XCTAssertThrowsError(try FaceEnclosure.measure(gray: Image(), centerX: 10, centerY: 10, faceWidth: 100, eyeLineDegrees: 0))
        // A face partly off the picture is measured on what is inside.
        XCTAssertEqual(try FaceEnclosure.measure(gray: image, centerX: -50, centerY: 700, faceWidth: 100, eyeLineDegrees: 0).enclosure, 0)
    }
}
