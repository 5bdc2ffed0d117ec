import Foundation
import LivenessEvidence
import LivenessKit

/// `liveness verify`: checks signed reports (report.sig) with the keys the caller trusts.
package enum VerifyCommand {
    /// The environment variable naming a trusted public key file when no --public-key is given.
    package static let keyVariable = "LIVENESS_PUBLIC_KEY"

    package static let spec = CommandSpec(
        name: "verify",
        overview: "Check signed reports: the signature by a trusted key, report.json, the stills and optionally the input.",
        summary: "Check signed reports: signature by a trusted key, report, stills, input.",
        arguments: [("<folder-or-report>...", "Report folders (report.json + report.sig), report.json or report.sig files, or a folder of report folders.")],
        options: [
            .option("--public-key", "FILE", "A trusted public key (liveness.pub); may be repeated. Default: the file named by $LIVENESS_PUBLIC_KEY.", repeatable: true),
            .option("--input", "FILE", "The input video or image, to check it is the one that was judged (one report only)."),
        ],
        positionalCount: 1...Int.max)

    /// Runs the command; exit code 0 when every report is valid, 1 when any is not, 2 on a usage
    /// error (no trusted key, an unreadable key file, a target with no report).
    package static func run(_ arguments: [String], console: Console,
                           environment: [String: String] = ProcessInfo.processInfo.environment) -> Int32 {
        let begun = spec.begin(arguments, console: console)
        guard let parsed = begun.parsed else { return begun.exitCode }
        var keyFiles = parsed.values["--public-key"] ?? []
        if keyFiles.isEmpty, let path = environment[keyVariable], !path.isEmpty { keyFiles = [path] }
        guard !keyFiles.isEmpty else {
            return console.usageError(UsageError("no trusted public key: give --public-key FILE (the signer's liveness.pub) or set \(keyVariable); the key written in report.sig is never trusted on its own"), spec: spec)
        }
        var keys: [PublicKey] = []
        for path in keyFiles {
            do {
                keys.append(try PublicKey.load(path: path))
            } catch {
                console.error("error: \(Console.printable(error.description))")
                return 2
            }
        }
        var targets: [String] = []
        for argument in parsed.positionals {
            guard let found = expand(argument) else {
                console.error("error: \(Console.printable(argument)): no report here (neither a report folder, nor report.json or report.sig, nor a folder of report folders)")
                return 2
            }
            targets += found
        }
        let input = parsed.value("--input")
        if input != nil && targets.count > 1 {
            return console.usageError(UsageError("--input belongs to one report; give one report with it"), spec: spec)
        }
        var allValid = true
        for target in targets {
            let result = EvidenceFolder.verify(target, trusting: keys, inputPath: input)
            allValid = allValid && result.isValid
            console.out(describe(target, result))
        }
        return allValid ? 0 : 1
    }

    /// The verification targets an argument names: itself when it is a report folder or a report
    /// or envelope file; the report folders inside it when it is a folder of them; nil when none.
    static func expand(_ argument: String) -> [String]? {
        let manager = FileManager.default
        var isDirectory: ObjCBool = false
        guard manager.fileExists(atPath: argument, isDirectory: &isDirectory) else { return nil }
        guard isDirectory.boolValue else { return [argument] }
        let (report, envelope) = EvidenceFolder.paths(of: argument)
        if manager.fileExists(atPath: report) || manager.fileExists(atPath: envelope) { return [argument] }
        let base = argument.hasSuffix("/") ? String(argument.dropLast()) : argument
        let children = ((try? manager.contentsOfDirectory(atPath: argument)) ?? []).sorted().map { base + "/" + $0 }.filter {
            let (r, e) = EvidenceFolder.paths(of: $0)
            return manager.fileExists(atPath: r) || manager.fileExists(atPath: e)
        }
        return children.isEmpty ? nil : children
    }

    /// The verification of one target as text: a header saying valid or INVALID (with the signed
    /// verdict when the signature is good), then each finding on its own line.
    static func describe(_ target: String, _ result: VerificationResult) -> String {
        var header = Console.printable(target) + ": "
        if result.isValid {
            header += "valid"
        } else {
            header += "INVALID (\(result.problems.count) problem\(result.problems.count == 1 ? "" : "s"))"
        }
        if result.trustedKey != nil, let envelope = result.envelope,
           let report = try? JSONDecoder().decode(LivenessReport.self, from: Data(CanonicalJSON.encode(envelope.report))) {
            header += " — signed report: \(report.summary)"
        }
        let lines = result.findings.map { "  \($0.isProblem ? "FAIL" : "ok  ") \(Console.printable($0.description))" }
        return ([header] + lines).joined(separator: "\n")
    }
}
