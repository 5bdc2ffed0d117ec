/// The bounds of every `LivenessPolicy` key: one row per key, so that adding a key means adding
/// a row (`PolicyBoundsTests` fails for a coding key without one).
///
/// A row says what values are *meaningful* (`range`, whole numbers for counts) and, for the
/// **security thresholds**, in which direction a value is *weaker than the spec*: easier to pass
/// for a replay, a photo or a rotating handset. The reference a value is compared with is the
/// default (`LivenessPolicy()`), which is the spec's number for the spec's thresholds and the
/// value measured on real footage for the signal conditioning (see `EyeClosureEstimator`,
/// `YawMedianFilter`).
///
/// Front ends that read a policy from outside (`PolicyFile`) reject a value outside its bounds
/// and, unless the caller explicitly allows it, a policy weaker than the spec. The machine itself
/// never crashes on any value (times saturate, windows never go negative), but only bounded
/// values give a meaningful check.
///
/// `docs/hardening.md` ("Policy bounds") prints this table.
public struct PolicyBound: Sendable {
    /// In which direction a security threshold's value is weaker than the reference.
    public enum Weaker: String, Sendable {
        /// Smaller values make the check easier to pass.
        case below
        /// Larger values make the check easier to pass.
        case above
    }

    /// The key as written in a policy file and in the report.
    public let key: String
    /// The smallest and largest meaningful values, inclusive, in `unit`.
    public let range: ClosedRange<Double>
    /// Whether the value counts something (frames) and must be a whole number.
    public let isInteger: Bool
    /// For a key that names one of a few choices (`challengeMode`), the names, indexed by value:
    /// a policy file may write the name or its index.
    public let choices: [String]?
    /// The unit, for messages and docs ("s", "frames", "°", "°/s", "fraction", ...).
    public let unit: String
    /// For a security threshold, the direction that is weaker than the reference; `nil` for keys
    /// that do not make the check easier to pass (phase timing, guide position, windows whose
    /// length has no weaker direction).
    public let weaker: Weaker?
    /// A value that is weaker whatever the direction (`eyeMaxDipSeconds` 0 disables its rule).
    public let weakerAt: Double?
    /// Whether the reference is a number the spec fixes (else a default measured on footage).
    public let isSpecNumber: Bool

    private let read: @Sendable (LivenessPolicy) -> Double
    private let write: @Sendable (inout LivenessPolicy, Double) -> Void

    /// The value of this key in `policy`, as a `Double` (counts converted exactly).
    public func value(in policy: LivenessPolicy) -> Double { read(policy) }

    /// Sets this key in `policy`; a count is converted with saturation (the value is expected to
    /// lie in `range`, see `check(_:)`).
    public func set(_ value: Double, in policy: inout LivenessPolicy) { write(&policy, value) }

    /// The reference value (the default) this key is compared with for weakness.
    public var reference: Double { read(LivenessPolicy()) }

    /// Whether `value` is a security weakening of this key relative to `reference`.
    public func isWeaker(_ value: Double) -> Bool { isWeaker(value, than: reference) }

    /// Whether `value` is a security weakening of this key relative to `other` (a session's
    /// policy, say): further in the weaker direction, or the value that disables the rule when
    /// `other` does not.
    public func isWeaker(_ value: Double, than other: Double) -> Bool {
        if let weakerAt, value == weakerAt { return other != weakerAt }
        switch weaker {
        case .below?: return value < other
        case .above?: return value > other
        case nil: return false
        }
    }

    /// Whether `value` may be given for this key: finite, within `range`, whole for counts.
    public func accepts(_ value: Double) -> Bool {
        value.isFinite && range.contains(value) && (!isInteger || value.rounded() == value)
    }

    /// The bounds in words, e.g. "a whole number of frames from 1 to 100".
    public var boundsDescription: String {
        if let choices { return "one of " + choices.map { "\"\($0)\"" }.joined(separator: ", ") + " (or its index \(PolicyBound.format(range.lowerBound))–\(PolicyBound.format(range.upperBound)))" }
        let lo = PolicyBound.format(range.lowerBound, integer: isInteger)
        let hi = PolicyBound.format(range.upperBound, integer: isInteger)
        return isInteger ? "a whole number of \(unit) from \(lo) to \(hi)" : "a number from \(lo) to \(hi) (\(unit))"
    }

