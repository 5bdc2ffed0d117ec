import Foundation
import LivenessCore

/// Loads and validates a JSON policy file: one object holding any subset of `LivenessPolicy`'s
/// keys; absent keys keep the spec's defaults.
///
/// Validation (docs/hardening.md, "Policy bounds"):
/// * every key must be one of the policy's (`LivenessPolicy.bounds`); an unknown key, such as a
///   typo'd `blinkThreshold`, is an error naming it and the nearest known key;
/// * every value must be a JSON number within its key's bounds, a whole number for counts;
///   `null`, strings, booleans, arrays and objects are errors naming the key;
/// * a policy **weaker than the spec** on a security threshold (`LivenessPolicy.weakerThanSpec`)
///   is refused unless the caller allows it (`--allow-weaker-policy`); reports then list the
///   weakened keys in `policyWeakerThanSpec`.
///
/// The problems of a file are reported at once, one per key in key order, the first three in
/// words and the rest counted.
public enum PolicyFile {
    /// The largest policy file read, in bytes (a policy is a few hundred bytes).
    public static let maximumBytes = 64 << 10
    /// The most problems one error message lists (the rest are counted).
    public static let maximumProblemsShown = 3

    /// The policy of the file at `path`; the defaults when `path` is `nil`.
    /// - Parameter allowWeaker: accept a policy weaker than the spec on a security threshold.
    /// - Throws: `InputError` naming the file and every problem.
    public static func load(_ path: String?, allowWeaker: Bool = false) throws(InputError) -> LivenessPolicy {
        guard let path else { return LivenessPolicy() }
        let bytes: [UInt8]
        do {
            bytes = try LineReader.readAll(path: path, maximumBytes: maximumBytes, noun: "policy file")
        } catch {
            throw InputError(path: path, problem: error.problem)
        }
        return try parse(bytes, path: path, allowWeaker: allowWeaker)
    }

    /// The policy held by `bytes` (the contents of a policy file); `path` names it in messages.
    public static func parse(_ bytes: [UInt8], path: String, allowWeaker: Bool = false) throws(InputError) -> LivenessPolicy {
        guard bytes.count <= maximumBytes else {
            throw InputError(path: path, problem: "the policy file holds \(bytes.count) bytes; the limit for a policy file is \(LineReader.size(maximumBytes))")
        }
        guard bytes.contains(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }) else {
            throw InputError(path: path, problem: "the policy file is empty; write {} for the defaults")
        }
        let value: JSONValue
        do {
            value = try JSONValue.parse(bytes)
        } catch {
            throw InputError(path: path, problem: error.message)
        }
        guard let members = value.members else {
            throw InputError(path: path, problem: "a policy file holds one JSON object of policy keys, not \(value.typeName)")
        }
        var policy = LivenessPolicy()
        var problems: [String] = []
        for key in members.keys.sorted() {
            let member = members[key]!
            guard let row = LivenessPolicy.bound(forKey: key) else {
                problems.append(unknownKey(key))
                continue
            }
            if let v = member.double {
                guard row.accepts(v) else {
                    problems.append(PolicyViolation(key: key, value: v, bound: row).description)
                    continue
                }
                row.set(v, in: &policy)
                continue
            }
            switch member {
            case let .string(name) where row.choices != nil:
                guard let v = row.value(ofChoice: name) else {
                    problems.append("policy key '\(key)' must be \(row.boundsDescription), not \"\(name.prefix(40))\"")
                    continue
                }
                row.set(v, in: &policy)
            case .null:
                problems.append("policy key '\(key)' is null; give \(row.boundsDescription), or leave the key out to keep the default \(PolicyBound.format(row.reference))")
            default:
                problems.append("policy key '\(key)' must be \(row.boundsDescription), not \(member.typeName)")
            }
        }
        guard problems.isEmpty else {
            // A message stays short whatever the file holds: the first few problems, and a count.
            let shown = problems.prefix(maximumProblemsShown).joined(separator: "; ")
            let more = problems.count - maximumProblemsShown
            throw InputError(path: path, problem: more > 0 ? "\(shown); and \(more) more problem\(more == 1 ? "" : "s")" : shown)
        }
        let weaker = policy.weakerThanSpec
        if !weaker.isEmpty && !allowWeaker {
            throw InputError(path: path, problem:
                "the policy is weaker than the spec: \(weaker.map(\.description).joined(separator: ", ")); pass --allow-weaker-policy to judge with it anyway (reports then list these keys in policyWeakerThanSpec)")
        }
        return policy
    }

    /// "unknown policy key 'blinkThreshold' (did you mean 'blinkClosureThreshold'?)".
    private static func unknownKey(_ key: String) -> String {
        let shown = key.count <= 60 ? key : String(key.prefix(60)) + "…"
        var message = "unknown policy key '\(shown)'"
        let lowered = Array(key.lowercased().prefix(100))
        let nearest = LivenessPolicy.bounds.map { row in (row.key, editDistance(lowered, Array(row.key.lowercased()))) }
            .min { $0.1 < $1.1 }
        if let (candidate, distance) = nearest, distance <= max(candidate.count, lowered.count) / 2 {
            message += " (did you mean '\(candidate)'?)"
        }
        return message
    }

    /// Levenshtein distance between two short strings.
    private static func editDistance(_ a: [Character], _ b: [Character]) -> Int {
        var previous = Array(0...b.count)
        for (i, ca) in a.enumerated() {
            var current = [i + 1] + Array(repeating: 0, count: b.count)
            for (j, cb) in b.enumerated() {
                current[j + 1] = min(previous[j + 1] + 1, current[j] + 1, previous[j] + (ca == cb ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}
