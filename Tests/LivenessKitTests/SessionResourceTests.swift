import FaceTracking
import Foundation
import LivenessCore
import LivenessKit
import TestSupport
import XCTest

/// An analysis gives back what it took: its input file is closed and its decoder's frames freed
/// when it ends. A batch of thousands of inputs, or a service analysing uploads for weeks, must
/// not grow with each one (each kept input held its file open and about 30 MB of 720p frames).
final class SessionResourceTests: XCTestCase {
    /// The process's open file descriptors, from the kernel's own list.
    private func openDescriptors() throws -> Int {
        try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count
    }

    private func analyse(_ path: String, model: LandmarkModel) throws -> Int {
        let session = try AnalysisSession(source: try FrameSource(path: path), model: model, policy: LivenessPolicy(), seed: 1,
                                          stopAtVerdict: false)
        return try session.run { _ in }.framesDecoded
    }

    func testEveryAnalysisClosesItsInputWhenItEnds() throws {
        let clip = try Fixtures.generated("cases/blink-only/video.mp4")
        let model = try LandmarkModel.load()
        // One analysis first, so that whatever the process opens once (the model, libraries'
        // own files) is open before counting.
        let frames = try analyse(clip, model: model)
        XCTAssertGreaterThan(frames, 30, "the clip was read to its end")
        let before = try openDescriptors()
        for _ in 0..<4 { XCTAssertEqual(try analyse(clip, model: model), frames) }
        XCTAssertEqual(try openDescriptors(), before, "four more analyses of \(clip) left files open")
    }
}
