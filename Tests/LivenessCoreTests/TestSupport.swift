import LivenessCore
import XCTest

/// 25 fps frame spacing in microseconds.
let frameStep: Int64 = 40_000

/// A tracked face with ARKit-style input (closures and pre-filtered yaw), centred by default.
func face(x: Double = 0.5, y: Double = 0.5, closure: Double = 0, yaw: Double = 0, box: FaceBox? = nil) -> FaceObservation {
    FaceObservation(centerX: x, centerY: y, eyes: .closure(left: closure, right: closure),
                    yawDegrees: yaw, box: box, yawIsFiltered: true)
}

/// A tracked face with dlib-style input (aspect ratios, raw yaw, optional pitch and eye
/// distance), centred.
func landmarkFace(ear: Double, yaw: Double = 0, pitch: Double? = nil, eyeDistance: Double? = nil) -> FaceObservation {
    FaceObservation(centerX: 0.5, centerY: 0.5, eyes: .aspectRatio(left: ear, right: ear), yawDegrees: yaw,
                    pitchDegrees: pitch, eyeDistancePixels: eyeDistance)
}

/// Feeds frames to a machine and keeps every step.
struct Driver {
    var machine: LivenessMachine
    var steps: [LivenessStep] = []
    var lastTimestamp: Int64 = -frameStep
    var nextIndex = 0

    init(policy: LivenessPolicy = .init(), seed: UInt64 = 1) {
        machine = LivenessMachine(policy: policy, seed: seed)
    }

    var events: [LivenessEvent] { steps.flatMap(\.events) }
    var credited: [ActionEvidence] { machine.evidence.actions }

    /// One frame at `t` µs (default: one 25 fps step after the previous frame).
    @discardableResult
    mutating func frame(_ f: FaceObservation?, at t: Int64? = nil, rotation: DeviceRotation = .unknown,
                        width: Int? = nil, height: Int? = nil) throws -> LivenessStep {
        let ts = t ?? lastTimestamp + frameStep
        let s = try machine.observe(Observation(frameIndex: nextIndex, timestampMicroseconds: ts, face: f,
                                                deviceRotation: rotation, frameWidth: width, frameHeight: height))
        steps.append(s)
        lastTimestamp = ts
        nextIndex += 1
        return s
    }

    /// `n` frames one step apart.
    @discardableResult
    mutating func frames(_ n: Int, _ f: FaceObservation?, rotation: DeviceRotation = .unknown) throws -> [LivenessStep] {
        try (0..<n).map { _ in try frame(f, rotation: rotation) }
    }

    /// Frames 0…10 at 25 fps, centred and frontal: settle 0–280 ms, framing from 320 ms, framed
    /// autoshot on frame 10 (400 ms). Returns the autoshot timestamp.
    @discardableResult
    mutating func startScan(_ f: FaceObservation = face()) throws -> Int64 {
        try frames(11, f)
        guard let shot = machine.evidence.autoshot else {
            XCTFail("no autoshot after 11 centred frames")
            return 0
        }
        return shot.timestampMicroseconds
    }
}

extension LivenessEvent {
    var verdict: Verdict? { if case let .verdict(v) = self { return v } else { return nil } }
    var hudState: HUDState? { if case let .hud(h) = self { return h } else { return nil } }
    var autoshot: StillCapture? { if case let .autoshot(s) = self { return s } else { return nil } }
    var credit: ActionEvidence? { if case let .actionCredited(a) = self { return a } else { return nil } }
    var snapshot: StillCapture? { if case let .snapshot(s) = self { return s } else { return nil } }
}
