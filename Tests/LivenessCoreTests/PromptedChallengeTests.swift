import LivenessCore
import XCTest

/// The prompted challenge (`ChallengeMode.prompted`, issue 25 part 1), driven closed-loop: a
/// simulated subject reads the prompts the machine shows and answers them (or not) the way a
/// person, a confused person or a recording would. The oracle is the subject's own script: what
/// it was told to do, and when.
final class PromptedChallengeTests: XCTestCase {
    /// How the simulated subject answers a prompt.
    enum Answer {
        /// The prompted action, `reaction` seconds after the prompt.
        case follow(reaction: Double)
        /// A turn to the other side (a blink prompt: a left turn).
        case otherWay(reaction: Double)
        /// Nothing.
        case nothing
    }

    /// A subject at 25 fps that answers each prompt as `answer(step index)` says, plus blinks at
    /// the times in `spontaneousBlinks` (seconds from the first frame).
    struct Subject {
        var answer: (Int) -> Answer
        var spontaneousBlinks: [Double] = []
        /// (start µs, step answered as)
        var actions: [(start: Int64, step: PromptStep)] = []

        func face(at t: Int64) -> FaceObservation {
            var yaw = 0.0
            var closure = 0.0
            for a in actions where t >= a.start {
                let s = Double(t - a.start) / 1e6
                switch a.step {
                case .blink:
                    if s < 0.12 { closure = 1 }
                case .turnLeft, .turnRight:
                    // 0.25 s out to 16°, 0.5 s held, 0.25 s back.
                    let sign = a.step == .turnLeft ? 1.0 : -1.0
                    let amount = s < 0.25 ? s / 0.25 : s < 0.75 ? 1 : s < 1.0 ? (1.0 - s) / 0.25 : 0
                    yaw += sign * 16 * amount
                }
            }
            for b in spontaneousBlinks where Double(t) / 1e6 >= b && Double(t) / 1e6 < b + 0.12 { closure = 1 }
            return LivenessCoreTests.face(closure: closure, yaw: yaw)
        }
    }

    static func promptedPolicy() -> LivenessPolicy {
        var p = LivenessPolicy()
        p.challengeMode = .prompted
        return p
    }

    /// Runs a session until its verdict (at most 30 s).
    @discardableResult
    func run(_ subject: inout Subject, seed: UInt64, plan: ChallengePlan? = nil,
             policy: LivenessPolicy = promptedPolicy()) throws -> (LivenessMachine, [LivenessEvent]) {
        var machine = LivenessMachine(policy: policy, seed: seed, plan: plan)
        var events: [LivenessEvent] = []
        var t: Int64 = 0
        var index = 0
        while machine.verdict == nil, t < 30_000_000 {
            let step = try machine.observe(Observation(frameIndex: index, timestampMicroseconds: t, face: subject.face(at: t)))
            events += step.events
            for case let .promptShown(record) in step.events {
                let planned = record.step
                switch subject.answer(record.index) {
                case let .follow(reaction):
                    subject.actions.append((record.promptMicroseconds + Int64(reaction * 1e6), planned))
                case let .otherWay(reaction):
                    let other: PromptStep = planned == .turnLeft ? .turnRight : .turnLeft
                    subject.actions.append((record.promptMicroseconds + Int64(reaction * 1e6), other))
                case .nothing: break
                }
            }
            t += frameStep
            index += 1
        }
        return (machine, events)
    }

    func testASubjectWhoFollowsEveryPromptPassesForEverySeed() throws {
        for seed in UInt64(1)...60 {
            var subject = Subject(answer: { _ in .follow(reaction: 0.6) }, spontaneousBlinks: [0.5, 3.3, 7.9])
            let (machine, _) = try run(&subject, seed: seed)
            XCTAssertEqual(machine.verdict?.status, .passed, "seed \(seed): \(machine.evidence.promptedChallenge.prompts)")
            let c = machine.evidence.promptedChallenge
            XCTAssertEqual(c.mode, .prompted)
            XCTAssertEqual(c.source, "seed")
            XCTAssertEqual(c.prompts.map(\.step), c.steps)
            XCTAssertEqual(c.steps.count, 3)
            for p in c.prompts {
                XCTAssertEqual(p.outcome, .followed)
                // A turn begins when it crosses half the threshold (3.75° of 16° in 0.25 s: 60 ms
                // after the subject starts); a blink on its first closed frame. One 40 ms frame of slack.
                // A spontaneous blink inside a blink prompt's window answers it as well as the
                // subject's own: the reaction is then that blink's.
                let expected = p.step == .blink ? 0.6 : 0.6 + 0.25 * 3.75 / 16
                let spontaneous = subject.spontaneousBlinks.contains { b in
                    p.step == .blink && abs(Double(p.responseMicroseconds!) / 1e6 - b) < 0.041
                }
                if !spontaneous { XCTAssertEqual(p.reactionSeconds!, expected, accuracy: 0.041, "seed \(seed) \(p)") }
            }
        }
    }

