import FaceTracking
import LivenessCore

/// How much the face region changed since the previous frame, for the frozen-input check: the
/// mean absolute difference, in grey levels (0…255), between `thumbnailSide`² grey thumbnails
/// (area-averaged by OpenCV) of one fixed region of the two frames — the face box enlarged by
/// `margin`, anchored where the face was when the comparison began.
///
/// The region stays put while the face stays inside it (the box's centre within
/// `anchorTolerance` of the region's width, its width within ±`anchorTolerance`); when the face
/// moves further the region is anchored again, and that frame's difference is the change of the
/// region the face left (large: a moving face is not frozen; and a face that jumps from one
/// frame to the next shows its jump to the continuity check). Without a face there is nothing to compare. A camera's face region always changes
/// (sensor noise, a live subject's sway and blinks); a frozen decoder or an injected still repeats
/// it exactly. The face region, not the whole frame, so that a static background that a low
/// bit-rate encoder copies from frame to frame does not count. Quantized to trace precision.
final class FrameDifference {
    /// The thumbnail's side, pixels.
    static let thumbnailSide = 48
    /// The region: the face box enlarged by this factor about its centre.
    static let margin = 1.25
    /// How far (a share of the region's width) the face may drift before re-anchoring.
    static let anchorTolerance = 0.12
    private var previous = Image()
    private var current = Image()
    private var anchor: Rect?

    /// The difference of the face region of `frame` (face box `box` in pixels, nil without a
    /// face) from the previous frame's; on a frame that anchors the region again, the difference
    /// of the region it leaves; `nil` when there is no face, on the first frame with one, or when
    /// the thumbnail cannot be made.
    func difference(of frame: Image, faceBox box: Rect?) -> Double? {
        guard let box, box.width > 0, box.height > 0 else {
            anchor = nil
            return nil
        }
        if let a = anchor, Self.contains(a, box) {
            guard (try? frame.thumbnail(of: a, width: Self.thumbnailSide, height: Self.thumbnailSide, into: current)) != nil else {
                anchor = nil
                return nil
            }
            defer { swap(&previous, &current) }
            return NumberFormat.quantized(Self.meanAbsoluteDifference(previous, current))
        }
        // The face left the region: what changed there since the previous frame, then a new region.
        var left: Double?
        if let a = anchor,
           (try? frame.thumbnail(of: a, width: Self.thumbnailSide, height: Self.thumbnailSide, into: current)) != nil {
            left = NumberFormat.quantized(Self.meanAbsoluteDifference(previous, current))
        }
        let side = max(box.width, box.height) * Self.margin
        let c = box.center
        let region = Rect(x: c.x - side / 2, y: c.y - side / 2, width: side, height: side)
        anchor = (try? frame.thumbnail(of: region, width: Self.thumbnailSide, height: Self.thumbnailSide, into: previous)) != nil
            ? region : nil
        return left
    }

    /// Whether the face `box` is still where the region `a` was anchored.
    private static func contains(_ a: Rect, _ box: Rect) -> Bool {
        let tolerance = anchorTolerance * a.width
        let side = max(box.width, box.height) * margin
        return abs(box.center.x - a.center.x) <= tolerance && abs(box.center.y - a.center.y) <= tolerance
            && abs(side - a.width) <= tolerance
    }

    /// Mean absolute difference of two grey images of one size, grey levels.
    static func meanAbsoluteDifference(_ a: Image, _ b: Image) -> Double {
        let width = a.width, height = a.height
        guard width > 0, height > 0, b.width == width, b.height == height else { return .infinity }
        let total = a.withBGRBytes { pa, rowA in
            b.withBGRBytes { pb, rowB -> Int in
                var sum = 0
                for y in 0..<height {
                    for x in 0..<width {
                        sum += abs(Int(pa[y * rowA + x]) - Int(pb[y * rowB + x]))
                    }
                }
                return sum
            }
        }
        return Double(total) / Double(width * height)
    }
}

/// The frozen-input check's measurer (its decision: `FrozenCheck`; the continuity check reads the
/// same difference, `ContinuityCheck`). The thumbnails come from the grey copy (and its
/// reductions by 2, 4, ...), not from the colour frame: a third of the pixels, or fewer.
extension FrameDifference: CheckMeasurer {
    func measure(_ frame: CheckFrame, machine: LivenessMachine, into result: inout FaceObserver.Result) {
        guard let d = difference(of: frame.gray, faceBox: frame.measurement.face?.box) else { return }
        result.observation.frameDifference = d
        result.record.frameDifference = d
    }
}
