import Foundation

/// The inputs of a batch: files and directories expanded, each given its own output folder
/// name, optionally reduced to one shard.
public struct InputList: Sendable {
    /// File extensions picked up when a directory is given.
    public static let extensions: Set<String> = ["mp4", "mov", "m4v", "avi", "mkv", "webm", "3gp", "jpg", "jpeg", "png"]

    /// Inputs in order, each with its output folder name (unique within the batch).
    public var entries: [(path: String, name: String)]
    /// Directories given that hold no video or image file (each is an error of its own).
    public private(set) var emptyDirectories: [String] = []

    /// Expands `arguments`: a directory contributes its video and image files (recursively,
    /// sorted); anything else is taken as given (a missing file fails later, on its own).
    public init(_ arguments: [String]) {
        // Each input with the name its folder is made from: a file's own name, or for a file
        // found in a directory its path below that directory ("alice/session-1.mp4" ->
        // "alice-session-1"), so that an archive of same-named files stays readable.
        var found: [(path: String, stem: String)] = []
        let files = FileManager.default
        for argument in arguments {
            var isDirectory: ObjCBool = false
            if files.fileExists(atPath: argument, isDirectory: &isDirectory), isDirectory.boolValue {
                let base = URL(fileURLWithPath: argument).standardizedFileURL
                // Foundation names a file whose name is not UTF-8 with U+FFFD for its bad bytes, a
                // path that does not exist: those are found byte by byte instead and read through
                // an alias (ForeignNames).
                let urls = (files.enumerator(at: base, includingPropertiesForKeys: nil)?.allObjects as? [URL] ?? [])
                    .filter { Self.extensions.contains($0.pathExtension.lowercased()) }
                    .filter { !$0.path.contains("\u{FFFD}") || files.fileExists(atPath: $0.path) }
                var entries: [(String, String)] = []
                for url in urls {
                    let relative = String(url.standardizedFileURL.path.dropFirst(base.path.count + 1))
                    let path = (argument.hasSuffix("/") ? argument : argument + "/") + relative
                    let stem = (relative as NSString).deletingPathExtension.replacingOccurrences(of: "/", with: "-")
                    entries.append((path, stem))
                }
                for foreign in ForeignNames.nonUTF8Files(below: base.path)
                where Self.extensions.contains((foreign.relative as NSString).pathExtension.lowercased()) {
                    let stem = (foreign.relative as NSString).deletingPathExtension.replacingOccurrences(of: "/", with: "-")
                    ForeignNames.register(foreign.alias, shownAs: (argument.hasSuffix("/") ? argument : argument + "/") + foreign.relative)
                    entries.append((foreign.alias, stem))
                }
                if entries.isEmpty { emptyDirectories.append(argument) }
                found += entries.sorted { ForeignNames.shown($0.0) < ForeignNames.shown($1.0) }
            } else {
                found.append((argument, URL(fileURLWithPath: argument).deletingPathExtension().lastPathComponent))
            }
        }
        var used: [String: Int] = [:]
        entries = found.map { item in
            let clean = String(item.stem.map { $0.isLetter || $0.isNumber || "-_.".contains($0) ? $0 : "_" })
            let base = clean.isEmpty ? "input" : clean
            used[base, default: 0] += 1
            return (item.path, used[base]! == 1 ? base : "\(base)-\(used[base]!)")
        }
    }

    /// Keeps the entries of shard `index` of `count`: those whose path hashes (FNV-1a, 64-bit)
    /// to `index` modulo `count` (a name that is not UTF-8 hashes as shown, `\xNN`, not as its
    /// alias). Deterministic across machines and independent of the order of the arguments, so N
    /// machines given the same archive split it without overlap.
    public func shard(_ index: Int, of count: Int) -> InputList {
        var copy = self
        copy.entries = entries.filter { Int(Self.fnv1a(ForeignNames.shown($0.path)) % UInt64(count)) == index }
        return copy
    }

    package static func fnv1a(_ text: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        return hash
    }
}
