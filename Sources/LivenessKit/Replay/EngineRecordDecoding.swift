import LivenessCore

/// Turns one record of this engine's own traces (CSV row or JSONL object, the columns of
/// `TraceWriter.columns`) into the `Observation` that `FaceObserver` built for that frame.
///
/// * `frame` → `frameIndex`; `seconds` → `timestampMicroseconds = Int64((seconds × 10⁶).rounded())`.
/// * A face only when `face` is 1: centre from `face_center_x/y`, eyes
///   `.aspectRatio(left: ear_left, right: ear_right)`, raw (unfiltered) yaw from `yaw_degrees`,
///   the line-of-sight yaw from `line_of_sight_yaw_degrees` when present (older traces lack it),
///   `pitch_degrees`, `roll_degrees`, `eye_distance_px`, `planar_residual` (older traces lack it:
///   the parallax check is then not evaluated) and the box `box_x/y/w/h` when present.
/// * `frame_difference` (grey levels) when present (older traces lack it: the frozen-input
///   check is then not evaluated); `repeat_lag` (s), `repeat_difference` and `repeat_motion`
///   (grey levels) when all three are present (the looped-input check's input);
///   `border_enclosure` (grey levels) when present (the recapture check's input; older traces
///   lack it: the check is then not evaluated).
/// * `eye_edge_left`, `eye_edge_right` (0…1) when present (the blink rule's eye-edge check;
///   older traces lack them: closures are then judged alone).
/// * `faces` → `faceCount` (default 1 with a face, else 0).
/// * `device_rotation_dps` (°/s) with `rotation_source`; both absent → unknown.
/// * `frame_width`/`frame_height` (pixels) when present.
/// * Every number must lie in its `TraceRange` (docs/trace-formats.md, "Plausible values").
///
/// The core-derived columns (`eye_closure_*`, `relative_yaw_degrees`, `credited`, `phase`, ...)
/// are the machine's output, not its input, and are not read; nor are landmarks.
enum EngineRecordDecoding {
    /// Columns a CSV header must contain.
    static let requiredColumns = ["frame", "seconds", "face", "face_center_x", "face_center_y",
                                  "ear_left", "ear_right", "yaw_degrees"]

    /// The observation of one record (timestamps as written, not yet made relative).
    static func observation(_ f: some TraceFields) throws(FieldError) -> Observation {
        guard let frame = try f.integer("frame", in: .frameIndex) else { throw FieldError(message: "missing \(f.noun) 'frame'") }
        let seconds = try f.requiredNumber("seconds", in: .time)
        let tracked = try f.requiredFlag("face")
        var face: FaceObservation?
        if tracked {
            face = FaceObservation(
                centerX: try f.requiredNumber("face_center_x", in: .normalisedPosition),
                centerY: try f.requiredNumber("face_center_y", in: .normalisedPosition),
                eyes: .aspectRatio(left: try f.requiredNumber("ear_left", in: .eyeAspectRatio),
                                   right: try f.requiredNumber("ear_right", in: .eyeAspectRatio)),
                yawDegrees: try f.requiredNumber("yaw_degrees", in: .angle),
                lineOfSightYawDegrees: try f.number("line_of_sight_yaw_degrees", in: .angle),
                pitchDegrees: try f.number("pitch_degrees", in: .angle), rollDegrees: try f.number("roll_degrees", in: .angle),
                box: try box(f), eyeDistancePixels: try f.number("eye_distance_px", in: .pixelLength),
                planarResidual: try f.number("planar_residual", in: .planarResidual),
                eyeEdgeLeft: try f.number("eye_edge_left", in: .edgeShare),
                eyeEdgeRight: try f.number("eye_edge_right", in: .edgeShare))
        }
        let faces = try f.integer("faces", in: .faceCount)
        return Observation(
            frameIndex: frame, timestampMicroseconds: try TraceTime.microseconds(seconds: seconds, field: "seconds"),
            face: face, faceCount: faces, deviceRotation: try rotation(f),
            frameWidth: try size(f, "frame_width"), frameHeight: try size(f, "frame_height"),
            frameDifference: try f.number("frame_difference", in: .greyLevels), repetition: try repetition(f),
            borderEnclosure: try f.number("border_enclosure", in: .greyLevels))
    }

    private static func repetition(_ f: some TraceFields) throws(FieldError) -> Repetition? {
        let lag = try f.number("repeat_lag", in: .time)
        let difference = try f.number("repeat_difference", in: .greyLevels)
        let motion = try f.number("repeat_motion", in: .greyLevels)
        switch (lag, difference, motion) {
        case let (l?, d?, m?): return Repetition(lagSeconds: l, difference: d, motion: m)
        case (nil, nil, nil): return nil
        default: throw FieldError(message: "a repetition needs all of repeat_lag, repeat_difference, repeat_motion or none")
        }
    }

    private static func box(_ f: some TraceFields) throws(FieldError) -> FaceBox? {
        let names = ["box_x", "box_y", "box_w", "box_h"]
        let ranges: [TraceRange] = [.pixelPosition, .pixelPosition, .pixelLength, .pixelLength]
        var values: [Double] = []
        for (name, range) in zip(names, ranges) { if let v = try f.number(name, in: range) { values.append(v) } }
        if values.isEmpty { return nil }
        guard values.count == 4 else {
            throw FieldError(message: "the face box needs all of \(names.joined(separator: ", ")) or none")
        }
        return FaceBox(x: values[0], y: values[1], width: values[2], height: values[3])
    }

    private static func rotation(_ f: some TraceFields) throws(FieldError) -> DeviceRotation {
        let dps = try f.number("device_rotation_dps", in: .degreesPerSecond)
        guard let name = try f.text("rotation_source") else {
            if dps != nil { throw FieldError(message: "'device_rotation_dps' is given without 'rotation_source'") }
            return .unknown
        }
        guard let source = RotationSource(rawValue: name) else {
            throw FieldError(message: "\(f.noun) 'rotation_source' must be sensor, video or unknown, not '\(TraceReader.quoted(name))'")
        }
        return DeviceRotation(degreesPerSecond: dps, source: source)
    }

    private static func size(_ f: some TraceFields, _ name: String) throws(FieldError) -> Int? {
        try f.integer(name, in: .frameSize)
    }
}

/// Trace time conversion.
enum TraceTime {
    /// Seconds (as written in a trace) to whole microseconds, rounded to nearest:
    /// `Int64((seconds × 10⁶).rounded())`, the same conversion the trace writer's 6 decimals invert.
    static func microseconds(seconds: Double, field: String) throws(FieldError) -> Int64 {
        let micros = (seconds * 1_000_000).rounded()
        guard micros.isFinite, abs(micros) < 9.0e18 else {
            throw FieldError(message: "'\(field)' is not a usable time in seconds: \(seconds)")
        }
        return Int64(micros)
    }
}
