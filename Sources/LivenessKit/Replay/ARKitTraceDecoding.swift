import LivenessCore

/// The header line of an `arkit-trace/1` file.
public struct ARKitTraceHeader: Sendable, Equatable {
    /// The format identifier this reader understands.
    public static let formatIdentifier = "arkit-trace/1"
    /// Free text naming where the trace came from, if given.
    public var source: String?
    /// Camera image width in pixels, if given; becomes each observation's `frameWidth`.
    public var imageWidth: Int?
    /// Camera image height in pixels, if given; becomes each observation's `frameHeight`.
    public var imageHeight: Int?
}

/// Turns the lines of an `arkit-trace/1` file (see `arkit-trace.md`) into observations.
///
/// * `t` (seconds on the capture clock) → `timestampMicroseconds = Int64((t × 10⁶).rounded())`;
///   the frame index is the frame's 0-based position among the frame lines.
/// * `face: false` → no face (other keys ignored). `face: true` requires `eyeBlinkLeft`,
///   `eyeBlinkRight` (0…1, used as `.closure`, no conditioning), `yaw` (degrees, already
///   filtered by ARKit: `yawIsFiltered = true`) and `faceCenter` ([x, y] normalised).
/// * `pitch`, `roll` (degrees) are kept; `faceBox` ([x, y, w, h] normalised) becomes a pixel box
///   when the header gives the image size, and is otherwise ignored.
/// * `rotationRate` ([x, y, z] rad/s) → angular speed `‖rate‖ × 180/π` °/s from the `.sensor`;
///   absent or `null` → unknown.
/// * Every number must lie in its `TraceRange` (docs/trace-formats.md, "Plausible values").
/// * Keys not listed above are ignored.
enum ARKitTraceDecoding {
    /// Parses the header object; throws when it is not `arkit-trace/1`.
    static func header(_ f: JSONFields) throws(FieldError) -> ARKitTraceHeader {
        let format = try f.text("format")
        guard format == ARKitTraceHeader.formatIdentifier else {
            throw FieldError(message: "unsupported trace format '\(TraceReader.quoted(format ?? ""))'; this reader knows '\(ARKitTraceHeader.formatIdentifier)'")
        }
        return ARKitTraceHeader(source: try f.text("source"), imageWidth: try f.integer("imageWidth", in: .frameSize),
                                imageHeight: try f.integer("imageHeight", in: .frameSize))
    }

    /// The observation of one frame line (timestamps as written, not yet made relative).
    /// `droppedBox` is set when a `faceBox` was ignored for want of an image size.
    static func observation(_ f: JSONFields, index: Int, header: ARKitTraceHeader,
                            droppedBox: inout Bool) throws(FieldError) -> Observation {
        let t = try f.requiredNumber("t", in: .time)
        guard let tracked = try f.bool("face") else { throw FieldError(message: "missing key 'face'") }
        var face: FaceObservation?
        if tracked {
            func closure(_ name: String) throws(FieldError) -> Double {
                let v = try f.requiredNumber(name)
                guard (0...1).contains(v) else { throw FieldError(message: "key '\(name)' must lie in 0...1, not \(v)") }
                return v
            }
            func check(_ values: [Double], _ name: String, _ ranges: [TraceRange]) throws(FieldError) -> [Double] {
                for (v, range) in zip(values, ranges) { _ = try range.check(v, name, noun: "key") }
                return values
            }
            let left = try closure("eyeBlinkLeft")
            let right = try closure("eyeBlinkRight")
            let yaw = try f.requiredNumber("yaw", in: .angle)
            guard let center = try f.numbers("faceCenter", count: 2) else { throw FieldError(message: "missing key 'faceCenter'") }
            _ = try check(center, "faceCenter", [.normalisedPosition, .normalisedPosition])
            var box: FaceBox?
            if let b = try f.numbers("faceBox", count: 4) {
                _ = try check(b, "faceBox", [.normalisedPosition, .normalisedPosition, .normalisedLength, .normalisedLength])
                if let w = header.imageWidth, let h = header.imageHeight {
                    box = FaceBox(x: b[0] * Double(w), y: b[1] * Double(h), width: b[2] * Double(w), height: b[3] * Double(h))
                } else {
                    droppedBox = true
                }
            }
            face = FaceObservation(centerX: center[0], centerY: center[1], eyes: .closure(left: left, right: right),
                                   yawDegrees: yaw, pitchDegrees: try f.number("pitch", in: .angle), rollDegrees: try f.number("roll", in: .angle),
                                   box: box, yawIsFiltered: true)
        }
        var rotation = DeviceRotation.unknown
        if let rate = try f.numbers("rotationRate", count: 3) {
            for v in rate { _ = try TraceRange.radiansPerSecond.check(v, "rotationRate", noun: "key") }
            let norm = (rate[0] * rate[0] + rate[1] * rate[1] + rate[2] * rate[2]).squareRoot()
            rotation = DeviceRotation(degreesPerSecond: norm * 180 / Double.pi, source: .sensor)
        }
        return Observation(frameIndex: index, timestampMicroseconds: try TraceTime.microseconds(seconds: t, field: "t"),
                           face: face, deviceRotation: rotation,
                           frameWidth: header.imageWidth, frameHeight: header.imageHeight)
    }
}
