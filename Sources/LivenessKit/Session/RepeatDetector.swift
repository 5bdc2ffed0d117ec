import FaceTracking
import LivenessCore

/// Finds, for each frame, the earlier frame of the session it repeats most closely, for the
/// looped-input check (`LivenessPolicy.loopCheck`, docs/presentation-attacks.md).
///
/// Each frame is reduced to a `side`² grey thumbnail (area-averaged) of one fixed subject
/// region: the first detected face's box enlarged by `regionScale`, kept for the session (a
/// looped recording repeats every region of the picture, and a live subject's own motion lies in
/// this one). The frame is compared with every kept frame at least `minimumLagSeconds` older: a
/// coarse pass on 8×8 block means picks `candidates`, the full thumbnails decide. The frame
/// keeps the previous frame's lag when that still matches about as well (at most 1.5 times the
/// best difference plus `continuationSlack` grey levels), so that a repeated stretch reads as one lag
/// even where it is still. Reported per frame: the lag in seconds, the mean absolute difference
/// at that lag, and the picture's motion (the difference from the frame
/// `Repetition.motionSpanSeconds` earlier), all in grey levels of the thumbnail. The decision is the pure machine's (`LoopCheck`).
///
/// Memory: at most `capacity` frames (1.3 KB each); older ones are dropped, so at 60 fps a
/// repetition is found up to 25 s back, at 240 fps up to 6 s.
final class RepeatDetector {
    /// The thumbnail's side, pixels.
    static let side = 32
    /// The subject region: the first face box enlarged by this factor about its centre.
    static let regionScale = 2.0
    /// Shortest lag looked at, seconds (a repetition sooner than this is a stutter, not a loop).
    static let minimumLagSeconds = 0.5
    /// Frames kept.
    static let capacity = 1500
    /// Coarse candidates refined with the full thumbnails.
    static let candidates = 4
    /// How much worse than 1.5 times the best match the previous lag may be and still be kept,
    /// grey levels.
    static let continuationSlack = 0.1

    /// What one frame repeats.
    struct Match {
        /// How far back the matching frame is, seconds.
        var lagSeconds: Double
        /// Mean absolute difference from it, grey levels.
        var difference: Double
        /// Mean absolute difference from the frame `Repetition.motionSpanSeconds` earlier (or the oldest kept),
        /// grey levels.
        var motion: Double
    }

    private struct Entry {
        var timestamp: Int64
        var pixels: [UInt8]
        var coarse: [UInt16]
    }

    private var region: Rect?
    private var frameSize = (0, 0)
    private var history: [Entry] = []
    private var start = 0  // ring start once full
    private var previousLag: Double?
    private let scratch = Image()