    func testEveryDrawnPlanHoldsABlinkAndATurnAndAllEighteenSequencesOccur() {
        var seen: [[PromptStep]: Int] = [:]
        for seed in UInt64(0)..<3600 {
            var rng = SeededGenerator(seed: seed)
            let plan = ChallengePlan.draw(steps: 3, maxDelaySeconds: 1, using: &rng)
            XCTAssertTrue(plan.holdsBlinkAndTurn)
            for case let .afterReady(d) in plan.timings { XCTAssert((0...1).contains(d)) }
            seen[plan.steps, default: 0] += 1
        }
        XCTAssertEqual(seen.count, 18)
        // 200 expected per sequence; 5 standard deviations is ±70.
        for (steps, n) in seen { XCTAssert((130...270).contains(n), "\(steps): \(n)") }
    }

    func testATurnToTheOtherSideFailsTheSession() throws {
        for seed in UInt64(1)...20 {
            var subject = Subject(answer: { _ in .otherWay(reaction: 0.5) })
            let (machine, _) = try run(&subject, seed: seed)
            XCTAssertEqual(machine.verdict?.reason, .challengeNotFollowed, "seed \(seed)")
            let last = machine.evidence.promptedChallenge.prompts.last!
            XCTAssertEqual(last.outcome, last.step == .blink ? .wrongAction : .wrongDirection)
            XCTAssertTrue(machine.evidence.actions.filter { $0.action == .turnHead }.isEmpty)
        }
    }

    func testAPromptLeftUnansweredIsMissedAtTheEndOfItsWindow() throws {
        var subject = Subject(answer: { _ in .nothing })
        let (machine, _) = try run(&subject, seed: 4)
        XCTAssertEqual(machine.verdict?.reason, .challengeNotFollowed)
        let prompts = machine.evidence.promptedChallenge.prompts
        XCTAssertEqual(prompts.count, 1)
        XCTAssertEqual(prompts[0].outcome, .missed)
        let decided = machine.verdict!.timestampMicroseconds - prompts[0].promptMicroseconds
        XCTAssertGreaterThan(decided, 3_000_000)
        XCTAssertLessThanOrEqual(decided, 3_000_000 + frameStep)
    }

    func testATurnBegunBeforeAPersonCouldReactIsAnticipated() throws {
        // Find a seed whose first step is a turn.
        let seed = (UInt64(1)...100).first { seed in
            LivenessMachine(policy: Self.promptedPolicy(), seed: seed).promptedChallenge!.plan.steps[0] != .blink
        }!
        // Starts 0.0 s after the prompt: crosses 3.75° 60 ms later, below the 150 ms reaction floor.
        var subject = Subject(answer: { _ in .follow(reaction: 0) })
        let (machine, _) = try run(&subject, seed: seed)
        XCTAssertEqual(machine.verdict?.reason, .challengeNotFollowed)
        XCTAssertEqual(machine.evidence.promptedChallenge.prompts[0].outcome, .anticipated)
        // The same subject 0.2 s later follows.
        var later = Subject(answer: { _ in .follow(reaction: 0.2) })
        XCTAssertEqual(try run(&later, seed: seed).0.verdict?.status, .passed)
    }

    func testABlinkTooSoonAfterABlinkPromptDoesNotCountButALaterOneDoes() throws {
        let plan = ChallengePlan(steps: [.blink, .turnLeft], delaysSeconds: [0, 0])
        var early = Subject(answer: { _ in .follow(reaction: 0.04) })
        let (m1, _) = try run(&early, seed: 1, plan: plan)
        XCTAssertEqual(m1.verdict?.reason, .challengeNotFollowed)
        XCTAssertEqual(m1.evidence.promptedChallenge.prompts[0].outcome, .missed)
        var both = Subject(answer: { i in .follow(reaction: i == 0 ? 0.04 : 0.5) })
        both.spontaneousBlinks = []
        // A second blink inside the window answers it.
        var twice = Subject(answer: { _ in .follow(reaction: 0.5) })
        twice.spontaneousBlinks = []
        XCTAssertEqual(try run(&twice, seed: 1, plan: plan).0.verdict?.status, .passed)
    }

    func testBlinksDuringATurnPromptAndActionsBetweenPromptsAreIgnored() throws {
        // The subject blinks every 0.7 s throughout and answers the turns 1.2 s late.
        let plan = ChallengePlan(steps: [.turnRight, .blink, .turnLeft], delaysSeconds: [0.2, 0.5, 0.9])
        var subject = Subject(answer: { _ in .follow(reaction: 1.2) },
                              spontaneousBlinks: stride(from: 0.3, to: 20, by: 0.7).map { $0 })
        let (machine, _) = try run(&subject, seed: 9, plan: plan)
        XCTAssertEqual(machine.verdict?.status, .passed, "\(String(describing: machine.verdict)) \(machine.evidence.promptedChallenge.prompts)")
        XCTAssertEqual(machine.evidence.promptedChallenge.source, "random")
    }

