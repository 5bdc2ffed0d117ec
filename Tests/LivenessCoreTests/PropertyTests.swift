import LivenessCore
import XCTest

/// Seeded property tests over random observation sequences.
final class PropertyTests: XCTestCase {
    /// A random session: VFR timestamps (10–150 ms apart, sometimes a long gap), faces that come and
    /// go and wander in and out of the guide, random closures, yaws and rotation. Half the sessions
    /// use landmark input (EAR and raw yaw), half ARKit-style input.
    static func randomSession(seed: UInt64, start: Int64 = 0) -> [Observation] {
        var rng = SeededGenerator(seed: seed &* 7919 &+ 13)
        let landmark = rng.next() & 1 == 0
        // Some sessions are lively, some barely move (and mostly time out or end).
        let yawRange = [3.0, 15.0].randomElement(using: &rng)!
        let closureMax = [0.15, 0.3].randomElement(using: &rng)!
        let count = Int.random(in: 1...700, using: &rng)   // ≥ 1: with no frame a finish has no timestamp to shift
        var t = start + Int64.random(in: 0...1_000_000, using: &rng)
        var out: [Observation] = []
        var present = true
        for i in 0..<count {
            t += Int64.random(in: 10_000...150_000, using: &rng)
            if Int.random(in: 0..<200, using: &rng) == 0 { t += Int64.random(in: 1_000_000...8_000_000, using: &rng) }
            if Int.random(in: 0..<20, using: &rng) == 0 { present.toggle() }
            var f: FaceObservation?
            if present {
                let x = Double.random(in: 0.1...0.9, using: &rng), y = Double.random(in: 0.1...0.9, using: &rng)
                let yaw = Double.random(in: -yawRange...yawRange, using: &rng)
                if landmark {
                    let ear = Double.random(in: 0.1...0.35, using: &rng)
                    f = FaceObservation(centerX: x, centerY: y, eyes: .aspectRatio(left: ear, right: ear * 0.98),
                                        yawDegrees: yaw)
                } else {
                    let c = Double.random(in: 0...closureMax, using: &rng)
                    f = FaceObservation(centerX: x, centerY: y, eyes: .closure(left: c, right: c), yawDegrees: yaw,
                                        yawIsFiltered: true)
                }
            }
            let rot: DeviceRotation = Int.random(in: 0..<3, using: &rng) == 0
                ? .unknown : DeviceRotation(degreesPerSecond: Double.random(in: 0...20, using: &rng), source: .sensor)
            out.append(Observation(frameIndex: i, timestampMicroseconds: t, face: f, deviceRotation: rot,
                                   frameWidth: 640, frameHeight: 480))
        }
        return out
    }

    static func run(seed: UInt64, _ observations: [Observation]) throws -> (steps: [LivenessStep], finish: [LivenessEvent], machine: LivenessMachine) {
        // Odd seeds judge in prompted mode (the properties hold for both).
        var policy = LivenessPolicy()
        if seed % 2 == 1 { policy.challengeMode = .prompted }
        var m = LivenessMachine(policy: policy, seed: seed)
        let steps = try observations.map { try m.observe($0) }
        let fin = m.finish(.inputEnded)
        return (steps, fin, m)
    }

    func testExactlyOneVerdictAndNothingAfterIt() throws {
        var passed = 0, timeouts = 0, ended = 0
        for seed in UInt64(0)..<200 {
            let obs = Self.randomSession(seed: seed)
            let (steps, fin, m) = try Self.run(seed: seed, obs)
            let all = steps.flatMap(\.events) + fin
            let verdicts = all.compactMap(\.verdict)
            XCTAssertEqual(verdicts.count, 1, "seed \(seed)")
            XCTAssertEqual(verdicts.first, m.verdict)
            let k = try XCTUnwrap(all.firstIndex { $0.verdict != nil })
            XCTAssertEqual(Array(all[(k + 1)...]), [.phase(.done)], "seed \(seed): only phase(done) follows the verdict")
            if let stepIndex = steps.firstIndex(where: { s in s.events.contains { $0.verdict != nil } }) {
                XCTAssertTrue(steps[(stepIndex + 1)...].allSatisfy { $0.events.isEmpty && $0.frame.phase == .done })
                XCTAssertEqual(m.evidence.framesIgnoredAfterVerdict, steps.count - stepIndex - 1)
                XCTAssertEqual(m.evidence.framesRead, stepIndex + 1)
            } else {
                XCTAssertEqual(m.evidence.framesRead, steps.count)
            }
            XCTAssertLessThanOrEqual(all.compactMap(\.autoshot).count, 1)
            switch m.verdict?.status {
            case .passed?:
                passed += 1
                XCTAssertEqual(all.compactMap(\.snapshot).count, 1)
                XCTAssertEqual(Set(m.evidence.actions.map(\.action)), [.blink, .turnHead])
            default:
                XCTAssertTrue(all.compactMap(\.snapshot).isEmpty)
                if m.verdict?.reason == .timeout { timeouts += 1 } else { ended += 1 }
            }
        }
        // The generator must exercise the interesting outcomes, or the properties prove little.
        print("property sessions: \(passed) passed, \(timeouts) timeouts, \(ended) other failures")
        XCTAssertGreaterThan(passed, 10)
        XCTAssertGreaterThan(timeouts, 3)
        XCTAssertGreaterThan(ended, 3)
    }

