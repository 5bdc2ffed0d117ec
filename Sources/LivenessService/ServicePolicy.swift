import Foundation
import LivenessCore
import LivenessKit

/// Policy overrides a camera client may send in `start`: any policy key, within its bounds
/// (`LivenessPolicy.bounds`), and never weaker than the session's policy (set by the relying
/// party) on a security threshold — a client cannot make a photo pass by lowering the blink
/// threshold or widening the head-sway allowance.
enum ServicePolicy {
    /// `base` with `overrides` applied.
    /// - Throws: `StreamError.forbidden` for a weaker security threshold, `.invalidMessage` for an
    ///   unknown key or a value outside the key's bounds.
    static func applying(_ overrides: [String: Double], to base: LivenessPolicy) throws(StreamError) -> LivenessPolicy {
        var policy = base
        for (key, value) in overrides.sorted(by: { $0.key < $1.key }) {
            guard let row = LivenessPolicy.bound(forKey: key) else {
                throw StreamError(.invalidMessage, "unknown policy key \"\(key)\"", recoverable: false)
            }
            guard row.accepts(value) else {
                throw StreamError(.invalidMessage, "policy \"\(key)\": \(PolicyBound.format(value)) is outside its bounds (\(row.boundsDescription))", recoverable: false)
            }
            let current = row.value(in: base)
            if row.isWeaker(value, than: current) {
                throw StreamError(.forbidden, "policy \"\(key)\": \(PolicyBound.format(value)) is weaker than the session's \(PolicyBound.format(current))", recoverable: false)
            }
            row.set(value, in: &policy)
        }
        return policy
    }
}
