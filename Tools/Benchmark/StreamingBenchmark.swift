// The streaming service under load, in one process: an in-process `liveness serve` and camera
// clients sending 640×480 JPEG frames (as the web page does) at 30 fps in real time.
//
// - One session: the per-frame processing time (p50/p99, the server's own measure of decode +
//   track + judge) and the round trip client → ack.
// - N sessions at once, N growing: the frames dropped (the latest-frame-wins mailbox), the
//   processing time and the peak resident memory. The capacity is the largest N without a drop.
import FaceTracking
import Foundation
import LivenessCore
import LivenessEvidence
import LivenessClient
import LivenessKit
import LivenessService
import LivenessStore

#if canImport(Glibc)
import Glibc
#endif

/// The frames every client sends: a real talking face that neither blinks nor turns (vr-face2's
/// 5 s played forward, then backward: 10 s that never repeat a stretch at one lag, so the
/// looped-input check lets the sessions run; a plain loop is caught after 7 s), scaled and
/// padded to 640×480 at 30 fps, encoded as JPEG once.
func benchmarkFrames() throws -> [[UInt8]] {
    let source = "../shared/recordings/vr-face2-talking-no-blink.mp4"
    guard FileManager.default.fileExists(atPath: source) else { throw ServiceError("\(source) is needed for the streaming benchmark") }
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("liveness-bench-\(getpid())")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: dir) }
    let clip = dir.appendingPathComponent("clip.mp4").path
    let ffmpeg = Process()
    ffmpeg.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
    ffmpeg.arguments = ["-v", "error", "-y", "-i", source, "-filter_complex",
                        "[0:v]scale=480:480,setsar=1,pad=640:480:80:0,fps=30,split[a][b];[b]reverse[r];[a][r]concat=n=2:v=1:a=0[v]",
                        "-map", "[v]", "-an", "-c:v", "libx264", "-crf", "18", clip]
    try ffmpeg.run()
    ffmpeg.waitUntilExit()
    let reader = try VideoReader(path: clip)
    let frame = Image()
    var frames: [[UInt8]] = []
    while try reader.read(into: frame) != nil { frames.append(try frame.jpegData(quality: 85)) }
    return frames
}

/// Quantile of a sample (nil when empty).
func quantile(_ values: [Double], _ p: Double) -> Double? {
    guard !values.isEmpty else { return nil }
    let sorted = values.sorted()
    return sorted[min(sorted.count - 1, Int(p * Double(sorted.count)))]
}

final class ClientStats: @unchecked Sendable {
    private let lock = NSLock()
    private(set) var roundTrips: [Double] = []
    private(set) var errors: [String] = []
    private(set) var verdicts = 0
    func add(roundTrip: Double) { lock.withLock { roundTrips.append(roundTrip) } }
    func add(error: String) { lock.withLock { errors.append(error) } }
    func verdict() { lock.withLock { verdicts += 1 } }
}