    /// A number as messages print it: whole numbers without a fraction, others as Swift prints them.
    public static func format(_ value: Double, integer: Bool = false) -> String {
        if value.isFinite, value.rounded() == value, abs(value) < 1e9 { return String(Int64(value)) }
        return "\(value)"
    }

    init(_ key: String, _ range: ClosedRange<Double>, _ unit: String, weaker: Weaker? = nil, weakerAt: Double? = nil,
         spec: Bool = false, _ path: WritableKeyPath<LivenessPolicy, Double> & Sendable) {
        self.key = key
        self.range = range
        isInteger = false
        self.unit = unit
        self.weaker = weaker
        self.weakerAt = weakerAt
        isSpecNumber = spec
        choices = nil
        read = { $0[keyPath: path] }
        write = { $0[keyPath: path] = $1 }
    }

    init(_ key: String, _ range: ClosedRange<Double>, _ unit: String, weaker: Weaker? = nil, spec: Bool = false,
         _ path: WritableKeyPath<LivenessPolicy, Int> & Sendable) {
        self.key = key
        self.range = range
        isInteger = true
        self.unit = unit
        self.weaker = weaker
        weakerAt = nil
        isSpecNumber = spec
        choices = nil
        read = { Double($0[keyPath: path]) }
        write = { $0[keyPath: path] = PolicyBound.saturatingInt($1) }
    }

    init(_ key: String, weaker: Weaker? = nil, _ path: WritableKeyPath<LivenessPolicy, ChallengeMode> & Sendable) {
        let names = ChallengeMode.allCases.map(\.rawValue)
        self.key = key
        range = 0...Double(names.count - 1)
        isInteger = true
        unit = names.enumerated().map { "\($0.element) (\($0.offset))" }.joined(separator: " or ")
        self.weaker = weaker
        weakerAt = nil
        isSpecNumber = false
        choices = names
        read = { Double(ChallengeMode.allCases.firstIndex(of: $0[keyPath: path])!) }
        write = { policy, value in
            let index = max(0, min(ChallengeMode.allCases.count - 1, PolicyBound.saturatingInt(value)))
            policy[keyPath: path] = ChallengeMode.allCases[index]
        }
    }

    /// The value of the choice `name` (its index), `nil` when this key has no such choice.
    public func value(ofChoice name: String) -> Double? {
        choices?.firstIndex(of: name).map(Double.init)
    }

    static func saturatingInt(_ value: Double) -> Int {
        guard !value.isNaN else { return 0 }
        if value >= 9.2e18 { return Int.max }
        if value <= -9.2e18 { return Int.min }
        return Int(value.rounded())
    }
}

