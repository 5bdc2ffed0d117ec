import Foundation

/// `report.sig`: a signed statement about one report (format `liveness-signature/1`, see
/// `docs/signing.md`). The statement is a JSON object holding the report itself, the SHA-256 of
/// each still it releases and of its input, the engine version, the digest of the policy, the
/// signing key and the time; the envelope is that object plus `signature`, the Ed25519
/// signature of the statement's canonical form (`CanonicalJSON`).
public struct SignatureEnvelope: Sendable {
    /// The format identifier this type writes and reads.
    public static let format = "liveness-signature/1"
    /// The signature algorithm's name in the envelope.
    public static let algorithm = "Ed25519"

    /// The signed statement: the envelope without its `signature` member.
    public let statement: CanonicalJSON.Value
    /// The 64-byte Ed25519 signature of `signedMessage`.
    public let signature: [UInt8]

    /// The bytes the signature covers: the canonical form of `statement`.
    public var signedMessage: [UInt8] { CanonicalJSON.encode(statement) }

    /// The envelope as readable JSON (`report.sig`), ending in a newline.
    public var jsonData: [UInt8] {
        guard case .object(var members) = statement else { return [] }
        members.append((key: "signature", value: .string(Data(signature).base64EncodedString())))
        return CanonicalJSON.pretty(.object(members.sorted { CanonicalJSON.precedes($0.key, $1.key) }))
    }

    // MARK: What the statement says (valid after `parse`)

    /// The key the envelope names as its signer. Not trusted on its own: see `ReportVerifier`.
    public var publicKey: PublicKey { PublicKey(base64: statement["publicKey"]!.string!)! }
    /// The signed report.
    public var report: CanonicalJSON.Value { statement["report"]! }
    /// The engine version the signer stated.
    public var engineVersion: String { statement["engineVersion"]!.string! }
    /// When the signer says it signed (its clock), ISO 8601 UTC.
    public var signedAt: String { statement["signedAt"]!.string! }
    /// SHA-256 of the canonical form of the report's `policy`.
    public var policySHA256: SHA256Digest { SHA256Digest(hex: statement["policySha256"]!.string!)! }
    /// SHA-256 of the canonical form of the report.
    public var reportSHA256: SHA256Digest { SHA256Digest(hex: statement["reportSha256"]!.string!)! }

    /// The signed still of `role` (`autoshot`, `snapshot`), nil when the report has none.
    public func still(_ role: String) -> FileEvidence? {
        guard let entry = statement["stills"]?[role], case .object = entry else { return nil }
        return FileEvidence(name: entry["file"]!.string!, sha256: SHA256Digest(hex: entry["sha256"]!.string!)!,
                            byteCount: Int(entry["bytes"]!.integerText!)!)
    }

    /// The still roles the envelope lists (with or without a file).
    public var stillRoles: [String] {
        guard case .object(let members)? = statement["stills"] else { return [] }
        return members.map(\.key)
    }

    /// What the signer recorded about the input.
    public var input: InputEvidence {
        let entry = statement["input"]!
        return InputEvidence(path: entry["path"]!.string!, sha256: entry["sha256"]!.string.flatMap { SHA256Digest(hex: $0) },
                             byteCount: entry["bytes"]!.integerText.flatMap { Int($0) }, unavailable: entry["unavailable"]!.string)
    }

    // MARK: Signing

    /// Signs `evidence` with `key`.
    /// - Throws: `EvidenceError` when the report is not a JSON object, was made by another engine
    ///   version, has no policy, or names stills that were not given (or was given stills it does
    ///   not name): a signature only ever covers a consistent set.
    public static func sign(_ evidence: ReportEvidence, with key: SigningKey, at date: Date = Date()) throws(EvidenceError) -> SignatureEnvelope {
        let report: CanonicalJSON.Value
        do {
            report = try CanonicalJSON.parse(evidence.reportJSON)
        } catch {
            throw EvidenceError(subject: "report", problem: "is not valid JSON: \(error)")
        }
        guard case .object = report else { throw EvidenceError(subject: "report", problem: "is not a JSON object") }
        let version = report["engine"]?["version"]?.string
        guard version == evidence.engineVersion else {
            throw EvidenceError(subject: "report", problem: "was made by engine version \(version ?? "(none)"), not by this engine (\(evidence.engineVersion)); sign a report when it is made")
        }
        guard let policy = report["policy"], case .object = policy else {
            throw EvidenceError(subject: "report", problem: "has no policy object")
        }
        var stills: [(String, CanonicalJSON.Value)] = []
        for (role, file) in [("autoshot", evidence.autoshot), ("snapshot", evidence.snapshot)] {
            let named = report[role]?["path"]?.string.map { String($0.split(separator: "/").last ?? "") }
            switch (named, file) {
            case (nil, nil):
                stills.append((role, .null))
            case (let name?, let file?) where file.name == name && Self.isPlainName(name):
                stills.append((role, .sortedObject([("bytes", .integer(String(file.byteCount))), ("file", .string(file.name)),
                                              ("sha256", .string(file.sha256.hex))])!))
            case (let name?, nil):
                throw EvidenceError(subject: "report", problem: "names a \(role) (\(name)) that was not given to sign")
            case (nil, let file?):
                throw EvidenceError(subject: file.name, problem: "is given as the \(role), but the report has no \(role) path")
            case (let name?, let file?):
                throw EvidenceError(subject: file.name, problem: "is given as the \(role), but the report names '\(name)'")
            }
        }
        let input = evidence.input
        let statement = CanonicalJSON.Value.sortedObject([
            ("format", .string(format)),
            ("algorithm", .string(algorithm)),
            ("publicKey", .string(key.publicKey.base64)),
            ("keyFingerprint", .string(key.publicKey.fingerprint)),
            ("signedAt", .string(Self.timestamp(date))),
            ("engineVersion", .string(evidence.engineVersion)),
            ("policySha256", .string(SHA256Digest(of: CanonicalJSON.encode(policy)).hex)),
            ("reportSha256", .string(SHA256Digest(of: CanonicalJSON.encode(report)).hex)),
            ("report", report),
            ("stills", .sortedObject(stills)!),
            ("input", .sortedObject([("path", .string(input.path)), ("sha256", input.sha256.map { .string($0.hex) } ?? .null),
                               ("bytes", input.byteCount.map { .integer(String($0)) } ?? .null),
                               ("unavailable", input.unavailable.map { .string($0) } ?? .null)])!),
        ])!
        return SignatureEnvelope(statement: statement, signature: key.signature(of: CanonicalJSON.encode(statement)))
    }

