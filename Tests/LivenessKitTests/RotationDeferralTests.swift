import FaceTracking
import Foundation
import LivenessCore
import LivenessKit
import XCTest

/// `VideoRotationEstimator.prepareDeferred`/`resolveDeferred`: after a frame without a face the
/// background flow waits until the frame is known to show one, and is skipped when it does not.
/// The frames are a camera panning over a texture by exactly 3 px a frame at 30 fps: the truth is
/// 3 × 30 / 320 rad/s (the estimator's focal length is the frame's longer side) = 16.1 °/s.
final class RotationDeferralTests: XCTestCase {
    private let width = 320, height = 240, step = 3, fps = 30.0

    /// Frame `i`: a window of a fixed random texture (blocks of 4 px, so that the flow has
    /// corners to follow), moved `step` px to the left per frame.
    private func frames(_ count: Int) throws -> [Image] {
        var generator = SeededGenerator(seed: 7)
        let textureWidth = width + step * count + 8
        var blocks = [UInt8](repeating: 0, count: (textureWidth / 4 + 1) * (height / 4 + 1))
        for i in blocks.indices { blocks[i] = UInt8(truncatingIfNeeded: generator.next() % 200 + 30) }
        return try (0..<count).map { f in
            var bytes = [UInt8](repeating: 0, count: width * height * 3)
            for y in 0..<height {
                for x in 0..<width {
                    let v = blocks[(y / 4) * (textureWidth / 4 + 1) + (x + step * f) / 4]
                    let i = (y * width + x) * 3
                    bytes[i] = v; bytes[i + 1] = v; bytes[i + 2] = v
                }
            }
            return try bytes.withUnsafeBytes { try Image(pixels: $0, width: width, height: height, bytesPerRow: width * 3, format: .bgr) }
        }
    }

    private func timestamp(_ i: Int) -> Int64 { Int64((Double(i) / fps * 1e6).rounded()) }

    func testADeferredEstimateIsTheEstimateAndFramesWithoutAFaceAreSkipped() throws {
        let all = try frames(9)
        let direct = VideoRotationEstimator(width: width, height: height)
        let expected = try all.enumerated().map { i, frame in try direct.rotation(for: frame, timestampMicroseconds: timestamp(i)) }
        // The estimate itself against the truth (the first frame has no previous one).
        let truth = Double(step) * fps / Double(max(width, height)) * 180 / .pi
        XCTAssertNil(expected[0].degreesPerSecond)
        for r in expected.dropFirst() {
            let dps = try XCTUnwrap(r.degreesPerSecond)
            XCTAssertEqual(dps, truth, accuracy: 0.1 * truth)
        }

        // No face is ever observed, so every frame is offered for deferral; frames 2, 5 and 8
        // "show a face" and get the estimate, the others are skipped.
        let deferred = VideoRotationEstimator(width: width, height: height)
        for (i, frame) in all.enumerated() {
            XCTAssertTrue(try deferred.prepareDeferred(for: frame, gray: nil, timestampMicroseconds: timestamp(i)))
            let hasFace = i % 3 == 2
            let r = try deferred.resolveDeferred(hasFace: hasFace)
            if hasFace {
                XCTAssertEqual(r, expected[i], "frame \(i): the estimate is the same whenever it is made")
            } else {
                XCTAssertEqual(r, .unknown, "frame \(i)")
            }
        }
        XCTAssertEqual(deferred.framesSkipped, 6)
        XCTAssertEqual(deferred.framesEstimated, 3)
        XCTAssertEqual(deferred.framesUnknown, 0, "skipped frames are not counted as unknown")
        XCTAssertNil(deferred.summary, "no warning about frames without an estimate")
    }
}
