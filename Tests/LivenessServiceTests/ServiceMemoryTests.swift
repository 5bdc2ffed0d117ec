import Foundation
import LivenessKit
import LivenessClient
import LivenessService
import TestSupport
import XCTest

/// Issue 27: the service's memory at `--max-sessions`, measured on a real `liveness serve`
/// process (its peak resident set, VmHWM, as the kernel counts it) while every session streams
/// 4K JPEG frames at once, against the worst case it publishes in `/v1/capabilities`.
final class ServiceMemoryTests: XCTestCase {
    func testSixteenSessionsAt4KStayWithinThePublishedWorstCase() throws {
        let dir = try Fixtures.temporaryDirectory(self)
        // A live generated case at 4K (3840×2160, square pixels), 1.6 s.
        let clip = dir.appendingPathComponent("4k.mp4").path
        try Fixtures.ffmpeg(["-i", try Fixtures.generated("cases/blink-then-turn/video.mp4"), "-t", "1.6",
                             "-vf", "scale=-2:2160,pad=3840:2160:(ow-iw)/2:0,setsar=1", "-c:v", "libx264", "-preset", "ultrafast",
                             "-pix_fmt", "yuv420p", clip])
        let server = Process()
        server.executableURL = URL(fileURLWithPath: try Fixtures.livenessExecutable())
        server.arguments = ["serve", "--port", "0", "--max-sessions", "16", "--workers", "2"]
        let output = Pipe()
        server.standardOutput = output
        server.standardError = FileHandle.nullDevice
        try server.run()
        addTeardownBlock { if server.isRunning { server.terminate(); server.waitUntilExit() } }
        // "liveness serve: listening on http://127.0.0.1:PORT (...)"
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            line += chunk
        }
        let text = String(decoding: line, as: UTF8.self)
        let url = try XCTUnwrap(text.split(separator: " ").first { $0.hasPrefix("http://") }.map(String.init), text)
        let address = try ServiceAddress(url: url)
        let limits = try XCTUnwrap(try ServiceClient.request("GET", "/v1/capabilities", at: address).json?["limits"] as? [String: Any])
        let budget = try XCTUnwrap(limits["memoryWorstCaseBytes"] as? Int)

        let verdicts = VerdictBox()
        let group = DispatchGroup()
        for _ in 0..<16 {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                var streamer = RecordingStreamer(address: address)
                streamer.jpeg = true
                if let outcome = try? streamer.run(try FrameSource(path: clip)) { verdicts.add(outcome.verdict?.status.rawValue) }
            }
        }
        XCTAssertEqual(group.wait(timeout: .now() + 300), .success, "the sessions ended")  // a hang guard
        XCTAssertEqual(verdicts.count, 16, "every session got a verdict")
        let status = try String(contentsOfFile: "/proc/\(server.processIdentifier)/status", encoding: .utf8)
        let peakKB = try XCTUnwrap(status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") }
            .flatMap { Int($0.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") })
        print("service memory: 16 sessions at 4K JPEG peaked at \(peakKB / 1024) MB; published worst case \(budget >> 20) MB")
        XCTAssertLessThan(peakKB * 1024, budget)
    }
}

private final class VerdictBox: @unchecked Sendable {
    private let lock = NSLock()
    private var statuses: [String?] = []
    func add(_ status: String?) { lock.withLock { statuses.append(status) } }
    var count: Int { lock.withLock { statuses.compactMap { $0 }.count } }
}
