import Foundation
import LivenessCore
import LivenessKit

/// Policy overrides a camera client may send in `start`: any policy key, within its bounds
/// (`LivenessPolicy.bounds`), and never weaker than the session's policy (set by the relying
/// party) on a security threshold — a client cannot make a photo pass by lowering the blink
/// threshold or widening the head-sway allowance, nor turn a prompted session passive.
///
/// The relying party (`POST /v1/sessions`, with the API token) is held to the same rule against
/// the service's policy, except for `challengeMode`: whether a session is prompted or passive is
/// its choice to make, either way.
enum ServicePolicy {
    /// `base` with `overrides` applied.
    /// - Parameter modeIsChoice: `challengeMode` may be set either way (the relying party's
    ///   session creation); otherwise passive is weaker than prompted like any threshold.
    /// - Throws: `StreamError.forbidden` for a weaker security threshold, `.invalidMessage` for an
    ///   unknown key or a value outside the key's bounds.
    static func applying(_ overrides: [String: Double], to base: LivenessPolicy,
                         modeIsChoice: Bool = false) throws(StreamError) -> LivenessPolicy {
        var policy = base
        for (key, value) in overrides.sorted(by: { $0.key < $1.key }) {
            guard let row = LivenessPolicy.bound(forKey: key) else {
                throw StreamError(.invalidMessage, "unknown policy key \"\(key)\"", recoverable: false)
            }
            guard row.accepts(value) else {
                throw StreamError(.invalidMessage, "policy \"\(key)\": \(PolicyBound.format(value)) is outside its bounds (\(row.boundsDescription))", recoverable: false)
            }
            let current = row.value(in: base)
            if row.isWeaker(value, than: current) && !(modeIsChoice && key == challengeModeKey) {
                throw StreamError(.forbidden, "policy \"\(key)\": \(name(value, row)) is weaker than the session's \(name(current, row))", recoverable: false)
            }
            row.set(value, in: &policy)
        }
        return policy
    }

    /// The key of the challenge mode.
    static let challengeModeKey = "challengeMode"

    /// A JSON object of policy overrides (a `start` message's or a session request's `policy`)
    /// as numbers: a number as it is, and for a key whose values are named choices
    /// (`challengeMode`) the name (`"passive"`, `"prompted"`) as its index. `null` leaves the
    /// key out. Bounds and weakness are checked by `applying`.
    /// - Throws: `StreamError.invalidMessage` for a value that is neither, naming the key.
    static func overrides(_ object: [String: JSONValue]) throws(StreamError) -> [String: Double] {
        var out: [String: Double] = [:]
        for (key, value) in object.sorted(by: { $0.key < $1.key }) {
            if value.isNull { continue }
            if case .string(let name) = value {
                guard let row = LivenessPolicy.bound(forKey: key) else {
                    throw StreamError(.invalidMessage, "unknown policy key \"\(key)\"")
                }
                guard let choices = row.choices else {
                    throw StreamError(.invalidMessage, "policy \"\(key)\" must be a finite number")
                }
                guard let index = row.value(ofChoice: name) else {
                    throw StreamError(.invalidMessage, "policy \"\(key)\" must be one of " + choices.map { "\"\($0)\"" }.joined(separator: ", ")
                        + ", not \"\(name.prefix(40))\"")
                }
                out[key] = index
                continue
            }
            guard let n = value.double, n.isFinite else {
                let names = LivenessPolicy.bound(forKey: key)?.choices.map { " or one of " + $0.map { "\"\($0)\"" }.joined(separator: ", ") } ?? ""
                throw StreamError(.invalidMessage, "policy \"\(key)\" must be a finite number\(names)")
            }
            out[key] = n
        }
        return out
    }

    /// A value as messages name it: a choice by its name, a number as `PolicyBound.format` prints it.
    private static func name(_ value: Double, _ row: PolicyBound) -> String {
        if let choices = row.choices, value.rounded() == value, value >= 0, Int(value) < choices.count { return "\"\(choices[Int(value)])\"" }
        return PolicyBound.format(value)
    }
}
