/// The plausible range of every number a trace may hold (docs/trace-formats.md, "Plausible
/// values"). A value outside its range is an error naming the line and the field: it is
/// corrupt, hand-made or hostile, and would otherwise reach the machine or the report as a
/// number no tracker produces (a face centre of 1e308 overflows the report's rounding to
/// infinity; a rotation of −1000 °/s reads as a still handset).
///
/// Each range holds everything this engine's tracker writes (atan2 angles, EARs of real eyes,
/// landmarks a little outside the frame, video-estimated rotations between frames 1 µs apart)
/// and what ARKit reports, with room to spare.
struct TraceRange: Sendable {
    /// Inclusive bounds.
    let range: ClosedRange<Double>
    /// What the value is, with its unit, for messages.
    let meaning: String

    /// Engine `seconds` and ARKit `t`: |t| ≤ 10¹⁰ s (about 317 years, room for a Unix-epoch clock).
    static let time = TraceRange(range: -1e10...1e10, meaning: "seconds")
    /// `frame`: a 0-based index, at most 10⁹.
    static let frameIndex = TraceRange(range: 0...1e9, meaning: "frame index")
    /// `faces`: faces found on one frame.
    static let faceCount = TraceRange(range: 0...10_000, meaning: "faces")
    /// `face_center_x/y`, ARKit `faceCenter`, `faceBox` x and y: normalised, up to one frame
    /// beyond either edge.
    static let normalisedPosition = TraceRange(range: -1...2, meaning: "normalised 0…1 of the frame, at most one frame outside it")
    /// ARKit `faceBox` width and height, normalised.
    static let normalisedLength = TraceRange(range: 0...2, meaning: "normalised length, at most twice the frame")
    /// `ear_left/right`: eye aspect ratios (about 0.2–0.35 open, < 0.15 closed).
    static let eyeAspectRatio = TraceRange(range: 0...10, meaning: "eye aspect ratio")
    /// ARKit `eyeBlinkLeft/Right`: blendshape coefficients.
    static let closure = TraceRange(range: 0...1, meaning: "closure 0…1")
    /// `yaw_degrees`, `pitch_degrees`, `roll_degrees`, ARKit `yaw`, `pitch`, `roll`.
    static let angle = TraceRange(range: -180...180, meaning: "degrees")
    /// `box_x`, `box_y`: pixels, the box may stick out of the frame.
    static let pixelPosition = TraceRange(range: -100_000...100_000, meaning: "pixels")
    /// `box_w`, `box_h`, `eye_distance_px`: pixels.
    static let pixelLength = TraceRange(range: 0...100_000, meaning: "pixels")
    /// `planar_residual`: a homography's residual as a fraction of the eye distance (live turns
    /// read 0.03–0.3; 100 holds any fit of landmarks on the frame).
    static let planarResidual = TraceRange(range: 0...100, meaning: "fraction of the eye distance")
    static let edgeShare = TraceRange(range: 0...1, meaning: "share of the edge energy")
    /// `frame_difference`: a mean absolute difference of 8-bit grey levels.
    static let greyLevels = TraceRange(range: 0...255, meaning: "grey levels")
    /// `frame_width`, `frame_height`, ARKit `imageWidth`, `imageHeight`: pixels.
    static let frameSize = TraceRange(range: 1...100_000, meaning: "pixels")
    /// `device_rotation_dps`: an angular speed (a norm, never negative). The video estimate can
    /// read very high between frames microseconds apart; 10⁹ °/s holds any of them.
    static let degreesPerSecond = TraceRange(range: 0...1e9, meaning: "°/s, never negative")
    /// ARKit `rotationRate` components and motion-sidecar rates: a phone gyroscope's full scale
    /// is 35–70 rad/s (2000–4000 °/s).
    static let radiansPerSecond = TraceRange(range: -100...100, meaning: "rad/s")

    /// `value` when it lies in the range; otherwise an error naming the field.
    func check(_ value: Double, _ field: String, noun: String) throws(FieldError) -> Double {
        guard range.contains(value) else {
            throw FieldError(message: "\(noun) '\(field)' is \(value), outside its plausible range \(Self.format(range.lowerBound)) to \(Self.format(range.upperBound)) (\(meaning))")
        }
        return value
    }

    private static func format(_ v: Double) -> String {
        v.rounded() == v && abs(v) < 1e9 ? String(Int64(v)) : "\(v)"
    }
}

extension TraceFields {
    /// A number in `range`, or `nil` when absent.
    func number(_ name: String, in range: TraceRange) throws(FieldError) -> Double? {
        guard let v = try number(name) else { return nil }
        return try range.check(v, name, noun: noun)
    }

    /// A number in `range` that must be present.
    func requiredNumber(_ name: String, in range: TraceRange) throws(FieldError) -> Double {
        try range.check(try requiredNumber(name), name, noun: noun)
    }

    /// A whole number in `range`, or `nil` when absent.
    func integer(_ name: String, in range: TraceRange) throws(FieldError) -> Int? {
        guard let v = try number(name, in: range) else { return nil }
        guard let i = Int(exactly: v) else { throw FieldError(message: "\(noun) '\(name)' must be a whole number, not \(v)") }
        return i
    }
}