extension LivenessPolicy {
    /// The bounds table, one row per key, in the order of the policy's declaration.
    ///
    /// Security thresholds and their weaker direction:
    /// * the spec's: `framedFramesRequired` below 3, `scanCapSeconds` above 20,
    ///   `blinkClosureThreshold` below 0.22, `turnYawDegrees` below 7.5, `turnHeldFrames` below 2,
    ///   `rotationLimitDegreesPerSecond` above 10, `guideRadius` above 0.3;
    /// * the eye and yaw conditioning that decides what counts as a blink or a turn:
    ///   `eyeBaselinePercentile` above, `eyeDipReferenceSeconds` above (or 0: dips measured from
    ///   the baseline alone), `eyeClosureDeadZone` below, `eyeClosureScale` below,
    ///   `eyeDipOnsetLevel` above, `eyeMaxDipSeconds` above (or 0, which disables the rule),
    ///   `eyeDipConfirmSeconds` below, `eyeDeepDipLevel` below, `eyeNodPitchDegrees` and
    ///   `eyeFitJumpRatio` above (or 0, which disables the rule), `eyeNodWindowSeconds` 0 (which
    ///   disables the nod rule), `eyeEdgeCheck` below 1 (off), `eyeEdgeMaxRatio`, `eyeReopenClosure`,
    ///   `eyeEdgeOnsetRatio`, `eyeSlowClosureEdgeRatio` and `eyeEdgeMinimumFrames` above,
    ///   `eyeSlowClosureThreshold` below, `yawMedianWindowSeconds` below and `yawSwayDegrees` above their
    ///   defaults (a wider sway allowance lets a camera's rotation through as a turn);
    /// * the presentation-attack checks: `parallaxCheck` below 1 (off), `parallaxMinResidual`
    ///   below its calibrated default (a flatter face passes), `parallaxMinEyeDistancePixels`
    ///   above (more frames left undecided); `frozenCheck` below 1, `frozenMaxDifference` below
    ///   (fewer frames count as unchanged), `frozenSeconds` above; `loopCheck` below 1,
    ///   `loopMaxDifference` below, `loopMinMotion`, `loopMinMotionRatio` and `loopSeconds` above;
    ///   `recaptureCheck` below 1, `recaptureMinEnclosure` and `recaptureWindowSeconds` above;
    ///   `continuityCheck` below 1, `cutMinDifference` and `cutMinRatio` above;
    /// * the prompted challenge: `challengeMode` passive (0) below prompted (1) — a session's
    ///   prompted mode cannot be turned off by a client —, `promptSteps` below,
    ///   `promptResponseSeconds` above, `promptMinReactionSeconds` and `promptMaxDelaySeconds` below.
    public static let bounds: [PolicyBound] = [
        // Phases.
        PolicyBound("settleSeconds", 0...10, "s", \.settleSeconds),
        PolicyBound("framingTimeoutSeconds", 0...60, "s", \.framingTimeoutSeconds),
        PolicyBound("framedFramesRequired", 1...300, "frames", weaker: .below, spec: true, \.framedFramesRequired),
        PolicyBound("scanCapSeconds", 0.1...300, "s", weaker: .above, spec: true, \.scanCapSeconds),
        // Actions.
        PolicyBound("blinkClosureThreshold", 0.01...1, "closure 0…1", weaker: .below, spec: true, \.blinkClosureThreshold),
        PolicyBound("turnYawDegrees", 0.5...90, "°", weaker: .below, spec: true, \.turnYawDegrees),
        PolicyBound("turnHeldFrames", 1...100, "frames", weaker: .below, spec: true, \.turnHeldFrames),
        PolicyBound("rotationLimitDegreesPerSecond", 0.1...1000, "°/s", weaker: .above, spec: true, \.rotationLimitDegreesPerSecond),
        // Guide circle.
        PolicyBound("guideCenterX", 0...1, "fraction of the frame width", \.guideCenterX),
        PolicyBound("guideCenterY", 0...1, "fraction of the frame height", \.guideCenterY),
        PolicyBound("guideRadius", 0.01...1, "fraction of the shorter side", weaker: .above, spec: true, \.guideRadius),
        // Eye conditioning.
        PolicyBound("eyeBaselineWindowSeconds", 0.1...10, "s", \.eyeBaselineWindowSeconds),
        PolicyBound("eyeBaselinePercentile", 0...1, "fraction", weaker: .above, \.eyeBaselinePercentile),
        PolicyBound("eyeBaselineHoldSeconds", 0...60, "s", \.eyeBaselineHoldSeconds),
        PolicyBound("eyeWarmupFrames", 1...100, "frames", \.eyeWarmupFrames),
        PolicyBound("eyeDipReferenceSeconds", 0...2, "s", weaker: .above, weakerAt: 0, \.eyeDipReferenceSeconds),
        PolicyBound("eyeClosureDeadZone", 0...1, "relative dip", weaker: .below, \.eyeClosureDeadZone),
        PolicyBound("eyeClosureScale", 0.01...10, "relative dip", weaker: .below, \.eyeClosureScale),
        PolicyBound("eyeDipOnsetLevel", 0...1, "relative dip", weaker: .above, \.eyeDipOnsetLevel),
        PolicyBound("eyeMaxDipSeconds", 0...10, "s", weaker: .above, weakerAt: 0, \.eyeMaxDipSeconds),
        PolicyBound("eyeDipConfirmSeconds", 0...1, "s", weaker: .below, \.eyeDipConfirmSeconds),
        PolicyBound("eyeDeepDipLevel", 0...2, "relative dip", weaker: .below, \.eyeDeepDipLevel),
        PolicyBound("eyeNodPitchDegrees", 0...90, "°", weaker: .above, weakerAt: 0, \.eyeNodPitchDegrees),
        PolicyBound("eyeNodWindowSeconds", 0...5, "s", weakerAt: 0, \.eyeNodWindowSeconds),
        PolicyBound("eyeFitJumpRatio", 0...10, "relative change", weaker: .above, weakerAt: 0, \.eyeFitJumpRatio),
        PolicyBound("eyeMinimumDistancePixels", 0...10000, "px", weaker: .below, \.eyeMinimumDistancePixels),
        PolicyBound("eyeEdgeCheck", 0...1, "switch (1 on, 0 off)", weaker: .below, \.eyeEdgeCheck),
        PolicyBound("eyeEdgeMaxRatio", 0...10, "ratio to the eye's open level", weaker: .above, \.eyeEdgeMaxRatio),
        PolicyBound("eyeEdgeWindowSeconds", 0.5...60, "s", \.eyeEdgeWindowSeconds),
        PolicyBound("eyeEdgePercentile", 0...1, "fraction", \.eyeEdgePercentile),
        PolicyBound("eyeEdgeMinimumFrames", 1...1000, "frames", weaker: .above, \.eyeEdgeMinimumFrames),
        PolicyBound("eyeReopenRatio", 0...10, "ratio to the eye's open level", \.eyeReopenRatio),
        PolicyBound("eyeReopenFrames", 1...100, "frames", \.eyeReopenFrames),
        PolicyBound("eyeReopenClosure", 0...1, "closure", weaker: .above, \.eyeReopenClosure),
        PolicyBound("eyeEdgeOnsetRatio", 0...10, "ratio to the eyes' shares just before", weaker: .above, \.eyeEdgeOnsetRatio),
        PolicyBound("eyeEdgeOnsetSeconds", 0.1...5, "s", \.eyeEdgeOnsetSeconds),
        PolicyBound("eyeSlowClosureEdgeRatio", 0...10, "ratio to the eye's open level", weaker: .above, \.eyeSlowClosureEdgeRatio),
        PolicyBound("eyeSlowClosureThreshold", 0.01...1, "closure 0…1", weaker: .below, \.eyeSlowClosureThreshold),
        // Yaw conditioning.
        PolicyBound("yawMedianWindowSeconds", 0...2, "s", weaker: .below, \.yawMedianWindowSeconds),
        PolicyBound("yawBaselineWindowSeconds", 0...10, "s", \.yawBaselineWindowSeconds),
        PolicyBound("yawSwayDegrees", 0...30, "°", weaker: .above, \.yawSwayDegrees),
        // Presentation attacks.
        PolicyBound("parallaxCheck", 0...1, "switch (1 on, 0 off)", weaker: .below, \.parallaxCheck),
        PolicyBound("parallaxMinResidual", 0...1, "fraction of the eye distance", weaker: .below, \.parallaxMinResidual),
        PolicyBound("parallaxMinEyeDistancePixels", 0...10_000, "px", weaker: .above, \.parallaxMinEyeDistancePixels),
        PolicyBound("frozenCheck", 0...1, "switch (1 on, 0 off)", weaker: .below, \.frozenCheck),
        PolicyBound("frozenMaxDifference", 0...255, "grey levels", weaker: .below, \.frozenMaxDifference),
        PolicyBound("frozenSeconds", 0.1...300, "s", weaker: .above, \.frozenSeconds),
        PolicyBound("loopCheck", 0...1, "switch (1 on, 0 off)", weaker: .below, \.loopCheck),
        PolicyBound("loopMaxDifference", 0...255, "grey levels", weaker: .below, \.loopMaxDifference),
        PolicyBound("loopMinMotion", 0...255, "grey levels", weaker: .above, \.loopMinMotion),
        PolicyBound("loopMinMotionRatio", 1...1000, "ratio", weaker: .above, \.loopMinMotionRatio),
        PolicyBound("loopSeconds", 0.1...300, "s", weaker: .above, \.loopSeconds),
        PolicyBound("recaptureCheck", 0...1, "switch (1 on, 0 off)", weaker: .below, \.recaptureCheck),
        PolicyBound("recaptureMinEnclosure", 0...255, "grey levels", weaker: .above, \.recaptureMinEnclosure),
        PolicyBound("recaptureWindowSeconds", 0.1...60, "s", weaker: .above, \.recaptureWindowSeconds),
        PolicyBound("continuityCheck", 0...1, "switch (1 on, 0 off)", weaker: .below, \.continuityCheck),
        PolicyBound("cutMinDifference", 0...255, "grey levels", weaker: .above, \.cutMinDifference),
        PolicyBound("cutMinRatio", 1...1000, "ratio", weaker: .above, \.cutMinRatio),
        // Prompted challenge.
        PolicyBound("challengeMode", weaker: .below, \.challengeMode),
        PolicyBound("promptSteps", 2...20, "steps", weaker: .below, \.promptSteps),
        PolicyBound("promptResponseSeconds", 0.5...10, "s", weaker: .above, \.promptResponseSeconds),
        PolicyBound("promptMinReactionSeconds", 0...1, "s", weaker: .below, \.promptMinReactionSeconds),
        PolicyBound("promptStillSeconds", 0...5, "s", \.promptStillSeconds),
        PolicyBound("promptMaxDelaySeconds", 0...10, "s", weaker: .below, \.promptMaxDelaySeconds),
    ]

