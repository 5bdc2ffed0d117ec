/// How the scan asks for its actions (`LivenessPolicy.challengeMode`).
public enum ChallengeMode: String, Sendable, Codable, CaseIterable {
    /// The spec's check: the user does a blink and a head turn, in any order, unprompted. The
    /// default for `analyze` and for policies that do not name a mode.
    case passive
    /// The engine shows one prompt at a time ("Turn your head to the left", "Blink") from a
    /// sequence the user cannot know in advance, and credits only the prompted action begun
    /// inside its response window (`PromptedChallenge`). The default of `liveness serve`'s
    /// sessions and the hosted web flow.
    case prompted
}
