import FaceTracking
import LivenessCore

/// How much each frame's picture differs from the previous frame's, for the frozen-input check:
/// the mean absolute difference, in grey levels (0…255), between small grey thumbnails of the
/// two frames (longer side `thumbnailSide` pixels, area-averaged by OpenCV). A camera's frames
/// always differ (sensor noise, a live subject: the live real clips never stay at or below 0.1
/// for more than 0.44 s); a frozen decoder or an injected still repeats the same picture (the
/// real freeze clip reads 0.0013–0.0016). Quantized to trace precision.
final class FrameDifference {
    /// The thumbnail's longer side, pixels.
    static let thumbnailSide = 64
    private var previous = Image()
    private var current = Image()
    private var hasPrevious = false

    /// The difference of `frame` from the previous frame given; `nil` for the first frame, after
    /// a change of frame size, or when the thumbnail cannot be made.
    func difference(of frame: Image) -> Double? {
        guard (try? frame.reducedGray(maxSide: Self.thumbnailSide, into: current)) != nil else {
            hasPrevious = false
            return nil
        }
        defer {
            swap(&previous, &current)
            hasPrevious = true
        }
        guard hasPrevious, previous.width == current.width, previous.height == current.height else { return nil }
        let width = current.width, height = current.height
        guard width > 0, height > 0 else { return nil }
        let total = previous.withBGRBytes { a, rowA in
            current.withBGRBytes { b, rowB -> Int in
                var sum = 0
                for y in 0..<height {
                    for x in 0..<width {
                        sum += abs(Int(a[y * rowA + x]) - Int(b[y * rowB + x]))
                    }
                }
                return sum
            }
        }
        return NumberFormat.quantized(Double(total) / Double(width * height))
    }
}