    /// The row of `key`, or `nil` for a key the policy does not have.
    public static func bound(forKey key: String) -> PolicyBound? { bounds.first { $0.key == key } }

    /// Every key whose value lies outside its bounds (not finite, out of range, or a fraction
    /// where a count belongs), in table order; empty for a meaningful policy.
    public var outOfBounds: [PolicyViolation] {
        Self.bounds.compactMap { row in
            let v = row.value(in: self)
            return row.accepts(v) ? nil : PolicyViolation(key: row.key, value: v, bound: row)
        }
    }

    /// The security thresholds this policy sets weaker than the spec (or, for the signal
    /// conditioning, than the measured defaults), in table order; empty for a policy at least as
    /// strict as the defaults. Recorded in every report (`policyWeakerThanSpec`).
    public var weakerThanSpec: [PolicyWeakness] {
        Self.bounds.compactMap { row in
            let v = row.value(in: self)
            return row.isWeaker(v) ? PolicyWeakness(key: row.key, value: v, reference: row.reference, bound: row) : nil
        }
    }
}

/// A policy value outside its key's bounds.
public struct PolicyViolation: Error, Sendable, CustomStringConvertible {
    /// The policy key.
    public var key: String
    /// The value given.
    public var value: Double
    /// The key's row of `LivenessPolicy.bounds`.
    public var bound: PolicyBound

