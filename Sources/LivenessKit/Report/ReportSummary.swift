import Foundation
import LivenessCore

extension LivenessReport {
    /// A one-line human summary of the verdict and the credited actions, times in seconds from
    /// the first frame with two decimals, e.g.
    ///
    ///     passed in 3.42 s (blink at 1.20 s, turn left at 2.96 s)
    ///     failed: timeout after 20.40 s (blink at 1.20 s, no head turn)
    ///     failed: noFace after 5.00 s
    ///
    /// Credited actions are listed in time order; on a failure the missing ones are named, unless
    /// neither was credited. A policy weaker than the spec is named at the end:
    ///
    ///     passed in 1.24 s (blink at 0.80 s, turn right at 1.24 s) [policy weaker than the spec: blinkClosureThreshold]
    public var summary: String {
        var parts: [(seconds: Double, text: String)] = []
        if actions.blink.credited, let s = actions.blink.seconds {
            parts.append((s, "blink at \(Self.seconds(s))"))
        }
        if actions.turnHead.credited, let s = actions.turnHead.seconds {
            let way = actions.turnHead.direction.map { " \($0.rawValue)" } ?? ""
            parts.append((s, "turn\(way) at \(Self.seconds(s))"))
        }
        var details = parts.sorted { $0.seconds < $1.seconds }.map(\.text)
        let head: String
        switch verdict.status {
        case .passed:
            head = "passed in \(Self.seconds(verdict.seconds))"
        case .failed:
            head = "failed: \(verdict.reason?.rawValue ?? "unknown") after \(Self.seconds(verdict.seconds))"
            if !details.isEmpty {
                if !actions.blink.credited { details.append("no blink") }
                if !actions.turnHead.credited { details.append("no head turn") }
            }
        }
        let line = details.isEmpty ? head : "\(head) (\(details.joined(separator: ", ")))"
        let weaker = policyWeakerThanSpec
        return weaker.isEmpty ? line : "\(line) [policy weaker than the spec: \(weaker.joined(separator: ", "))]"
    }

    /// `s` seconds as "1.20 s".
    private static func seconds(_ s: Double) -> String { String(format: "%.2f s", s) }
}