    func testVerdictNeverLaterThanTheCapAfterTheAutoshot() throws {
        let cap: Int64 = 20_000_000
        for seed in UInt64(0)..<200 {
            let obs = Self.randomSession(seed: seed)
            let (steps, _, m) = try Self.run(seed: seed, obs)
            guard let shot = m.evidence.autoshot, let v = m.verdict else { continue }
            for a in m.evidence.actions { XCTAssertLessThan(a.timestampMicroseconds - shot.timestampMicroseconds, cap) }
            switch (v.status, v.reason) {
            case (.passed, _):
                XCTAssertLessThan(v.timestampMicroseconds - shot.timestampMicroseconds, cap, "seed \(seed)")
            case (.failed, .timeout?):
                // Decided on the first frame at or past the cap: the frame before it was inside the scan.
                let i = try XCTUnwrap(steps.firstIndex { $0.frame.frameIndex == v.frameIndex })
                XCTAssertGreaterThanOrEqual(v.timestampMicroseconds - shot.timestampMicroseconds, cap)
                XCTAssertLessThan(steps[i - 1].frame.timestampMicroseconds - shot.timestampMicroseconds, cap)
            case (.failed, .inputEnded?):
                XCTAssertLessThan(obs.last!.timestampMicroseconds - shot.timestampMicroseconds, cap, "seed \(seed)")
            default:
                break
            }
        }
    }

    func testShiftingAllTimestampsChangesNothing() throws {
        for seed in UInt64(0)..<200 {
            let shift = Int64(seed) * 1_234_567 + 987_654_321
            let obs = Self.randomSession(seed: seed)
            let shifted = obs.map { o -> Observation in
                var o = o
                o.timestampMicroseconds += shift
                return o
            }
            let a = try Self.run(seed: seed, obs)
            let b = try Self.run(seed: seed, shifted)
            let expected = (a.steps.flatMap(\.events) + a.finish).map { Self.shift($0, by: shift) }
            XCTAssertEqual(b.steps.flatMap(\.events) + b.finish, expected, "seed \(seed)")
            XCTAssertEqual(b.steps.map(\.frame.credited), a.steps.map(\.frame.credited))
            XCTAssertEqual(b.steps.map(\.frame.eyeClosureLeft), a.steps.map(\.frame.eyeClosureLeft))
            XCTAssertEqual(b.steps.map(\.frame.relativeYawDegrees), a.steps.map(\.frame.relativeYawDegrees))
        }
    }

    func testTheMachineIsAValue() throws {
        // A copy taken mid-session continues exactly like the original.
        for seed in UInt64(0)..<50 {
            let obs = Self.randomSession(seed: seed)
            guard obs.count > 10 else { continue }
            var m = LivenessMachine(seed: seed)
            for o in obs.prefix(obs.count / 2) { _ = try m.observe(o) }
            var copy = m
            for o in obs.dropFirst(obs.count / 2) {
                XCTAssertEqual(try m.observe(o), try copy.observe(o))
            }
        }
    }

    func testChallengeOrderIsDeterministicPerSeedAndBothOrdersOccur() {
        var orders = Set<[Action]>()
        for seed in UInt64(0)..<200 {
            let a = LivenessMachine(seed: seed).challenge
            XCTAssertEqual(a, LivenessMachine(seed: seed).challenge)
            XCTAssertEqual(Set(a), [.blink, .turnHead])
            XCTAssertEqual(LivenessMachine(seed: seed).evidence.seed, seed)
            orders.insert(a)
        }
        XCTAssertEqual(orders, [[.blink, .turnHead], [.turnHead, .blink]])
    }

    func testSplitMix64ReferenceValues() {
        // Reference outputs of SplitMix64 for seed 0 (as in Vigna's splitmix64.c).
        var g = SeededGenerator(seed: 0)
        XCTAssertEqual(g.next(), 0xE220_A839_7B1D_CDAF)
        XCTAssertEqual(g.next(), 0x6E78_9E6A_A1B9_65F4)
    }

    static func shift(_ e: LivenessEvent, by d: Int64) -> LivenessEvent {
        func s(_ c: StillCapture) -> StillCapture { var c = c; c.timestampMicroseconds += d; return c }
        switch e {
        case .autoshot(let c): return .autoshot(s(c))
        case .snapshot(let c): return .snapshot(s(c))
        case .actionCredited(var a): a.timestampMicroseconds += d; return .actionCredited(a)
        case .verdict(var v): v.timestampMicroseconds += d; return .verdict(v)
        case .promptShown(let r): return .promptShown(shift(r, by: d))
        case .promptAnswered(let r): return .promptAnswered(shift(r, by: d))
        case .hud, .phase: return e
        }
    }

    static func shift(_ r: PromptRecord, by d: Int64) -> PromptRecord {
        var r = r
        r.promptMicroseconds += d
        r.responseMicroseconds = r.responseMicroseconds.map { $0 + d }
        return r
    }
}