/// One camera client: `seconds` of frames at 30 fps in real time (or lock-step for latency).
func camera(_ address: ServiceAddress, frames: [[UInt8]], seconds: Double, lockStep: Bool, stats: ClientStats) {
    do {
        let created = try ServiceClient.request("POST", "/v1/sessions", at: address)
        guard let session = try? created.decoded(as: ServiceClient.CreatedSession.self) else {
            return stats.add(error: "POST /v1/sessions: \(created.status)")
        }
        let connection = try WebSocketConnection(address: address, path: "/v1/sessions/\(session.id)/stream", token: session.token)
        defer { connection.close() }
        _ = connection.next(timeout: 10)
        connection.send(text: #"{"type":"start","ack":\#(lockStep),"width":640,"height":480}"#)
        let clock = ContinuousClock()
        let start = clock.now
        let count = min(frames.count, Int(seconds * 30))
        var ended = false
        for i in 0..<count where !ended {
            let due = start + .microseconds(Int64(i) * 1_000_000 / 30)
            if !lockStep {
                while clock.now < due {
                    if case .text(let text)? = connection.next(timeout: max(0.001, (due - clock.now).inSeconds)), text.contains("\"verdict\"") {
                        ended = true
                        stats.verdict()
                    }
                }
            }
            let sent = clock.now
            connection.send(binary: FrameHeader(sequence: UInt32(i), captureMicroseconds: Int64(i) * 1_000_000 / 30, format: .jpeg).encoded()
                            + frames[i])
            if lockStep {
                while let message = connection.next(timeout: 10), case .text(let text) = message {
                    if text.contains("\"verdict\"") { ended = true; stats.verdict(); break }
                    if text.contains("\"ack\"") { stats.add(roundTrip: (clock.now - sent).inSeconds); break }
                }
            }
        }
    } catch {
        stats.add(error: "\(error)")
    }
}

/// `store`: a SQLite store in that folder (`--data-dir`); `storeURL`: a PostgreSQL server
/// (`--store`); neither: sessions in memory.
func streamingBenchmark(sessions fixed: Int?, seconds: Double, store: String? = nil, storeURL: String? = nil) throws {
    let frames = try benchmarkFrames()
    var configuration = ServiceConfiguration()
    configuration.port = 0
    configuration.limits.maxSessions = 64
    if store != nil || storeURL != nil {
        // As `liveness serve --data-dir DIR` or `--store URL`, with `--store-key FILE`: a key drawn for this run.
        var generator = try SecureRandomGenerator()
        configuration.dataDirectory = store
        configuration.storeURL = storeURL
        configuration.storeKey = try StoreKey(bytes: (0..<StoreKey.keyBytes).map { _ in UInt8.random(in: 0...255, using: &generator) })
    }
    // The spec's passive check: the benchmark measures latency over whole recorded sessions.
    configuration.policy.challengeMode = .passive
    let server = try LivenessServer(configuration: configuration, model: try LandmarkModel.load())
    try server.start()
    defer { server.stop() }
    let address = try ServiceAddress(url: server.url)
    print("streaming: 640×480 JPEG frames (\(frames.map(\.count).reduce(0, +) / frames.count / 1024) KiB on average) at 30 fps, \(configuration.workers) workers, \(ProcessInfo.processInfo.activeProcessorCount) cores, \(Int(seconds)) s per step, sessions \(store.map { "in a SQLite store in \($0)" } ?? storeURL.map { "in PostgreSQL (\(PostgresSessionStore.redacted($0)))" } ?? "in memory")")

    // One session, lock-step: processing time and round trip.
    let one = ClientStats()
    let before = server.frameStatistics
    camera(address, frames: frames, seconds: seconds, lockStep: true, stats: one)
    let after = server.frameStatistics
    func ms(_ v: Double?) -> String { v.map { String(format: "%.1f ms", $0 * 1000) } ?? "-" }
    let single = server.frameSeconds(after: before.processed)
    print("one session (lock-step): \(after.processed - before.processed) frames; processing p50 \(ms(quantile(single, 0.5))), p99 \(ms(quantile(single, 0.99))); round trip client→ack p50 \(ms(quantile(one.roundTrips, 0.5))), p99 \(ms(quantile(one.roundTrips, 0.99)))")

    // N real-time sessions at once.
    print("sessions  frames  dropped  processing p50   p99   peak RSS")
    var capacity = 0
    let steps = fixed.map { [$0] } ?? [1, 2, 4, 6, 8, 10, 12, 14, 16, 20]
    for n in steps {
        let stats = ClientStats()
        let start = server.frameStatistics
        DispatchQueue.concurrentPerform(iterations: n) { _ in
            camera(address, frames: frames, seconds: seconds, lockStep: false, stats: stats)
        }
        Thread.sleep(forTimeInterval: 0.5)
        let end = server.frameStatistics
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        let dropped = end.dropped - start.dropped
        let step = server.frameSeconds(after: start.processed)
        print("\(String(n).leftPad(8))  \(String(end.processed - start.processed).leftPad(6))  \(String(dropped).leftPad(7))  \(ms(quantile(step, 0.5)).leftPad(14)) \(ms(quantile(step, 0.99)).leftPad(9)) \(String(usage.ru_maxrss / 1024).leftPad(6)) MiB"
              + (stats.errors.isEmpty ? "" : "  errors: \(stats.errors.prefix(2))"))
        if dropped == 0 && stats.errors.isEmpty { capacity = n } else if fixed == nil { break }
    }
    print("real-time 30 fps 640×480 sessions without a dropped frame: \(capacity) (of those tried)")
}

extension String {
    func leftPad(_ width: Int) -> String { count >= width ? self : String(repeating: " ", count: width - count) + self }
}
