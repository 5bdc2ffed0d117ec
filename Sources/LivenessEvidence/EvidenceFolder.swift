import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Signing and verifying a report folder as `liveness analyze` writes it: `report.json`, the
/// stills it releases (`autoshot.jpg`, `snapshot.jpg`) and `report.sig`.
public enum EvidenceFolder {
    /// The report's file name.
    public static let reportName = "report.json"
    /// The signature envelope's file name.
    public static let signatureName = "report.sig"
    /// Largest report.json or report.sig read (a report is a few kilobytes).
    public static let maximumFileBytes = 16 << 20

    /// Signs the report in `folder` and writes `report.sig` beside it (atomically, mode 0644).
    /// - Parameters:
    ///   - reportJSON: the bytes the caller has just written to `report.json`. The file is read
    ///     back and must hold exactly these bytes: a signature never covers a report the caller
    ///     did not make (an older one, or one changed in between).
    ///   - inputPath: the judged input file, hashed when it is a readable regular file (otherwise
    ///     the reason is signed instead of a digest).
    ///   - key: the signing key.
    ///   - engineVersion: the signing engine's version (the report's `engine.version`).
    /// - Returns: the envelope written.
    @discardableResult
    public static func sign(folder: String, reportJSON: [UInt8], inputPath: String, key: SigningKey, engineVersion: String,
                            at date: Date = Date()) throws(EvidenceError) -> SignatureEnvelope {
        let reportPath = folder + "/" + reportName
        let (onDisk, _) = try RegularFile.read(reportPath, limit: maximumFileBytes)
        guard onDisk == reportJSON else {
            throw EvidenceError(subject: reportPath, problem: "does not hold the report just made, so it is not signed")
        }
        let report: CanonicalJSON.Value
        do {
            report = try CanonicalJSON.parse(reportJSON)
        } catch {
            throw EvidenceError(subject: reportPath, problem: "is not valid JSON: \(error)")
        }
        func still(_ role: String) throws(EvidenceError) -> FileEvidence? {
            guard let path = report[role]?["path"]?.string else { return nil }
            let name = String(path.split(separator: "/").last ?? "")
            guard SignatureEnvelope.isPlainName(name) else { throw EvidenceError(subject: reportPath, problem: "names a \(role) without a file name") }
            return try FileEvidence.file(folder + "/" + name)
        }
        let evidence = ReportEvidence(reportJSON: reportJSON, autoshot: try still("autoshot"), snapshot: try still("snapshot"),
                                      input: .file(inputPath), engineVersion: engineVersion)
        let envelope = try SignatureEnvelope.sign(evidence, with: key, at: date)
        try SyncedFile.replace(folder + "/" + signatureName, with: envelope.jsonData, mode: 0o644)
        return envelope
    }

    /// Removes a `report.sig` an earlier run left in `folder` (it would not match a new report).
    public static func removeSignature(folder: String) {
        unlink(folder + "/" + signatureName)
    }

    /// The report and envelope paths of a verification target: a folder (its `report.json` and
    /// `report.sig`), a report file `X.json` (with `X.sig`) or an envelope `X.sig` (with `X.json`).
    public static func paths(of target: String) -> (report: String, envelope: String) {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: target, isDirectory: &isDirectory), isDirectory.boolValue {
            let folder = target.hasSuffix("/") ? String(target.dropLast()) : target
            return (folder + "/" + reportName, folder + "/" + signatureName)
        }
        if target.hasSuffix(".sig") { return (String(target.dropLast(4)) + ".json", target) }
        let stem = target.hasSuffix(".json") ? String(target.dropLast(5)) : target
        return (target, stem + ".sig")
    }

    /// Verifies the signed report at `target` (see `paths(of:)`): the signature with the trusted
    /// keys, `report.json` against the signed report, the stills in the report's folder against
    /// their signed digests, and `inputPath`, when given, against the signed input digest.
    public static func verify(_ target: String, trusting keys: [PublicKey], inputPath: String? = nil) -> VerificationResult {
        let (reportPath, envelopePath) = paths(of: target)
        let folder = (reportPath as NSString).deletingLastPathComponent
        var early = VerificationResult()
        func contents(_ path: String, _ subject: String) -> [UInt8]? {
            do {
                return try RegularFile.read(path, limit: maximumFileBytes).bytes
            } catch {
                if error.problem != "no such file" { early.problem(subject, error.problem) }
                return nil
            }
        }
        let envelope = contents(envelopePath, (envelopePath as NSString).lastPathComponent)
        let report = contents(reportPath, (reportPath as NSString).lastPathComponent)
        if !early.findings.isEmpty { return early }
        let input = inputPath.map { (path: $0, lookup: lookup($0)) }
        return ReportVerifier.verify(envelope: envelope, report: report, trusting: keys,
                                     stills: { lookup((folder.isEmpty ? "." : folder) + "/" + $0) }, input: input,
                                     names: ((reportPath as NSString).lastPathComponent, (envelopePath as NSString).lastPathComponent))
    }

    /// A file's evidence, or that it is missing or unreadable.
    static func lookup(_ path: String) -> FileLookup {
        do {
            return .present(try FileEvidence.file(path))
        } catch {
            var info = stat()
            return lstat(path, &info) != 0 && errno == ENOENT ? .missing : .unreadable(error.problem)
        }
    }
}
