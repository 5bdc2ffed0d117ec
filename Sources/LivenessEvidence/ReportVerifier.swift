/// What a verifier found for a file it was asked about.
public enum FileLookup: Sendable, Equatable {
    /// The file is there; its digest and length.
    case present(FileEvidence)
    /// There is no such file.
    case missing
    /// The file is there but cannot be read (the reason).
    case unreadable(String)
}

/// One thing verification checked: a problem (which makes the result invalid) or a note saying
/// what matched or what was not checked.
public struct VerificationFinding: Sendable, Equatable, CustomStringConvertible {
    /// What the finding is about: `report.sig`, `key`, `report.json`, a still's file name, `input`.
    public var subject: String
    /// One sentence.
    public var message: String
    /// True when this makes the result invalid.
    public var isProblem: Bool

    public var description: String { "\(subject): \(message)" }
}

/// The outcome of verifying a signed report.
public struct VerificationResult: Sendable {
    /// Every check, problems and notes, in the order they were made.
    public var findings: [VerificationFinding] = []
    /// The envelope, when it could be read.
    public var envelope: SignatureEnvelope?
    /// The trusted key the signature verified with; nil when it verified with none.
    public var trustedKey: PublicKey?

    /// True when the signature verified with a trusted key and nothing differs from what it signed.
    public var isValid: Bool { trustedKey != nil && problems.isEmpty }
    /// The findings that make the result invalid.
    public var problems: [VerificationFinding] { findings.filter(\.isProblem) }

    mutating func problem(_ subject: String, _ message: String) { findings.append(.init(subject: subject, message: message, isProblem: true)) }
    mutating func note(_ subject: String, _ message: String) { findings.append(.init(subject: subject, message: message, isProblem: false)) }
}

/// Verifies a signed report (`docs/signing.md`, "Verification"). Trust comes only from the keys
/// the caller gives: the key written in the envelope merely says who claims to have signed.
public enum ReportVerifier {
    /// Verifies an envelope against the report, stills and (optionally) input it signed.
    /// - Parameters:
    ///   - envelope: the bytes of `report.sig`; nil when there is none.
    ///   - report: the bytes of `report.json`; nil when there is none.
    ///   - trusting: the public keys the caller trusts (at least one for a valid result).
    ///   - stills: looks up a still by file name beside the report (its digest, or that it is
    ///     missing). Asked for each signed still, and for `<role>.jpg` of each role the signed
    ///     report has no still for (a still added after signing is a problem).
    ///   - input: the input file to compare with the signed input digest, and what was found there;
    ///     nil when the caller did not give one.
    ///   - names: the file names of the report and the envelope, used in the findings.
    public static func verify(envelope: [UInt8]?, report: [UInt8]?, trusting: [PublicKey], stills: (String) -> FileLookup,
                              input: (path: String, lookup: FileLookup)? = nil,
                              names: (report: String, envelope: String) = ("report.json", "report.sig")) -> VerificationResult {
        var result = VerificationResult()
        guard let envelopeBytes = envelope else {
            result.problem(names.envelope, "missing: the report is not signed")
            return result
        }
        let parsed: SignatureEnvelope
        do {
            parsed = try SignatureEnvelope.parse(envelopeBytes, name: names.envelope)
        } catch {
            result.problem(error.subject, error.problem)
            return result
        }
        result.envelope = parsed
        let message = parsed.signedMessage
        guard let trusted = trusting.first(where: { $0.isValidSignature(parsed.signature, of: message) }) else {
            let named = parsed.publicKey
            let trustedNames = trusting.map(\.fingerprint).joined(separator: ", ")
            if trusting.contains(named) {
                result.problem("signature", "does not match the contents of \(names.envelope): it was changed or damaged after signing")
            } else if named.isValidSignature(parsed.signature, of: message) {
                result.problem("key", "signed by \(named.fingerprint), which is not a trusted key (trusted: \(trustedNames.isEmpty ? "none" : trustedNames))")
            } else {
                result.problem("key", "\(names.envelope) names key \(named.fingerprint), which is not a trusted key (trusted: \(trustedNames.isEmpty ? "none" : trustedNames)), and its signature does not verify even with that key")
            }
            return result
        }
        result.trustedKey = trusted
        result.note("signature", "valid, by trusted key \(trusted.fingerprint), signed at \(parsed.signedAt) by engine \(parsed.engineVersion)")
        checkConsistency(parsed, names.envelope, into: &result)
        checkReport(parsed, report, names, into: &result)
        checkStills(parsed, stills, into: &result)
        checkInput(parsed, input, into: &result)
        return result
    }

