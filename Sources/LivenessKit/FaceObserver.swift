import FaceTracking
import LivenessCore

/// Turns decoded frames into the core's observations and trace records: runs the face
/// tracker, quantizes the measurements to trace precision (so that a replayed trace feeds the
/// machine identical values) and makes timestamps relative to the first frame.
public final class FaceObserver {
    public let tracker: FaceTracker
    /// Keep the 68 landmarks in the trace records.
    public var keepLandmarks = false
    private var firstTimestamp: Int64?

    public init(tracker: FaceTracker) {
        self.tracker = tracker
    }

    /// One frame's results.
    public struct Result {
        /// What the state machine consumes.
        public var observation: Observation
        /// The frame's trace record (core-derived columns still empty).
        public var record: TraceRecord
        /// The raw measurement, landmarks included.
        public var measurement: FrameMeasurement
    }

    /// Measures `frame` (frame `index`, presentation time `timestampMicroseconds`).
    public func observe(_ frame: Image, index: Int, timestampMicroseconds: Int64,
                        rotation: DeviceRotation = .unknown) throws(FaceTrackingError) -> Result {
        observation(of: try tracker.process(frame), frame: frame, index: index, timestampMicroseconds: timestampMicroseconds,
                    rotation: rotation)
    }

    /// The observation and record of a frame the tracker has measured (the tracking and the
    /// device rotation may be computed at the same time, on two threads).
    public func observation(of measurement: FrameMeasurement, frame: Image, index: Int, timestampMicroseconds: Int64,
                            rotation: DeviceRotation) -> Result {
        let first = firstTimestamp ?? timestampMicroseconds
        if firstTimestamp == nil { firstTimestamp = timestampMicroseconds }
        let relative = timestampMicroseconds - first
        let q = NumberFormat.quantized
        var record = TraceRecord(frame: index, seconds: Double(relative) / 1e6, frameWidth: frame.width, frameHeight: frame.height)
        record.faces = measurement.faceCount
        record.deviceRotationDegreesPerSecond = rotation.degreesPerSecond.map(q)
        record.rotationSource = rotation.source
        var face: FaceObservation?
        if let m = measurement.face {
            let box = FaceBox(x: q(m.box.x), y: q(m.box.y), width: q(m.box.width), height: q(m.box.height))
            record.face = true
            record.box = box
            record.faceCenterX = q(m.center.x)
            record.faceCenterY = q(m.center.y)
            record.earLeft = q(m.eyeAspectRatioLeft)
            record.earRight = q(m.eyeAspectRatioRight)
            record.yawDegrees = q(m.yawDegrees)
            record.lineOfSightYawDegrees = q(m.lineOfSightYawDegrees)
            record.pitchDegrees = q(m.pitchDegrees)
            record.rollDegrees = q(m.rollDegrees)
            record.eyeDistancePixels = q(m.eyeDistancePixels)
            if keepLandmarks { record.landmarks = m.landmarks.flatMap { [q($0.x), q($0.y)] } }
            face = FaceObservation(
                centerX: record.faceCenterX!, centerY: record.faceCenterY!,
                eyes: .aspectRatio(left: record.earLeft!, right: record.earRight!),
                yawDegrees: record.yawDegrees!, lineOfSightYawDegrees: record.lineOfSightYawDegrees,
                pitchDegrees: record.pitchDegrees, rollDegrees: record.rollDegrees,
                box: box, eyeDistancePixels: record.eyeDistancePixels)
        }
        let observation = Observation(
            frameIndex: index, timestampMicroseconds: relative, face: face, faceCount: measurement.faceCount,
            deviceRotation: DeviceRotation(degreesPerSecond: record.deviceRotationDegreesPerSecond, source: rotation.source),
            frameWidth: frame.width, frameHeight: frame.height)
        return Result(observation: observation, record: record, measurement: measurement)
    }
}
