/// The prompts of one prompted session, fixed before its first frame.
///
/// A plan is drawn (`draw(steps:maxDelaySeconds:using:)`) from a cryptographic source by the
/// service for a live session, and from the session's seed in tests and `analyze`; or it is read
/// from a prompt log a capture client recorded (`ChallengePlan(loggedPrompts:)`), whose prompts
/// were shown at known times on the video's clock.
public struct ChallengePlan: Sendable, Equatable, Codable {
    /// When a step's prompt is shown.
    public enum Timing: Sendable, Equatable, Codable {
        /// Once the face has been frontal and still for `promptStillSeconds` and then for this
        /// many more seconds (a random delay, so that a recording cannot know when it comes).
        case afterReady(delaySeconds: Double)
        /// On the first frame at or after this timestamp, in microseconds on the input's clock
        /// (a logged prompt).
        case at(timestampMicroseconds: Int64)
        /// Never: a logged step whose prompt was not shown (the session ended first).
        case never
    }

    /// Where a plan came from, for the report.
    public enum Source: String, Sendable, Codable {
        /// Drawn from the session's seed (`analyze`, tests): reproducible, so never for live sessions.
        case seed
        /// Drawn by the caller from a cryptographic random source (`liveness serve`).
        case random
        /// Read from a capture client's signed prompt log (`analyze --challenge`).
        case log
    }

    /// The steps in order.
    public var steps: [PromptStep]
    /// Where the plan came from.
    public var source: Source
    /// When each step is prompted; as many as `steps`.
    public var timings: [Timing]

    /// A plan of `steps`, each shown after its delay once the face is ready.
    /// - Precondition: `delaysSeconds.count == steps.count`.
    public init(steps: [PromptStep], delaysSeconds: [Double], source: Source = .random) {
        precondition(steps.count == delaysSeconds.count, "one delay per step")
        self.steps = steps
        self.source = source
        timings = delaysSeconds.map { .afterReady(delaySeconds: $0.isFinite ? max(0, $0) : 0) }
    }

    /// A plan of prompts shown at logged times (microseconds, increasing), as a capture client
    /// showed them.
    public init(loggedPrompts: [(step: PromptStep, timestampMicroseconds: Int64)]) {
        steps = loggedPrompts.map(\.step)
        source = .log
        timings = loggedPrompts.map { .at(timestampMicroseconds: $0.timestampMicroseconds) }
    }

    /// A plan of logged steps: those with a time were shown then (increasing), those without
    /// never were.
    public init(loggedSteps: [(step: PromptStep, timestampMicroseconds: Int64?)]) {
        steps = loggedSteps.map(\.step)
        source = .log
        timings = loggedSteps.map { $0.timestampMicroseconds.map { .at(timestampMicroseconds: $0) } ?? .never }
    }

    /// Whether the steps hold at least one blink and at least one turn: a prompted session
    /// proves what the passive one does (eyes that close, a head that turns in depth, which the
    /// parallax check judges).
    public var holdsBlinkAndTurn: Bool {
        steps.contains(.blink) && steps.contains { $0 != .blink }
    }

    /// Draws a plan: `steps` steps, each uniform over turn left, turn right and blink, redrawn
    /// until it holds a blink and a turn (for 3 steps: 18 equally likely sequences); each delay
    /// uniform in 0…`maxDelaySeconds`, to the microsecond.
    ///
    /// Live sessions pass a cryptographic generator (`liveness serve` uses libsodium's
    /// `randombytes`); `analyze` and tests pass the session's `SeededGenerator`.
    public static func draw<G: RandomNumberGenerator>(steps: Int, maxDelaySeconds: Double, source: Source = .random,
                                                      using rng: inout G) -> ChallengePlan {
        let count = max(2, min(steps, 100))
        var drawn: [PromptStep]
        repeat {
            drawn = (0..<count).map { _ in PromptStep.allCases[Int(rng.next(upperBound: UInt64(3)))] }
        } while !(drawn.contains(.blink) && drawn.contains { $0 != .blink })
        let maxMicros = UInt64(max(0, min(maxDelaySeconds.isFinite ? maxDelaySeconds : 0, 3600)) * 1_000_000)
        let delays = (0..<count).map { _ in Double(maxMicros == 0 ? 0 : rng.next(upperBound: maxMicros + 1)) / 1_000_000 }
        return ChallengePlan(steps: drawn, delaysSeconds: delays, source: source)
    }
}
