import FaceTracking
import FaceTrackingReference
import Foundation
import TestSupport
import XCTest

/// The tracker confirms a face with the HOG detector's filters one at a time, the filter that
/// found it the last time first (`ft_detector_load`, `ft_detector_run_filter`). The reference is dlib's own
/// detector, which runs every filter over the same pyramid and keeps the best of overlapping
/// boxes: each of its detections must be one filter's own, box and score, and each filter's
/// detection must be either kept by it or beaten there by a better one.
final class DetectorFilterTests: XCTestCase {
    private let model = { try! LandmarkModel.load() }()

    /// Checks one image at `scale`; returns the filter that gives each whole-detector detection.
    @discardableResult
    private func checkFilters(_ image: Image, scale: Double, label: String) throws -> [Int] {
        // A threshold below the default keeps weak detections too, so that suppression has work.
        let threshold = -0.4
        let whole = try model.detectFaces(in: image, scale: scale, threshold: threshold)
        let filters = try (0..<model.detectorFilterCount).map {
            try model.detectFaces(in: image, scale: scale, threshold: threshold, filter: $0)
        }
        func same(_ a: FaceCandidate, _ b: FaceCandidate) -> Bool {
            abs(a.box.x - b.box.x) < 1e-9 && abs(a.box.y - b.box.y) < 1e-9 && abs(a.box.width - b.box.width) < 1e-9
                && abs(a.box.height - b.box.height) < 1e-9 && abs(a.score - b.score) < 1e-9
        }
        func overlaps(_ a: Rect, _ b: Rect) -> Bool {
            min(a.x + a.width, b.x + b.width) > max(a.x, b.x) && min(a.y + a.height, b.y + b.height) > max(a.y, b.y)
        }
        var winners: [Int] = []
        for detection in whole {
            let owner = filters.firstIndex { $0.contains { same($0, detection) } }
            XCTAssertNotNil(owner, "\(label): the detector's \(detection) is no single filter's detection: \(filters)")
            if let owner { winners.append(owner) }
        }
        for (index, found) in filters.enumerated() {
            for detection in found where !whole.contains(where: { same($0, detection) }) {
                XCTAssertTrue(whole.contains { overlaps($0.box, detection.box) && $0.score >= detection.score },
                              "\(label): filter \(index)'s \(detection) is neither kept nor beaten by an overlapping detection: \(whole)")
            }
        }
        return winners
    }

    func testTheDetectorHasFiveFilters() {
        XCTAssertEqual(model.detectorFilterCount, 5)
    }

    func testEachFilterAgreesWithTheWholeDetectorOnThePortrait() throws {
        let image = try Image(contentsOfFile: try Fixtures.generated("astronaut.png"))
        for scale in [1.0, 0.8, 1.3] {
            let winners = try checkFilters(image, scale: scale, label: "astronaut at \(scale)")
            XCTAssertFalse(winners.isEmpty, "the portrait's face is found at scale \(scale)")
        }
        try image.flipHorizontally()
        try checkFilters(image, scale: 1, label: "astronaut mirrored")
    }

    func testTurnedFacesAreFoundBySideFiltersAndStillAgree() throws {
        // lp-d3: frontal at 7.8 s, turned to the image's right at 8.8 s and to its left at
        // 10.4 s (looked at frame by frame); the face is about 330 px wide in a 512 px frame.
        let reader = try VideoReader(path: try Fixtures.shared("lp-d3-winks-lookaway.mp4"))
        let frame = Image()
        var wanted: [Double] = [7_800, 8_800, 10_400]
        var winners = Set<Int>()
        while let ms = try reader.read(into: frame), let next = wanted.first {
            guard ms >= next else { continue }
            wanted.removeFirst()
            let found = try checkFilters(frame, scale: 0.3, label: "lp-d3 at \(ms) ms")
            XCTAssertFalse(found.isEmpty, "a face at \(ms) ms")
            winners.formUnion(found.prefix(1))
        }
        XCTAssertTrue(wanted.isEmpty, "the clip reached 10.4 s")
        XCTAssertGreaterThanOrEqual(winners.count, 2, "frontal and turned faces are found by different filters: \(winners)")
    }

