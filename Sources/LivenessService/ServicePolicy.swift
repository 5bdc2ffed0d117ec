import Foundation
import LivenessCore
import LivenessKit

/// Policy overrides a camera client may send in `start`: any policy key, within its bounds, and
/// never weaker than the session's policy (set by the relying party) on a security threshold —
/// a client cannot make a photo pass by lowering the blink threshold.
enum ServicePolicy {
    /// For each security threshold, whether a larger value is stricter.
    static let stricterWhenLarger: [String: Bool] = [
        "blinkClosureThreshold": true, "turnYawDegrees": true, "turnHeldFrames": true,
        "rotationLimitDegreesPerSecond": false, "scanCapSeconds": false, "framedFramesRequired": true,
        "guideRadius": false, "settleSeconds": true, "framingTimeoutSeconds": false,
        // A larger sway allowance lets more of a camera's rotation through as a head turn.
        "yawSwayDegrees": false,
    ]

    /// `base` with `overrides` applied.
    /// - Throws: `StreamError.forbidden` for a weaker security threshold, `.invalidMessage` for an
    ///   unknown key or a value the policy does not accept.
    static func applying(_ overrides: [String: Double], to base: LivenessPolicy) throws(StreamError) -> LivenessPolicy {
        guard !overrides.isEmpty else { return base }
        guard let data = try? JSONEncoder().encode(base),
              var object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
        else { throw StreamError(.internal, "the session's policy cannot be encoded", recoverable: false) }
        for (key, value) in overrides.sorted(by: { $0.key < $1.key }) {
            guard let current = (object[key] as? NSNumber)?.doubleValue else {
                throw StreamError(.invalidMessage, "unknown policy key \"\(key)\"", recoverable: false)
            }
            if let larger = stricterWhenLarger[key], larger ? value < current : value > current {
                throw StreamError(.forbidden, "policy \"\(key)\": \(value) is weaker than the session's \(current)", recoverable: false)
            }
            object[key] = value
        }
        guard let merged = try? JSONSerialization.data(withJSONObject: object),
              let policy = try? JSONDecoder().decode(LivenessPolicy.self, from: merged)
        else { throw StreamError(.invalidMessage, "the policy overrides are not valid for this policy", recoverable: false) }
        return policy
    }
}