    /// The statement's own digests and version agree with the report it holds (only a faulty
    /// signer could break this: the statement is authentic at this point).
    private static func checkConsistency(_ envelope: SignatureEnvelope, _ name: String, into result: inout VerificationResult) {
        let report = envelope.report
        if SHA256Digest(of: CanonicalJSON.encode(report)) != envelope.reportSHA256 {
            result.problem(name, "its reportSha256 is not the digest of the report it holds")
        }
        if let policy = report["policy"], SHA256Digest(of: CanonicalJSON.encode(policy)) == envelope.policySHA256 {
            result.note("policy", "sha256 \(envelope.policySHA256.hex)")
        } else {
            result.problem(name, "its policySha256 is not the digest of the signed report's policy")
        }
        if report["engine"]?["version"]?.string != envelope.engineVersion {
            result.problem(name, "its engineVersion \(envelope.engineVersion) is not the signed report's engine.version")
        }
    }

    private static func checkReport(_ envelope: SignatureEnvelope, _ bytes: [UInt8]?, _ names: (report: String, envelope: String),
                                    into result: inout VerificationResult) {
        guard let bytes else {
            result.problem(names.report, "missing (\(names.envelope) holds the signed report)")
            return
        }
        let actual: CanonicalJSON.Value
        do {
            actual = try CanonicalJSON.parse(bytes)
        } catch {
            result.problem(names.report, "is not valid JSON (\(error)), so it is not the signed report")
            return
        }
        let differences = JSONDifference.describe(signed: envelope.report, actual: actual, name: names.report)
        if differences.isEmpty {
            result.note(names.report, "matches the signed report (sha256 \(envelope.reportSHA256.hex))")
        } else {
            for difference in differences { result.problem(names.report, difference) }
        }
    }

    private static func checkStills(_ envelope: SignatureEnvelope, _ lookup: (String) -> FileLookup, into result: inout VerificationResult) {
        let roles = envelope.stillRoles
        let signed = Dictionary(uniqueKeysWithValues: roles.compactMap { role in envelope.still(role).map { (role, $0) } })
        for role in roles {
            guard let still = signed[role] else {
                let name = "\(role).jpg"
                if case .present = lookup(name) {
                    result.problem(name, "is not part of the signed result: the signed report has no \(role) (added after signing?)")
                }
                continue
            }
            switch lookup(still.name) {
            case .missing:
                result.problem(still.name, "missing: the signed report has a \(role) (sha256 \(still.sha256.hex), \(still.byteCount) bytes)")
            case .unreadable(let reason):
                result.problem(still.name, "cannot be read (\(reason)), so it cannot be checked against the signed \(role)")
            case .present(let found) where found.sha256 == still.sha256:
                result.note(still.name, "matches the signed \(role) (sha256 \(still.sha256.hex))")
            case .present(let found):
                var message = "differs from the signed \(role): sha256 \(found.sha256.hex) (\(found.byteCount) bytes), signed \(still.sha256.hex) (\(still.byteCount) bytes)"
                if let other = signed.first(where: { $0.key != role && $0.value.sha256 == found.sha256 }) {
                    message += "; it is the signed \(other.key) (stills swapped?)"
                }
                result.problem(still.name, message)
            }
        }
    }

    private static func checkInput(_ envelope: SignatureEnvelope, _ given: (path: String, lookup: FileLookup)?, into result: inout VerificationResult) {
        let signed = envelope.input
        guard let given else {
            if let digest = signed.sha256 {
                result.note("input", "not checked (give the input file to check it): signed \(signed.path), sha256 \(digest.hex), \(signed.byteCount ?? 0) bytes")
            } else {
                result.note("input", "the signature holds no digest of \(signed.path): \(signed.unavailable ?? "unavailable")")
            }
            return
        }
        guard let digest = signed.sha256 else {
            result.problem("input", "\(given.path) cannot be checked: the signature holds no digest of its input \(signed.path) (\(signed.unavailable ?? "unavailable"))")
            return
        }
        switch given.lookup {
        case .missing:
            result.problem("input", "\(given.path): no such file")
        case .unreadable(let reason):
            result.problem("input", "\(given.path) cannot be read: \(reason)")
        case .present(let found) where found.sha256 == digest:
            result.note("input", "\(given.path) is the signed input \(signed.path) (sha256 \(digest.hex))")
        case .present(let found):
            result.problem("input", "\(given.path) is not the signed input: sha256 \(found.sha256.hex) (\(found.byteCount) bytes), signed \(digest.hex) (\(signed.byteCount ?? 0) bytes) for \(signed.path)")
        }
    }
}
