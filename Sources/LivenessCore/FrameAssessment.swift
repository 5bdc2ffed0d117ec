/// Why a frame was not credited.
public enum NotCreditedReason: String, Sendable, Codable {
    /// No face tracked.
    case noFace
    /// Device angular speed at or above the rotation limit.
    case rotating
    /// Not in the scan (settle or framing).
    case notScanning
    /// The frame reached the scan cap: it decides the timeout and is not evaluated.
    case capReached
    /// A verdict already exists: the frame is counted, not processed.
    case afterVerdict
    /// The frame completed a run of unchanged frames: frozen input (`FrozenCheck`).
    case frozenInput
    /// The frame completed a moving stretch that repeats an earlier one: looped input (`LoopCheck`).
    case loopedInput
    /// The frame completed a window in which the face was enclosed by a screen's or a print's
    /// border: recaptured input (`RecaptureCheck`).
    case recapturedInput
    /// The frame decided that a frame two before it jumped between still neighbours: a
    /// slideshow or a cut (`ContinuityCheck`).
    case discontinuousInput
}

/// The machine's judgement of one frame, for traces (one record per frame, failed frames included).
public struct FrameAssessment: Sendable, Equatable {
    /// The frame's index.
    public var frameIndex: Int
    /// The frame's timestamp in microseconds.
    public var timestampMicroseconds: Int64
    /// Subject's left-eye closure 0…1 as used by the blink rule; `nil` without a face or during warm-up.
    public var eyeClosureLeft: Double?
    /// Subject's right-eye closure 0…1; `nil` without a face or during warm-up.
    public var eyeClosureRight: Double?
    /// Mean closure 0…1 of the two eyes against the open-eye baseline alone, without the
    /// reference window (`EyeClosureEstimator.againstBaseline`): the slow-closure rule's reading;
    /// `nil` without a face, during warm-up, or when the closures were given (ARKit).
    public var eyeClosureAgainstBaseline: Double?
    /// The eyes' vertical-edge shares against their own recent levels (`EyeEdgeBaseline`),
    /// dimensionless, about 1 for open eyes; `nil` without pixel measurements or before the levels exist.
    public var eyeEdgeRelative: Double?
    /// True when the eye-edge check keeps this frame from counting as closed whatever its
    /// closure (`EyeEdgeBaseline.vetoes`: `eyeEdgeRelative` above `LivenessPolicy.eyeEdgeMaxRatio`,
    /// or the eyes' levels not known yet): the frame cannot credit a blink.
    public var eyesOpenByEdges: Bool = false
    /// Whether a blink episode (`BlinkEpisode`: from a closed frame until the eyes look open
    /// again) is open after this frame; `nil` on frames the machine did not follow the eyes on
    /// (no face, or after the verdict).
    public var eyesClosedEpisode: Bool?
    /// Conditioned yaw in degrees (median-filtered unless the input is pre-filtered), not yet
    /// relative to the baseline; `nil` without a face.
    public var filteredYawDegrees: Double?
    /// The turn signal in degrees: conditioned yaw minus the frontal baseline, combined with the
    /// line-of-sight yaw when the observation carries one (`TurnYaw`); `nil` before the baseline
    /// exists or without a face.
    public var relativeYawDegrees: Double?
    /// The device rotation of the frame, as observed.
    public var deviceRotation: DeviceRotation
    /// Whether the frame may count towards an action.
    public var credited: Bool
    /// Why not, when `credited` is false.
    public var notCreditedReason: NotCreditedReason?
    /// The phase the frame was evaluated in (`scan` for the autoshot frame; `done` after the verdict).
    public var phase: Phase
    /// The HUD state after the frame.
    public var hud: HUDState
    /// Whether the face centre lies in the guide circle; `nil` without a face.
    public var inGuide: Bool?

    /// Mean of the two closures, when both exist.
    public var eyeClosureMean: Double? {
        guard let l = eyeClosureLeft, let r = eyeClosureRight else { return nil }
        return (l + r) / 2
    }

    /// The frame's eye readings as the blink rule takes them (`BlinkSignals.Reading`).
    public var eyeReading: BlinkSignals.Reading {
        BlinkSignals.Reading(closureLeft: eyeClosureLeft, closureRight: eyeClosureRight,
                             closureAgainstBaseline: eyeClosureAgainstBaseline, edgeRelative: eyeEdgeRelative,
                             openByEdges: eyesOpenByEdges)
    }
}

/// The result of observing one frame: its assessment and the events it caused.
public struct LivenessStep: Sendable, Equatable {
    /// The frame's assessment.
    public var frame: FrameAssessment
    /// Events caused by the frame, in order (empty for frames after the verdict).
    public var events: [LivenessEvent]
}
