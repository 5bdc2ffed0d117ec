import Foundation
import LivenessEvidence

extension LivenessReport {
    /// Signs this report as it is held in memory (a service's session result): the envelope
    /// (`report.sig`, format `liveness-signature/1`, see docs/signing.md) covers the canonical form
    /// of `jsonData()`, the stills' digests, the input's, the engine version and the policy.
    ///
    /// - Parameters:
    ///   - key: the signing key (`SigningKey.load(path:)`, once at start-up).
    ///   - autoshot: the autoshot JPEG bytes as they are served, when the report names an
    ///     autoshot path (a passed session); nil otherwise. Its file name is the last component
    ///     of `autoshot.path` (`autoshot.jpg`), where a verifier looks for it beside the report.
    ///   - snapshot: the snapshot JPEG bytes likewise.
    ///   - input: the judged input: `.file(path)`, `.contents(bytes, path:)` for an upload, or
    ///     `.unavailable(path: "stream:<id>", reason: "frames were streamed")`.
    ///   - date: the signing time written into the envelope.
    /// - Returns: the envelope; `jsonData` gives the bytes to serve or store as `report.sig`.
    /// - Throws: `EvidenceError` when the stills given do not match the paths the report names.
    public func signatureEnvelope(key: SigningKey, autoshot: [UInt8]?, snapshot: [UInt8]?, input: InputEvidence,
                                  at date: Date = Date()) throws(EvidenceError) -> SignatureEnvelope {
        let json: Data
        do {
            json = try jsonData()
        } catch {
            throw EvidenceError(subject: "report", problem: "cannot be encoded: \(error)")
        }
        func still(_ bytes: [UInt8]?, _ path: String?) -> FileEvidence? {
            guard let bytes else { return nil }
            return FileEvidence(name: String((path ?? "").split(separator: "/").last ?? ""), contents: bytes)
        }
        let evidence = ReportEvidence(reportJSON: [UInt8](json), autoshot: still(autoshot, self.autoshot?.path),
                                      snapshot: still(snapshot, self.snapshot?.path), input: input,
                                      engineVersion: LivenessEngine.version)
        return try SignatureEnvelope.sign(evidence, with: key, at: date)
    }
}
