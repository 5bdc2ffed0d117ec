import Foundation
import LivenessCore

/// Loads a JSON policy file: any subset of `LivenessPolicy`'s keys; absent keys keep the
/// spec's defaults.
public enum PolicyFile {
    public static func load(_ path: String?) throws(InputError) -> LivenessPolicy {
        guard let path else { return LivenessPolicy() }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw InputError(path: path, problem: "cannot read the policy file")
        }
        do {
            return try JSONDecoder().decode(LivenessPolicy.self, from: data)
        } catch let DecodingError.dataCorrupted(context) {
            throw InputError(path: path, problem: "not a valid JSON policy: \(context.debugDescription)")
        } catch let DecodingError.typeMismatch(_, context) {
            throw InputError(path: path, problem: "policy key '\(context.codingPath.map(\.stringValue).joined(separator: "."))' has the wrong type")
        } catch {
            throw InputError(path: path, problem: "not a valid JSON policy: \(error)")
        }
    }
}