    /// A violation of `bound` by `value` for `key`.
    public init(key: String, value: Double, bound: PolicyBound) {
        self.key = key
        self.value = value
        self.bound = bound
    }

    /// E.g. "policy key 'turnHeldFrames' is 0; it must be a whole number of frames from 1 to 100".
    public var description: String {
        "policy key '\(key)' is \(PolicyBound.format(value)); it must be \(bound.boundsDescription)"
    }
}

/// A security threshold set weaker than the reference.
public struct PolicyWeakness: Sendable, Equatable, CustomStringConvertible {
    /// The policy key.
    public var key: String
    /// The value given.
    public var value: Double
    /// The reference (default) value.
    public var reference: Double
    /// The key's row.
    public var bound: PolicyBound

    /// E.g. "blinkClosureThreshold 0.1 is below the spec's 0.22".
    public var description: String {
        let how: String
        if let at = bound.weakerAt, value == at {
            how = "\(PolicyBound.format(value)), which disables its rule"
        } else {
            let reference = bound.isSpecNumber ? "the spec's" : "the measured default"
            how = "\(PolicyBound.format(value)) is \(bound.weaker?.rawValue ?? "other than") \(reference) \(PolicyBound.format(self.reference))"
        }
        return "\(key) \(how)"
    }

    public static func == (a: Self, b: Self) -> Bool { a.key == b.key && a.value == b.value && a.reference == b.reference }
}
