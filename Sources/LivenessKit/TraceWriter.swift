import LivenessCore

/// Trace file formats.
public enum TraceFormat: String, Sendable, CaseIterable {
    /// Comma-separated values with a header row.
    case csv
    /// JSON Lines: one object per frame with the same keys as the CSV header.
    case jsonl
}

/// Writes trace records, one per frame, as CSV or JSON Lines.
public final class TraceWriter {
    /// The columns, in order (the CSV header; the JSONL keys).
    public static let columns = [
        "frame", "seconds", "face", "faces", "box_x", "box_y", "box_w", "box_h", "face_center_x", "face_center_y",
        "ear_left", "ear_right", "yaw_degrees", "line_of_sight_yaw_degrees", "pitch_degrees", "roll_degrees", "eye_distance_px",
        "eye_closure_left", "eye_closure_right", "relative_yaw_degrees", "device_rotation_dps", "rotation_source",
        "credited", "not_credited_reason", "phase", "hud", "frame_width", "frame_height", "planar_residual",
        "frame_difference", "repeat_lag", "repeat_difference", "repeat_motion", "border_enclosure",
        "eye_edge_left", "eye_edge_right", "eye_edge_relative", "eyes_open_by_edges", "eyes_closed",
        "eye_closure_baseline",
    ]

    private let sink: OutputSink
    public let format: TraceFormat
    private let landmarks: Bool
    private var wroteHeader = false

    /// - Parameter landmarks: also write the 68 landmarks (`lm0_x, lm0_y, ...` columns; a
    ///   `landmarks` array in JSONL).
    public init(sink: OutputSink, format: TraceFormat, landmarks: Bool = false) {
        self.sink = sink
        self.format = format
        self.landmarks = landmarks
    }

    private func values(_ r: TraceRecord) -> [String?] {
        func n(_ v: Double?) -> String? { v.map(NumberFormat.string) }
        return [
            String(r.frame), NumberFormat.string(r.seconds), r.face ? "1" : "0", String(r.faces),
            n(r.box?.x), n(r.box?.y), n(r.box?.width), n(r.box?.height), n(r.faceCenterX), n(r.faceCenterY),
            n(r.earLeft), n(r.earRight), n(r.yawDegrees), n(r.lineOfSightYawDegrees), n(r.pitchDegrees), n(r.rollDegrees), n(r.eyeDistancePixels),
            n(r.eyeClosureLeft), n(r.eyeClosureRight), n(r.relativeYawDegrees), n(r.deviceRotationDegreesPerSecond),
            r.rotationSource.rawValue, r.credited.map { $0 ? "1" : "0" }, r.notCreditedReason, r.phase, r.hud,
            String(r.frameWidth), String(r.frameHeight), n(r.planarResidual), n(r.frameDifference),
            n(r.repeatLagSeconds), n(r.repeatDifference), n(r.repeatMotion), n(r.borderEnclosure),
            n(r.eyeEdgeLeft), n(r.eyeEdgeRight), n(r.eyeEdgeRelative), r.eyesOpenByEdges.map { $0 ? "1" : "0" },
            r.eyesClosed.map { $0 ? "1" : "0" }, n(r.eyeClosureBaseline),
        ]
    }

    /// Columns whose values are text (quoted in JSONL).
    private static let textColumns: Set<String> = ["rotation_source", "not_credited_reason", "phase", "hud"]

    /// Writes one record (and the CSV header before the first).
    public func write(_ record: TraceRecord) {
        let fields = values(record)
        switch format {
        case .csv:
            if !wroteHeader {
                var header = Self.columns
                if landmarks { for i in 0..<68 { header += ["lm\(i)_x", "lm\(i)_y"] } }
                sink.write(header.joined(separator: ",") + "\n")
                wroteHeader = true
            }
            var line = fields.map { $0 ?? "" }
            if landmarks {
                line += record.landmarks.map { $0.map(NumberFormat.string) } ?? Array(repeating: "", count: 136)
            }
            sink.write(line.joined(separator: ",") + "\n")
        case .jsonl:
            var parts: [String] = []
            for (key, value) in zip(Self.columns, fields) {
                let rendered: String
                if let value { rendered = Self.textColumns.contains(key) ? "\"\(value)\"" : value } else { rendered = "null" }
                parts.append("\"\(key)\":\(rendered)")
            }
            if landmarks {
                let list = record.landmarks.map { "[" + $0.map(NumberFormat.string).joined(separator: ",") + "]" } ?? "null"
                parts.append("\"landmarks\":\(list)")
            }
            sink.write("{" + parts.joined(separator: ",") + "}\n")
        }
    }

    /// Flushes the output (and closes a file); throws the first write error, naming the file.
    public func finish() throws(InputError) { try sink.finish() }
}
