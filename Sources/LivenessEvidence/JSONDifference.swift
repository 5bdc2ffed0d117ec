/// Where two JSON values differ, as sentences naming each field by its path
/// (`verdict.status`, `warnings[2]`): how verification says what was changed in a report.
enum JSONDifference {
    /// The differences between the `signed` value and the `actual` one (report.json), at most
    /// `limit` sentences (then one saying how many more).
    /// `name` is the report file's name in the sentences (`report.json`).
    static func describe(signed: CanonicalJSON.Value, actual: CanonicalJSON.Value, name: String = "report.json", limit: Int = 20) -> [String] {
        var found: [String] = []
        walk(signed, actual, path: "", name: name, into: &found)
        if found.count > limit { return Array(found.prefix(limit)) + ["… and \(found.count - limit) more differences"] }
        return found
    }

    private static func walk(_ signed: CanonicalJSON.Value, _ actual: CanonicalJSON.Value, path: String, name: String,
                             into found: inout [String]) {
        let here = path.isEmpty ? "the report" : path
        switch (signed, actual) {
        case (.object(let a), .object(let b)):
            var keys = a.map(\.key)
            for key in b.map(\.key) where !keys.contains(where: { $0.utf8.elementsEqual(key.utf8) }) { keys.append(key) }
            for key in keys.sorted(by: CanonicalJSON.precedes) {
                let child = path.isEmpty ? key : path + "." + key
                switch (signed[key], actual[key]) {
                case (let x?, let y?): walk(x, y, path: child, name: name, into: &found)
                case (let x?, nil): found.append("\(child): missing from \(name) (signed: \(show(x)))")
                case (nil, let y?): found.append("\(child): not in the signed report (\(name) has \(show(y)))")
                case (nil, nil): break
                }
            }
        case (.array(let a), .array(let b)) where a.count == b.count:
            for i in a.indices { walk(a[i], b[i], path: "\(path)[\(i)]", name: name, into: &found) }
        case (.array(let a), .array(let b)):
            found.append("\(here): \(name) has \(b.count) items, the signed report \(a.count) (\(name): \(show(actual)); signed: \(show(signed)))")
        default:
            if CanonicalJSON.encode(signed) != CanonicalJSON.encode(actual) {
                found.append("\(here): \(name) says \(show(actual)); signed: \(show(signed))")
            }
        }
    }

    /// A value's canonical text, cut to 80 characters.
    static func show(_ value: CanonicalJSON.Value) -> String {
        let text = String(decoding: CanonicalJSON.encode(value), as: UTF8.self)
        return text.count > 80 ? String(text.prefix(77)) + "…" : text
    }
}