    func testNoPromptIsShownWhileTheHeadIsTurnedAndTheHUDNamesTheStep() throws {
        let plan = ChallengePlan(steps: [.turnLeft, .blink], delaysSeconds: [0.5, 0.5])
        var machine = LivenessMachine(policy: Self.promptedPolicy(), seed: 1, plan: plan)
        var t: Int64 = 0
        var i = 0
        func feed(_ f: FaceObservation, seconds: Double) throws -> [LivenessStep] {
            var out: [LivenessStep] = []
            let end = t + Int64(seconds * 1e6)
            while t < end {
                out.append(try machine.observe(Observation(frameIndex: i, timestampMicroseconds: t, face: f)))
                t += frameStep
                i += 1
            }
            return out
        }
        _ = try feed(face(), seconds: 0.44)              // settle, framing, autoshot at 0.4 s
        XCTAssertEqual(machine.hud, .holdStill)
        // Turned by 5° (beyond half the threshold) for 3 s: never ready.
        var steps = try feed(face(yaw: 5), seconds: 3)
        XCTAssertTrue(steps.flatMap(\.events).allSatisfy { if case .promptShown = $0 { return false } else { return true } })
        XCTAssertEqual(machine.hud, .holdStill)
        // Turned by 6° to the other side for 3 s (below the 7.5° of a turn): never ready.
        steps = try feed(face(yaw: -6), seconds: 3)
        XCTAssertNil(machine.promptedChallenge!.openStep)
        XCTAssertNil(machine.verdict)
        // Frontal and open: shown after still (0.3 s) + delay (0.5 s), within one frame.
        let readyAt = t
        steps = try feed(face(), seconds: 1.2)
        let shown = steps.flatMap(\.events).compactMap { e -> PromptRecord? in if case let .promptShown(r) = e { return r } else { return nil } }
        XCTAssertEqual(shown.count, 1)
        guard shown.count == 1 else { return }
        XCTAssertEqual(Double(shown[0].promptMicroseconds - readyAt) / 1e6, 0.8, accuracy: 0.041)
        XCTAssertEqual(machine.hud, .prompt(.turnLeft))
        XCTAssertEqual(machine.hud?.text, "Turn your head to the left")
        XCTAssertEqual(PromptStep.blink.text, "Blink")
    }

    func testALoggedPlanShowsEachPromptAtItsLoggedTime() throws {
        let plan = ChallengePlan(loggedPrompts: [(.blink, 1_000_000), (.turnRight, 2_500_000)])
        var subject = Subject(answer: { _ in .follow(reaction: 0.5) })
        let (machine, _) = try run(&subject, seed: 1, plan: plan)
        XCTAssertEqual(machine.verdict?.status, .passed)
        let c = machine.evidence.promptedChallenge
        XCTAssertEqual(c.source, "log")
        XCTAssertEqual(c.prompts.map(\.promptMicroseconds), [1_000_000, 2_500_000])
        // The same recording judged against a log that asked for the other side fails.
        let other = ChallengePlan(loggedPrompts: [(.blink, 1_000_000), (.turnLeft, 2_500_000)])
        var replay = Subject(answer: { _ in .nothing })
        replay.actions = subject.actions
        XCTAssertEqual(try run(&replay, seed: 1, plan: other).0.evidence.promptedChallenge.prompts.last?.outcome, .wrongDirection)
    }

