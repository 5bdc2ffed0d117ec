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
/// Memory: the frames of the last `maximumLagSeconds`, at most `capacity` (1.2 KB each, in flat
/// buffers that grow by doubling: 0.9 MB for 25 s at 30 fps); at 240 fps a repetition is found
/// up to 6 s back. Nothing is allocated per frame once the buffers have grown.
final class RepeatDetector {
    /// The thumbnail's side, pixels.
    static let side = 32
    /// The subject region: the first face box enlarged by this factor about its centre.
    static let regionScale = 2.0
    /// Shortest lag looked at, seconds (a repetition sooner than this is a stutter, not a loop).
    static let minimumLagSeconds = 0.5
    /// Frames kept at most.
    static let capacity = 1500
    /// Frames older than this are dropped, seconds (the scan cap and the time before it).
    static let maximumLagSeconds = 25.0
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

    /// The kept frames: a ring of `count` slots starting at `first`, stored flat (thumbnail
    /// pixels, 8×8 block sums, timestamps) so that a frame allocates nothing once the ring has
    /// grown to the session's length.
    private var pixels: [UInt8] = []
    private var coarse: [UInt16] = []
    private var timestamps: [Int64] = []
    private var slots = 0
    private var first = 0
    private var count = 0
    private var current = [UInt8](repeating: 0, count: side * side)
    private var currentCoarse = [UInt16](repeating: 0, count: 64)
    private var best: [(Int, Int)] = []

    private var region: Rect?
    private var frameSize = (0, 0)
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
        scratch.withBGRBytes { bytes, row in
            for y in 0..<n { for x in 0..<n { current[y * n + x] = bytes[y * row + x] } }
        }
        Self.blockSums(current, into: &currentCoarse)
        // Frames older than the longest lag looked for are dropped.
        while count > 0, t - timestamps[first] > Int64(Self.maximumLagSeconds * 1e6) { first = (first + 1) % slots; count -= 1 }
        defer { append(t) }
        guard count > 0 else { return nil }
        // The picture's change over the last `motionSpanSeconds` (frame to frame a sway or a
        // blink moves a few hundredths of a grey level; over half a second, tenths to whole ones).
        let motion = difference(slot(index(near: t - Int64(Repetition.motionSpanSeconds * 1e6)) ?? 0))

        // Coarse pass over every kept frame old enough.
        let minimumLag = Int64(Self.minimumLagSeconds * 1e6)
        best.removeAll(keepingCapacity: true)  // (coarse difference, index oldest first), best first
        for k in 0..<count {
            let s = slot(k)
            guard t - timestamps[s] >= minimumLag else { break }
            var d = 0
            for j in 0..<64 { d += abs(Int(coarse[s * 64 + j]) - Int(currentCoarse[j])) }
            if best.count < Self.candidates || d < best[best.count - 1].0 {
                if best.count == Self.candidates { best.removeLast() }
                let at = best.firstIndex { $0.0 > d } ?? best.count
                best.insert((d, k), at: at)
            }
        }
        guard !best.isEmpty else { return nil }
        var found: (lag: Double, difference: Double)?
        for (_, k) in best {
            let d = difference(slot(k))
            if found == nil || d < found!.difference { found = (Double(t - timestamps[slot(k)]) / 1e6, d) }
        }
        // The previous frame's lag, when it still matches about as well.
        if let lag = previousLag, let k = index(near: t - Int64(lag * 1e6)), t - timestamps[slot(k)] >= minimumLag {
            let d = difference(slot(k))
            if d <= found!.difference * 1.5 + Self.continuationSlack { found = (Double(t - timestamps[slot(k)]) / 1e6, d) }
        }
        previousLag = found!.lag
        let q = NumberFormat.quantized
        return Match(lagSeconds: q(found!.lag), difference: q(found!.difference), motion: q(motion))
    }

    private func reset() {
        region = nil
        first = 0
        count = 0
        previousLag = nil
    }

    /// Keeps the current thumbnail as the newest frame; the ring grows (doubling) until it holds
    /// `capacity` frames, then overwrites the oldest.
    private func append(_ t: Int64) {
        if count == slots, slots < Self.capacity {
            // Grow: unroll the ring into the front of larger buffers.
            let grown = min(Self.capacity, max(64, slots * 2))
            var p = [UInt8](repeating: 0, count: grown * Self.side * Self.side)
            var c = [UInt16](repeating: 0, count: grown * 64)
            var ts = [Int64](repeating: 0, count: grown)
            let m = Self.side * Self.side
            for k in 0..<count {
                let s = slot(k)
                for j in 0..<m { p[k * m + j] = pixels[s * m + j] }
                for j in 0..<64 { c[k * 64 + j] = coarse[s * 64 + j] }
                ts[k] = timestamps[s]
            }
            pixels = p
            coarse = c
            timestamps = ts
            slots = grown
            first = 0
        }
        let s: Int
        if count < slots {
            s = (first + count) % slots
            count += 1
        } else {
            s = first
            first = (first + 1) % slots
        }
        let m = Self.side * Self.side
        for j in 0..<m { pixels[s * m + j] = current[j] }
        for j in 0..<64 { coarse[s * 64 + j] = currentCoarse[j] }
        timestamps[s] = t
    }

    /// The storage slot of the k-th kept frame, oldest first.
    private func slot(_ k: Int) -> Int { (first + k) % slots }

    /// The kept frame closest to `timestamp` (index, oldest first), if one lies within half a
    /// frame interval of it.
    private func index(near timestamp: Int64) -> Int? {
        guard count > 0 else { return nil }
        var lo = 0, hi = count - 1
        while lo < hi {
            let mid = (lo + hi) / 2
            if timestamps[slot(mid)] < timestamp { lo = mid + 1 } else { hi = mid }
        }
        var k = lo
        if k > 0, abs(timestamps[slot(k - 1)] - timestamp) < abs(timestamps[slot(k)] - timestamp) { k -= 1 }
        let interval = count > 1 ? (timestamps[slot(count - 1)] - timestamps[slot(0)]) / Int64(count - 1) : 0
        guard abs(timestamps[slot(k)] - timestamp) <= max(interval / 2, 1) else { return nil }
        return k
    }

    /// Mean absolute difference of the current thumbnail from the one in slot `s`, grey levels.
    private func difference(_ s: Int) -> Double {
        let m = Self.side * Self.side
        var sum = 0
        for j in 0..<m { sum += abs(Int(pixels[s * m + j]) - Int(current[j])) }
        return Double(sum) / Double(m)
    }

    /// 8×8 block sums of a side² thumbnail.
    private static func blockSums(_ p: [UInt8], into out: inout [UInt16]) {
        let n = side, b = side / 8
        for j in 0..<64 { out[j] = 0 }
        for y in 0..<n { for x in 0..<n { out[(y / b) * 8 + x / b] &+= UInt16(p[y * n + x]) } }
    }
}

/// The looped-input check's measurer (its decision: `LoopCheck`).
extension RepeatDetector: CheckMeasurer {
    func measure(_ frame: CheckFrame, machine: LivenessMachine, into result: inout FaceObserver.Result) {
        guard let m = match(frame: frame.gray, timestampMicroseconds: frame.timestampMicroseconds,
                            faceBox: frame.measurement.face?.box) else { return }
        result.observation.repetition = Repetition(lagSeconds: m.lagSeconds, difference: m.difference, motion: m.motion)
        result.record.repeatLagSeconds = m.lagSeconds
        result.record.repeatDifference = m.difference
        result.record.repeatMotion = m.motion
    }
}