    /// The match of `frame` (timestamp µs, face box in pixels or nil); nil before a face was
    /// seen, on the first frame, and when nothing at least `minimumLagSeconds` old is kept.
    func match(frame: Image, timestampMicroseconds t: Int64, faceBox: Rect?) -> Match? {
        if frame.width != frameSize.0 || frame.height != frameSize.1 {
            reset()
            frameSize = (frame.width, frame.height)
        }
        if region == nil, let box = faceBox, box.width > 0 {
            let side = max(box.width, box.height) * Self.regionScale
            region = Rect(x: box.center.x - side / 2, y: box.center.y - side / 2, width: side, height: side)
        }
        guard let region,
              (try? frame.thumbnail(of: region, width: Self.side, height: Self.side, into: scratch)) != nil else { return nil }
        let n = Self.side
        var pixels = [UInt8](repeating: 0, count: n * n)
        scratch.withBGRBytes { bytes, row in
            for y in 0..<n { for x in 0..<n { pixels[y * n + x] = bytes[y * row + x] } }
        }
        let entry = Entry(timestamp: t, pixels: pixels, coarse: Self.coarse(pixels))
        defer { append(entry) }
        guard history.count > 0 else { return nil }
        // The picture's change over the last `motionSpanSeconds` (frame to frame a sway or a
        // blink moves a few hundredths of a grey level; over half a second, tenths to whole ones).
        let span = index(near: t - Int64(Repetition.motionSpanSeconds * 1e6)) ?? 0
        let motion = Self.difference(ordered(span)!.pixels, pixels)

        // Coarse pass over every kept frame old enough.
        let minimumLag = Int64(Self.minimumLagSeconds * 1e6)
        var best: [(Int, Int)] = []  // (coarse difference, ordered index)
        for k in 0..<history.count {
            let e = ordered(k)!
            guard t - e.timestamp >= minimumLag else { break }
            var d = 0
            for j in 0..<e.coarse.count { d += abs(Int(e.coarse[j]) - Int(entry.coarse[j])) }
            if best.count < Self.candidates {
                best.append((d, k))
                best.sort { $0.0 < $1.0 }
            } else if d < best[best.count - 1].0 {
                best[best.count - 1] = (d, k)
                best.sort { $0.0 < $1.0 }
            }
        }
        guard !best.isEmpty else { return nil }
        var found: (lag: Double, difference: Double)?
        for (_, k) in best {
            let e = ordered(k)!
            let d = Self.difference(e.pixels, pixels)
            if found == nil || d < found!.difference { found = (Double(t - e.timestamp) / 1e6, d) }
        }
        // The previous frame's lag, when it still matches about as well.
        if let lag = previousLag, let k = index(near: t - Int64(lag * 1e6)) {
            let e = ordered(k)!
            let d = Self.difference(e.pixels, pixels)
            if d <= found!.difference * 1.5 + Self.continuationSlack { found = (Double(t - e.timestamp) / 1e6, d) }
        }
        previousLag = found!.lag
        let q = NumberFormat.quantized
        return Match(lagSeconds: q(found!.lag), difference: q(found!.difference), motion: q(motion))
    }

    private func reset() {
        region = nil
        history.removeAll(keepingCapacity: true)
        start = 0
        previousLag = nil
    }

    private func append(_ e: Entry) {
        if history.count < Self.capacity {
            history.append(e)
        } else {
            history[start] = e
            start = (start + 1) % Self.capacity
        }
    }

    /// The k-th kept frame, oldest first.
    private func ordered(_ k: Int) -> Entry? {
        guard k >= 0, k < history.count else { return nil }
        return history[(start + k) % history.count]
    }

    /// The kept frame closest to `timestamp`, if one lies within a frame interval of it and is old
    /// enough to be a lag.
    private func index(near timestamp: Int64) -> Int? {
        var lo = 0, hi = history.count - 1
        guard hi >= 0 else { return nil }
        while lo < hi {
            let mid = (lo + hi) / 2
            if ordered(mid)!.timestamp < timestamp { lo = mid + 1 } else { hi = mid }
        }
        var k = lo
        if k > 0, abs(ordered(k - 1)!.timestamp - timestamp) < abs(ordered(k)!.timestamp - timestamp) { k -= 1 }
        let interval = history.count > 1 ? (ordered(history.count - 1)!.timestamp - ordered(0)!.timestamp) / Int64(history.count - 1) : 0
        guard abs(ordered(k)!.timestamp - timestamp) <= max(interval / 2, 1) else { return nil }
        return k
    }

    /// 8×8 block sums of a side² thumbnail.
    private static func coarse(_ p: [UInt8]) -> [UInt16] {
        let n = side, b = side / 8
        var out = [UInt16](repeating: 0, count: 64)
        for y in 0..<n { for x in 0..<n { out[(y / b) * 8 + x / b] &+= UInt16(p[y * n + x]) } }
        return out
    }

    /// Mean absolute difference of two thumbnails, grey levels.
    private static func difference(_ a: [UInt8], _ b: [UInt8]) -> Double {
        var sum = 0
        for i in 0..<a.count { sum += abs(Int(a[i]) - Int(b[i])) }
        return Double(sum) / Double(a.count)
    }
}
