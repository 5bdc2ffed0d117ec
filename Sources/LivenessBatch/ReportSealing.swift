import LivenessKit
import LivenessEvidence

/// `report.sig` in `analyze`'s folders: written after `report.json` with `--sign-key`, for every
/// input (also failed and invalid ones); removed when a report is written without a key, since an
/// earlier signature would not match the new report.
enum ReportSealing {
    /// Signs the report just written to `folder`, or removes a stale `report.sig` when there is
    /// no key. `report` is the report written (nil when none could be made).
    /// - Returns: the problem, when the signature could not be written.
    static func seal(folder: String, input: String, report: LivenessReport?, key: SigningKey?) -> InputError? {
        guard let key else {
            EvidenceFolder.removeSignature(folder: folder)
            return nil
        }
        let signaturePath = folder + "/" + EvidenceFolder.signatureName
        guard let report, let json = try? report.jsonData() else {
            EvidenceFolder.removeSignature(folder: folder)
            return InputError(path: signaturePath, problem: "not written: there is no report to sign")
        }
        do {
            try EvidenceFolder.sign(folder: folder, reportJSON: [UInt8](json), inputPath: input, key: key,
                                    engineVersion: LivenessEngine.version)
            return nil
        } catch {
            EvidenceFolder.removeSignature(folder: folder)
            return InputError(path: signaturePath, problem: "not written: \(error)")
        }
    }

    /// True when the folder's report may be kept as it is: no key was given, or its `report.sig`
    /// verifies with the key (a complete but unsigned report is analysed again rather than
    /// signed afterwards: the signature vouches for a judgement made by the signing run).
    static func isSealed(folder: String, key: SigningKey?) -> Bool {
        guard let key else { return true }
        return EvidenceFolder.verify(folder, trusting: [key.publicKey]).isValid
    }
}
