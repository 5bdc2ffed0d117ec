import FaceTracking
import LivenessCore
import LivenessKit

/// What the fuzz targets do with one input. Each parser must end every input with a value or a
/// clear error: a trap, an address-sanitizer report, a hang or an out-of-memory is a finding.
/// Beyond not crashing, each check asserts properties (a `fatalError` is a finding too):
/// * an error message stays short (quoted input is cut), whatever the input;
/// * what a parser accepts is usable downstream: a replayed trace's report encodes as JSON
///   (no infinities), accepted motion samples give finite angular speeds the machine takes,
///   an accepted policy is within its bounds (and not weaker unless allowed) and runs a session.
public enum FuzzChecks {
    /// The longest error message accepted, in characters (the input path is "fuzz"). A policy
    /// message may list every weakened security threshold (a fixed set), hence its larger bound.
    static let maximumMessage = 600
    static let maximumPolicyMessage = 1500

    static func checkMessage(_ message: String, _ what: String) {
        if message.count > (what == "policy" ? maximumPolicyMessage : maximumMessage) {
            fatalError("\(what): an error message of \(message.count) characters: \(message.prefix(200))…")
        }
    }

    /// A trace (any format): read, replay with the default policy, encode the report.
    public static func trace(_ bytes: [UInt8]) {
        let reader: TraceReader
        do {
            reader = try TraceReader(bytes: bytes, path: "fuzz")
        } catch {
            checkMessage(error.description, "trace")
            return
        }
        let outcome: ReplayOutcome
        do {
            outcome = try TraceReplay.run(reader, policy: LivenessPolicy(), seed: 1)
        } catch {
            checkMessage(error.description, "trace")
            return
        }
        let report = LivenessReport(machine: outcome.machine, input: outcome.reportInput(path: "fuzz"), wallSeconds: 0.001,
                                    stills: (nil, nil), warnings: outcome.warnings, ignoredAfterVerdict: outcome.ignoredAfterVerdict)
        do {
            _ = try report.jsonData()
        } catch {
            fatalError("trace: an accepted trace gives a report that does not encode: \(error)")
        }
    }

    /// A motion sidecar: parse; when accepted, give 5 s of 30 fps frames their rotation and feed
    /// them to a machine.
    public static func motion(_ bytes: [UInt8]) {
        let samples: MotionSamples
        do {
            samples = try MotionSamples.parse(bytes, path: "fuzz")
        } catch {
            checkMessage(error.description, "motion")
            return
        }
        let rotation: SensorRotation
        do {
            rotation = try SensorRotation(samples: samples)
        } catch {
            fatalError("motion: accepted samples are refused by SensorRotation: \(error)")
        }
        var machine = LivenessMachine(seed: 1)
        let image = Image()
        for i in 0..<150 {
            let t = Int64(i) * 33_333
            let r: DeviceRotation
            do {
                r = try rotation.rotation(for: image, timestampMicroseconds: t)
            } catch {
                checkMessage(error.description, "motion")
                return
            }
            guard let dps = r.degreesPerSecond, dps.isFinite, dps >= 0 else {
                fatalError("motion: frame \(i) has rotation \(String(describing: r.degreesPerSecond))")
            }
            do {
                _ = try machine.observe(Observation(frameIndex: i, timestampMicroseconds: t,
                                                    face: FaceObservation(centerX: 0.5, centerY: 0.5), deviceRotation: r))
            } catch {
                fatalError("motion: the machine refuses frame \(i): \(error)")
            }
        }
    }

    /// A policy file: parse (weaker allowed and not); when accepted, check its bounds and run a
    /// session with both eye inputs, then encode the report.
    public static func policy(_ bytes: [UInt8]) {
        let strict = try? PolicyFile.parse(bytes, path: "fuzz", allowWeaker: false)
        let policy: LivenessPolicy
        do {
            policy = try PolicyFile.parse(bytes, path: "fuzz", allowWeaker: true)
        } catch {
            checkMessage(error.description, "policy")
            if strict != nil { fatalError("policy: accepted without --allow-weaker-policy, refused with it: \(error)") }
            return
        }
        if !policy.outOfBounds.isEmpty { fatalError("policy: accepted out of bounds: \(policy.outOfBounds)") }
        if let strict, !strict.weakerThanSpec.isEmpty { fatalError("policy: weaker policy accepted without the flag") }
        for landmarks in [false, true] {
            var machine = LivenessMachine(policy: policy, seed: 7)
            for i in 0..<200 {
                let blink = i % 40 == 25
                let yaw = (i / 20) % 4 == 2 ? 12.0 : 0
                let eyes: EyeSignal = landmarks
                    ? .aspectRatio(left: blink ? 0.1 : 0.3, right: blink ? 0.1 : 0.3)
                    : .closure(left: blink ? 0.8 : 0, right: blink ? 0.8 : 0)
                let face = FaceObservation(centerX: 0.5, centerY: 0.5, eyes: eyes, yawDegrees: yaw, yawIsFiltered: !landmarks)
                do {
                    _ = try machine.observe(Observation(frameIndex: i, timestampMicroseconds: Int64(i) * 40_000, face: face,
                                                        deviceRotation: DeviceRotation(degreesPerSecond: Double(i % 15), source: .sensor),
                                                        frameWidth: 640, frameHeight: 480))
                } catch {
                    fatalError("policy: the machine refuses frame \(i): \(error)")
                }
            }
            let report = LivenessReport(machine: machine, input: ReportInput(path: "fuzz", kind: .trace), wallSeconds: 0.001,
                                        stills: (nil, nil), warnings: [])
            do {
                _ = try report.jsonData()
            } catch {
                fatalError("policy: an accepted policy gives a report that does not encode: \(error)")
            }
        }
    }
}