    /// A turn's start is dated on the unfiltered yaw, back from the filtered stretch, without a
    /// break and at most one filter window (0.2 s) earlier. Driven frame by frame at 25 fps
    /// against a logged turn-left prompt at 1.0 s; the filtered yaw lags the unfiltered by 3 frames.
    func testATurnsStartIsDatedOnTheUnfilteredYawWithinOneFilterWindow() {
        let policy = Self.promptedPolicy()
        XCTAssertEqual(policy.turnYawDegrees / 2, 3.75)
        XCTAssertEqual(policy.yawMedianWindowSeconds, 0.2)
        /// Runs frames from 0.8 s with the unfiltered yaw `raw(k)` and the filtered `filtered(k)`
        /// (k: frames after 1.0 s; by default the unfiltered three frames later); returns the
        /// answer's dated start (s).
        func began(_ raw: @escaping (Int) -> Double, filtered: ((Int) -> Double)? = nil) -> Double? {
            let filtered = filtered ?? { raw($0 - 3) }
            var c = PromptedChallenge(plan: ChallengePlan(loggedPrompts: [(.turnLeft, 1_000_000)]), policy: policy)
            var run = 0
            for k in -5...30 {
                let t = 1_000_000 + Int64(k) * 40_000
                run = filtered(k) >= policy.turnYawDegrees ? run + 1 : 0
                let frame = PromptedChallenge.Frame(timestampMicroseconds: t, frameIndex: k + 5, credited: true,
                                                    relativeYawDegrees: filtered(k), unfilteredRelativeYawDegrees: raw(k),
                                                    eyeClosureMean: 0, blinkCredited: false,
                                                    turnCredited: run == 2 ? .left : nil)
                for case let .answered(record) in c.observe(frame) {
                    return record.responseMicroseconds.map { Double($0) / 1e6 }
                }
            }
            return nil
        }
        // A ramp of 1° a frame from frame 5 (1.20 s): 4° at frame 9 (1.36 s); the filtered yaw
        // passes 3.75° at frame 12 (1.48 s). Dated 1.36 s, not 1.48 s.
        let ramp: (Int) -> Double = { k in Double(max(0, k - 5)) }
        XCTAssertEqual(try XCTUnwrap(began(ramp)), 1.36, accuracy: 1e-9)
        // A noisy frame past 3.75° just before (frame 7: 5°), then frame 8 under it (3°): the
        // break ends the walk back; still 1.36 s.
        XCTAssertEqual(try XCTUnwrap(began({ k in k == 7 ? 5 : ramp(k) }, filtered: { ramp($0 - 3) })), 1.36, accuracy: 1e-9)
        // A step to 10° at frame 5: the filtered yaw is there at frame 8 (1.32 s); dated 1.20 s.
        XCTAssertEqual(try XCTUnwrap(began { $0 >= 5 ? 10 : 0 }), 1.20, accuracy: 1e-9)
        // The unfiltered yaw past 3.75° all along (4°) and the filtered at 0 until frame 8
        // (1.32 s): no further back than 0.2 s, frame 3 (1.12 s).
        XCTAssertEqual(try XCTUnwrap(began({ $0 >= 5 ? 10 : 4 }, filtered: { $0 >= 8 ? 10 : 0 })), 1.12, accuracy: 1e-9)
    }

    func testATurnWhileNoPromptIsOpenFailsTheSession() throws {
        // Before the first prompt (shown 0.3 s + 1 s after the autoshot at 0.4 s).
        let plan = ChallengePlan(steps: [.blink, .turnLeft], delaysSeconds: [1, 0])
        var early = Subject(answer: { _ in .follow(reaction: 0.5) })
        early.actions = [(600_000, .turnRight)]
        let (m1, _) = try run(&early, seed: 1, plan: plan)
        XCTAssertEqual(m1.verdict?.reason, .challengeNotFollowed)
        XCTAssertTrue(m1.evidence.promptedChallenge.prompts.isEmpty)
        XCTAssertEqual(m1.evidence.promptedChallenge.unpromptedTurn?.direction, .right)
        // Between two prompts: a recording that turns left after each blink passes a blink
        // prompt, then turns while the next prompt waits for the face to be still.
        var between = Subject(answer: { _ in .follow(reaction: 0.5) })
        let slower = ChallengePlan(steps: [.blink, .turnLeft], delaysSeconds: [1, 1])
        var m2 = LivenessMachine(policy: Self.promptedPolicy(), seed: 1, plan: slower)
        var t: Int64 = 0
        var i = 0
        var blinkAt: Int64?
        while m2.verdict == nil, t < 10_000_000 {
            let s = try m2.observe(Observation(frameIndex: i, timestampMicroseconds: t, face: between.face(at: t)))
            for case let .promptShown(r) in s.events where r.step == .blink {
                blinkAt = r.promptMicroseconds + 500_000
                between.actions = [(blinkAt!, .blink), (blinkAt! + 300_000, .turnLeft)]
            }
            t += frameStep
            i += 1
        }
        XCTAssertEqual(m2.evidence.promptedChallenge.prompts.map(\.outcome), [.followed])
        XCTAssertEqual(m2.verdict?.reason, .challengeNotFollowed)
        XCTAssertNotNil(m2.evidence.promptedChallenge.unpromptedTurn)
    }

    func testPassiveModeHasNoPromptsAndTheSameVerdictAsBefore() throws {
        var subject = Subject(answer: { _ in .nothing })
        subject.actions = [(1_000_000, .blink), (2_000_000, .turnLeft)]
        let (machine, events) = try run(&subject, seed: 3, policy: LivenessPolicy())
        XCTAssertEqual(machine.verdict?.status, .passed)
        XCTAssertEqual(machine.evidence.promptedChallenge.mode, .passive)
        XCTAssertTrue(machine.evidence.promptedChallenge.prompts.isEmpty)
        XCTAssertFalse(events.contains { if case .promptShown = $0 { return true } else { return false } })
    }
}
