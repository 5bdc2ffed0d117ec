import FaceTracking
import Foundation

/// Decodes a `FrameSource` ahead of its consumer on a thread of its own, into a small pool of
/// frames: while one frame is tracked, the next ones are decoded on the other core, and each
/// frame's grey copy (which the tracker and the rotation estimate share) is made there too. The frames
/// and their timestamps are exactly those of reading the source in turn; only the time at which
/// they are decoded changes.
///
/// Bounded: at most `depth` decoded frames wait; the decoder sleeps while the pool is empty.
/// `stop()` ends the decoder and waits for it, so the source is never read by two threads; the
/// owner must call it (the decoder thread holds the prefetcher while it runs).
final class FramePrefetcher: @unchecked Sendable {
    /// A decoded frame, or how the input ended.
    enum Item {
        case frame(DecodedFrame, timestamp: Int64)
        case failure(InputError)
        case end
    }

    private let source: FrameSource
    private let condition = NSCondition()
    private var free: [DecodedFrame]
    private var ready: [Item] = []
    private var stopping = false
    private var running = true

    /// Starts decoding `source` ahead, at most `depth` frames.
    init(source: FrameSource, depth: Int = 3) {
        self.source = source
        free = (0..<(max(1, depth) + 1)).map { _ in DecodedFrame() }
        // The thread holds the prefetcher until it returns; the prefetcher does not hold the
        // thread (a Foundation thread keeps its block after it ends, so a stored thread would
        // keep the prefetcher, its source and its frames alive for the life of the process).
        let thread = Thread { [self] in decode() }
        thread.name = "liveness-decode"
        thread.stackSize = 4 << 20
        thread.start()
    }

    deinit { stop() }

    private func decode() {
        while true {
            condition.lock()
            while free.isEmpty && !stopping { condition.wait() }
            if stopping {
                running = false
                condition.broadcast()
                condition.unlock()
                return
            }
            let decoded = free.removeLast()
            condition.unlock()
            let item: Item
            do {
                if let t = try source.next(into: decoded.image) {
                    // A grey copy that cannot be made (never for a decoded frame) is left to the
                    // consumer, whose own conversion then reports the problem.
                    decoded.hasGray = (try? decoded.image.gray(into: decoded.gray)) != nil
                    item = .frame(decoded, timestamp: t)
                } else {
                    item = .end
                }
            } catch {
                item = .failure(error)
            }
            condition.lock()
            if case .frame = item {} else { free.append(decoded) }
            ready.append(item)
            condition.broadcast()
            let finished: Bool
            if case .frame = item { finished = false } else { finished = true }
            if finished {
                running = false
                condition.unlock()
                return
            }
            condition.unlock()
        }
    }

    /// The next decoded frame (borrowed until `recycle`), the end, or the decoding error.
    func next() -> Item {
        condition.lock()
        defer { condition.unlock() }
        while ready.isEmpty && running { condition.wait() }
        guard !ready.isEmpty else { return .end }
        let item = ready.removeFirst()
        if case .frame = item {} else { ready.insert(item, at: 0) }  // the end stays the end
        return item
    }

    /// Gives a frame back to the pool once the consumer is done with it.
    func recycle(_ frame: DecodedFrame) {
        condition.withLock {
            free.append(frame)
            condition.broadcast()
        }
    }

    /// Stops decoding and waits for the decoder thread.
    func stop() {
        condition.lock()
        stopping = true
        condition.broadcast()
        while running { condition.wait() }
        condition.unlock()
    }
}

/// A decoded frame of the prefetcher's pool and its grey copy.
final class DecodedFrame {
    /// The upright BGR frame.
    let image = Image()
    /// `image` in grey (valid when `hasGray`).
    let gray = Image()
    var hasGray = false
}
