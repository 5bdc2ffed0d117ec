import Foundation
import LivenessKit

/// Decodes `data`, read from `path`, as a `T`; malformed content is an `InputError` naming the
/// file and `what` it should hold ("cannot read the labels: …").
func decodeJSON<T: Decodable>(_ type: T.Type, from data: Data, path: String, what: String) throws -> T {
    do {
        return try JSONDecoder().decode(type, from: data)
    } catch {
        throw InputError(path: path, problem: "cannot read \(what): \(error)")
    }
}
