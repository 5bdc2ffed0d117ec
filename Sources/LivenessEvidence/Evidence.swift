/// A file bound into a signature: its name, SHA-256 and length.
public struct FileEvidence: Sendable, Equatable {
    /// The file's name, without any folder (`autoshot.jpg`).
    public var name: String
    /// SHA-256 of its bytes.
    public var sha256: SHA256Digest
    /// Its length in bytes.
    public var byteCount: Int

    public init(name: String, sha256: SHA256Digest, byteCount: Int) {
        self.name = name
        self.sha256 = sha256
        self.byteCount = byteCount
    }

    /// The evidence of bytes held in memory (a service's stills).
    public init(name: String, contents: [UInt8]) {
        self.init(name: name, sha256: SHA256Digest(of: contents), byteCount: contents.count)
    }

    /// The evidence of a regular file, named by its last path component.
    public static func file(_ path: String) throws(EvidenceError) -> FileEvidence {
        let (digest, count) = try SHA256Digest.ofFile(path)
        return FileEvidence(name: String(path.split(separator: "/").last ?? Substring(path)), sha256: digest, byteCount: count)
    }
}

/// What a signature says about the judged input: its path as the report gives it and, when the
/// input could be read, its SHA-256 and length.
public struct InputEvidence: Sendable, Equatable {
    /// The input's path as given to the engine (the report's `input.path`).
    public var path: String
    /// SHA-256 of the input's bytes; nil when there is no file to hash (see `unavailable`).
    public var sha256: SHA256Digest?
    /// The input's length in bytes; nil with `sha256`.
    public var byteCount: Int?
    /// Why there is no digest (a missing or unreadable file, frames that were streamed); nil
    /// when there is one.
    public var unavailable: String?

    public init(path: String, sha256: SHA256Digest?, byteCount: Int?, unavailable: String?) {
        self.path = path
        self.sha256 = sha256
        self.byteCount = byteCount
        self.unavailable = unavailable
    }

    /// The evidence of an input file: its digest, or why it could not be read (a missing input
    /// recorded as `invalidInput` is still signed, with the reason instead of a digest). Reads
    /// regular files only, so a FIFO given as input never blocks the signature.
    public static func file(_ path: String) -> InputEvidence {
        do {
            let (digest, count) = try SHA256Digest.ofFile(path)
            return InputEvidence(path: path, sha256: digest, byteCount: count, unavailable: nil)
        } catch {
            return InputEvidence(path: path, sha256: nil, byteCount: nil, unavailable: error.problem)
        }
    }

    /// The evidence of an input held in memory (an uploaded video).
    public static func contents(_ bytes: [UInt8], path: String) -> InputEvidence {
        InputEvidence(path: path, sha256: SHA256Digest(of: bytes), byteCount: bytes.count, unavailable: nil)
    }

    /// An input with no file to hash, e.g. `unavailable(path: "stream:<id>", reason: "frames were streamed")`.
    public static func unavailable(path: String, reason: String) -> InputEvidence {
        InputEvidence(path: path, sha256: nil, byteCount: nil, unavailable: reason)
    }
}

/// Everything a signature covers: the report (as JSON text, canonicalised before signing), the
/// stills it releases, the input, and the version of the engine that signs.
public struct ReportEvidence: Sendable {
    /// The report's JSON text (`report.json`, or `LivenessReport.jsonData()` in memory).
    public var reportJSON: [UInt8]
    /// The autoshot file, when the report names one (`autoshot.path` not null).
    public var autoshot: FileEvidence?
    /// The snapshot file, when the report names one.
    public var snapshot: FileEvidence?
    /// The judged input.
    public var input: InputEvidence
    /// The signing engine's version; must be the report's `engine.version`.
    public var engineVersion: String

    public init(reportJSON: [UInt8], autoshot: FileEvidence?, snapshot: FileEvidence?, input: InputEvidence, engineVersion: String) {
        self.reportJSON = reportJSON
        self.autoshot = autoshot
        self.snapshot = snapshot
        self.input = input
        self.engineVersion = engineVersion
    }

    /// The still roles a report has, in envelope order.
    public static let stillRoles = ["autoshot", "snapshot"]
}