    func testAFilterOutOfRangeIsAnArgumentError() throws {
        let image = try Image(contentsOfFile: try Fixtures.generated("astronaut.png"))
        for filter in [-1, model.detectorFilterCount, Int.max] {
            XCTAssertThrowsError(try model.detectFaces(in: image, filter: filter)) { error in
                XCTAssertEqual((error as? FaceTrackingError)?.kind, .argument, "filter \(filter): \(error)")
            }
        }
    }

    /// The tracker's searches run the filters at once on the cores; the oracle is dlib's own
    /// object_detector on one thread (`detectFaces`): the same detections, boxes, scores and order.
    private func checkOnCores(_ image: Image, label: String) throws -> Int {
        var compared = 0
        for scale in [0.4, 0.7, 1.0, 1.3] {
            for threshold in [-0.6, 0.0, 0.5] {
                let dlib = try model.detectFaces(in: image, scale: scale, threshold: threshold)
                let onCores = try model.detectFacesOnCores(in: image, scale: scale, threshold: threshold)
                XCTAssertEqual(onCores, dlib, "\(label) at scale \(scale), threshold \(threshold)")
                compared += dlib.count
            }
        }
        return compared
    }

    func testTheFiltersRunAtOnceFindWhatDlibsDetectorFinds() throws {
        let image = try Image(contentsOfFile: try Fixtures.generated("astronaut.png"))
        var detections = try checkOnCores(image, label: "astronaut")
        try image.flipHorizontally()
        detections += try checkOnCores(image, label: "astronaut mirrored")
        // Several faces at once, of different sizes: the portrait and a half-size copy beside it.
        let pair = try Self.sideBySide(image, halfSized: image)
        detections += try checkOnCores(pair, label: "two faces")
        // Low thresholds give many weak detections, so suppression has overlaps to settle.
        XCTAssertGreaterThan(detections, 30, "the comparison saw detections to compare")
    }

    func testTheFiltersRunAtOnceAgreeOnRealFrames() throws {
        let reader = try VideoReader(path: try Fixtures.shared("lp-d3-winks-lookaway.mp4"))
        let frame = Image()
        var wanted: [Double] = [7_800, 8_800, 10_400]
        var detections = 0
        while let ms = try reader.read(into: frame), let next = wanted.first {
            guard ms >= next else { continue }
            wanted.removeFirst()
            detections += try checkOnCores(frame, label: "lp-d3 at \(ms) ms")
        }
        XCTAssertTrue(wanted.isEmpty, "the clip reached 10.4 s")
        XCTAssertGreaterThan(detections, 10)
    }

    /// `left` with `right` reduced to half its size beside it, on black (BGR).
    static func sideBySide(_ left: Image, halfSized right: Image) throws -> Image {
        let width = left.width + right.width / 2, height = max(left.height, right.height / 2)
        var bytes = [UInt8](repeating: 0, count: width * height * 3)
        left.withBGRBytes { p, stride in
            for y in 0..<left.height {
                for x in 0..<(left.width * 3) { bytes[y * width * 3 + x] = p[y * stride + x] }
            }
        }
        right.withBGRBytes { p, stride in
            for y in 0..<(right.height / 2) {
                for x in 0..<(right.width / 2) {
                    for c in 0..<3 {
                        // The mean of the 2x2 block.
                        let sum = Int(p[2 * y * stride + 6 * x + c]) + Int(p[2 * y * stride + 6 * x + 3 + c])
                            + Int(p[(2 * y + 1) * stride + 6 * x + c]) + Int(p[(2 * y + 1) * stride + 6 * x + 3 + c])
                        bytes[y * width * 3 + (left.width + x) * 3 + c] = UInt8(sum / 4)
                    }
                }
            }
        }
        return try bytes.withUnsafeBytes { try Image(pixels: $0, width: width, height: height, bytesPerRow: width * 3, format: .bgr) }
    }
}