    /// `date` as ISO 8601 UTC to the second (`2026-05-01T12:00:00Z`).
    static func timestamp(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: date)
    }

    /// A file name with no folder in it, safe to look up beside the report.
    static func isPlainName(_ name: String) -> Bool {
        !name.isEmpty && name != "." && name != ".." && !name.contains("/") && !name.utf8.contains(0)
    }

    private init(statement: CanonicalJSON.Value, signature: [UInt8]) {
        self.statement = statement
        self.signature = signature
    }

    // MARK: Reading

    /// Reads an envelope and checks its shape: every field present with the right type (the
    /// accessors above can then be used). It does not check the signature: see `ReportVerifier`.
    /// - Throws: `EvidenceError` (subject `report.sig`) saying what is missing or malformed.
    public static func parse(_ bytes: [UInt8], name: String = "report.sig") throws(EvidenceError) -> SignatureEnvelope {
        func bad(_ problem: String) -> EvidenceError { EvidenceError(subject: name, problem: problem) }
        if bytes.isEmpty { throw bad("is empty") }
        let value: CanonicalJSON.Value
        do {
            value = try CanonicalJSON.parse(bytes)
        } catch {
            throw bad("is not valid JSON (truncated or damaged?): \(error)")
        }
        guard case .object(let members) = value else { throw bad("is not a JSON object") }
        let expected = ["algorithm", "engineVersion", "format", "input", "keyFingerprint", "policySha256", "publicKey",
                        "report", "reportSha256", "signature", "signedAt", "stills"]
        let keys = members.map(\.key)
        if let missing = expected.first(where: { !keys.contains($0) }) { throw bad("has no '\(missing)' field") }
        if let extra = keys.first(where: { !expected.contains($0) }) { throw bad("has an unknown field '\(extra)'") }
        guard value["format"]?.string == format else {
            throw bad("is of format \(value["format"].map { String(decoding: CanonicalJSON.encode($0), as: UTF8.self) } ?? "?"), not \(format)")
        }
        guard value["algorithm"]?.string == algorithm else { throw bad("uses algorithm other than \(algorithm)") }
        guard let signatureText = value["signature"]?.string, let signatureData = Data(base64Encoded: signatureText),
              signatureData.count == Sodium.signatureBytes
        else { throw bad("its 'signature' is not the base64 of a 64-byte Ed25519 signature (truncated or damaged?)") }
        guard let keyText = value["publicKey"]?.string, let key = PublicKey(base64: keyText) else {
            throw bad("its 'publicKey' is not the base64 of a 32-byte Ed25519 key")
        }
        guard value["keyFingerprint"]?.string == key.fingerprint else { throw bad("its 'keyFingerprint' is not that of its 'publicKey'") }
        for field in ["engineVersion", "signedAt"] where value[field]?.string == nil { throw bad("its '\(field)' is not a string") }
        for field in ["policySha256", "reportSha256"] where value[field]?.string.flatMap({ SHA256Digest(hex: $0) }) == nil {
            throw bad("its '\(field)' is not a SHA-256 in hex")
        }
        guard case .object? = value["report"] else { throw bad("its 'report' is not a JSON object") }
        guard case .object(let stills)? = value["stills"] else { throw bad("its 'stills' is not an object") }
        for (role, entry) in stills {
            if case .null = entry { continue }
            guard let file = entry["file"]?.string, isPlainName(file),
                  entry["sha256"]?.string.flatMap({ SHA256Digest(hex: $0) }) != nil,
                  let count = entry["bytes"]?.integerText, Int(count) != nil
            else { throw bad("its still '\(role)' is not {file, sha256, bytes} with a plain file name") }
        }
        guard let input = value["input"], case .object = input, input["path"]?.string != nil,
              let digest = input["sha256"], let count = input["bytes"], let unavailable = input["unavailable"]
        else { throw bad("its 'input' is not {path, sha256, bytes, unavailable}") }
        switch (digest, count, unavailable) {
        case (.string(let hex), .integer(let n), .null) where SHA256Digest(hex: hex) != nil && Int(n) != nil: break
        case (.null, .null, .string): break
        default: throw bad("its 'input' must have sha256 and bytes, or null for both and a reason in 'unavailable'")
        }
        return SignatureEnvelope(statement: value.removing("signature"), signature: [UInt8](signatureData))
    }
}

extension CanonicalJSON.Value {
    /// The decimal text of an integer value.
    var integerText: String? { if case .integer(let t) = self { return t } else { return nil } }
}
