import Foundation
import LivenessCommands
import LivenessEvidence
import LivenessKit
import TestSupport
import XCTest

/// Reports signed by `liveness analyze --sign-key` (a generated case that passes, with stills, and
/// the astronaut photo, which fails), then changed in every way the issue lists.
final class SignedReportTests: XCTestCase {
    /// What analyze made once for the whole class: the key pair and the two signed folders.
    private struct Made {
        var root: String
        var privateKey: String
        var publicKey: String
        var passedInput: String
        var passed: String
        var failed: String
    }

    nonisolated(unsafe) private static var made: Made?

    private func signedFolders() throws -> Made {
        if let made = Self.made { return made }
        let passedInput = try Fixtures.generated("cases/blink-then-turn/video.mp4")
        let failedInput = try Fixtures.generated("astronaut-still.mp4")
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("liveness-signed-\(UUID().uuidString)").path
        let files = try KeyFiles.create(in: root + "/keys", key: try SigningKey.generate())
        let console = Console.capturing()
        let status = LivenessCLI.run(["analyze", passedInput, failedInput, "--output", root + "/out", "--jobs", "1",
                                      "--sign-key", files.privateKey], console: console)
        XCTAssertEqual(status, 1, console.printed + console.errors)  // one passed, one failed
        let made = Made(root: root, privateKey: files.privateKey, publicKey: files.publicKey, passedInput: passedInput,
                        passed: root + "/out/video", failed: root + "/out/astronaut-still")
        Self.made = made
        return made
    }

    override class func tearDown() {
        if let made { try? FileManager.default.removeItem(atPath: made.root) }
        made = nil
        super.tearDown()
    }

    /// A copy of a signed folder to change.
    private func copy(_ folder: String) throws -> String {
        let destination = try Fixtures.temporaryDirectory(self).appendingPathComponent("copy").path
        try FileManager.default.copyItem(atPath: folder, toPath: destination)
        return destination
    }

    private func verify(_ target: String, keys: [String]? = nil, input: String? = nil) throws -> (status: Int32, output: String, errors: String) {
        let made = try signedFolders()
        var arguments = ["verify", target]
        for key in keys ?? [made.publicKey] { arguments += ["--public-key", key] }
        if let input { arguments += ["--input", input] }
        let console = Console.capturing()
        let status = LivenessCLI.run(arguments, console: console)
        return (status, console.printed, console.errors)
    }

    /// Rewrites report.json through Python's json module (an independent editor), applying `edit`
    /// to the parsed report `r`.
    private func editReport(_ folder: String, _ edit: String) throws {
        let python = try ExternalTools.python("""
            import json, sys
            path = sys.argv[1] + '/report.json'
            r = json.load(open(path))
            \(edit)
            json.dump(r, open(path, 'w'), indent=3)
            """, [folder])
        XCTAssertEqual(python.status, 0, python.errors)
    }

    private func assertInvalid(_ result: (status: Int32, output: String, errors: String), _ fragments: [String],
                               file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(result.status, 1, result.output + result.errors, file: file, line: line)
        XCTAssertTrue(result.output.contains(": INVALID"), result.output, file: file, line: line)
        for fragment in fragments {
            XCTAssertTrue(result.output.contains(fragment), "missing «\(fragment)» in:\n\(result.output)", file: file, line: line)
        }
    }

    // MARK: Untouched

    func testUntouchedSignedReportsVerify() throws {
        let made = try signedFolders()
        for folder in [made.passed, made.failed] {
            for name in ["report.json", "report.sig"] {
                XCTAssertTrue(FileManager.default.fileExists(atPath: folder + "/" + name), folder + "/" + name)
            }
        }
        let passed = try verify(made.passed, input: made.passedInput)
        XCTAssertEqual(passed.status, 0, passed.output + passed.errors)
        XCTAssertTrue(passed.output.hasPrefix(made.passed + ": valid — signed report: passed in "), passed.output)
        for line in ["ok   autoshot.jpg: matches the signed autoshot", "ok   snapshot.jpg: matches the signed snapshot",
                     "ok   input: \(made.passedInput) is the signed input"] {
            XCTAssertTrue(passed.output.contains(line), passed.output)
        }
        XCTAssertFalse(passed.output.contains("FAIL"), passed.output)
        // A folder of report folders verifies each; report.json and report.sig name their folder too.
        let all = try verify((made.passed as NSString).deletingLastPathComponent)
        XCTAssertEqual(all.status, 0, all.output)
        XCTAssertEqual(all.output.components(separatedBy: ": valid — signed report: ").count, 3, all.output)
        XCTAssertEqual(try verify(made.failed + "/report.json").status, 0)
        XCTAssertEqual(try verify(made.failed + "/report.sig").status, 0)
    }

    /// The Python reference verifier (Tools/verify_signature.py, no engine code) accepts what
    /// analyze signed and rejects a changed verdict: the canonical form and envelope are as documented.
    func testPythonReferenceVerifierAgrees() throws {
        try ExternalTools.requireCryptography()
        let made = try signedFolders()
        let tool = Fixtures.packageRoot.appendingPathComponent("Tools/verify_signature.py").path
        for folder in [made.passed, made.failed] {
            let result = try ExternalTools.run("/usr/bin/python3", [tool, folder, "--public-key", made.publicKey])
            XCTAssertEqual(result.status, 0, result.text + result.errors)
            XCTAssertEqual(result.text, "\(folder): valid\n")
        }
        let withInput = try ExternalTools.run("/usr/bin/python3", [tool, made.passed, "--public-key", made.publicKey, "--input", made.passedInput])
        XCTAssertEqual(withInput.status, 0, withInput.text + withInput.errors)
        let changed = try copy(made.passed)
        try editReport(changed, "r['verdict']['status'] = 'failed'")
        let rejected = try ExternalTools.run("/usr/bin/python3", [tool, changed, "--public-key", made.publicKey])
        XCTAssertEqual(rejected.status, 1, rejected.text)
        XCTAssertTrue(rejected.text.contains("report.json: differs from the signed report in verdict"), rejected.text)
    }

    /// The canonical form ignores layout: the report re-serialised by Python (other indentation,
    /// its own number and string spelling) still verifies.
    func testReserialisedReportStillVerifies() throws {
        let folder = try copy(try signedFolders().passed)
        try editReport(folder, "pass")
        XCTAssertNotEqual(try Data(contentsOf: URL(fileURLWithPath: folder + "/report.json")),
                          try Data(contentsOf: URL(fileURLWithPath: try signedFolders().passed + "/report.json")))
        let result = try verify(folder)
        XCTAssertEqual(result.status, 0, result.output)
    }

    // MARK: Changed report

    func testChangedVerdictFails() throws {
        let folder = try copy(try signedFolders().failed)
        try editReport(folder, "r['verdict']['status'] = 'passed'; r['verdict']['reason'] = None")
        assertInvalid(try verify(folder), ["FAIL report.json: verdict.status: report.json says \"passed\"; signed: \"failed\"",
                                           "FAIL report.json: verdict.reason: report.json says null; signed: \"presentationAttack\"",
                                           "signed report: failed: presentationAttack after"])
    }

    func testChangedNumberFails() throws {
        let made = try signedFolders()
        let signed = try JSONDecoder().decode(LivenessReport.self, from: Data(contentsOf: URL(fileURLWithPath: made.passed + "/report.json")))
        let value = try XCTUnwrap(signed.actions.blink.value)
        let folder = try copy(made.passed)
        try editReport(folder, "r['actions']['blink']['value'] = 0.9")
        assertInvalid(try verify(folder), ["FAIL report.json: actions.blink.value: report.json says 0.9; signed: \(value)"])
    }

    func testRemovedFieldFails() throws {
        let folder = try copy(try signedFolders().passed)
        try editReport(folder, "del r['timing']['framesPerSecond']")
        assertInvalid(try verify(folder), ["FAIL report.json: timing.framesPerSecond: missing from report.json (signed: "])
    }

    func testAddedWarningAndMissingReportFail() throws {
        let folder = try copy(try signedFolders().passed)
        try editReport(folder, "r['warnings'].append('edited'); r['note'] = 1")
        assertInvalid(try verify(folder), ["warnings: report.json has 1 items, the signed report 0",
                                           "note: not in the signed report (report.json has 1)"])
        try FileManager.default.removeItem(atPath: folder + "/report.json")
        assertInvalid(try verify(folder), ["FAIL report.json: missing (report.sig holds the signed report)"])
    }

    // MARK: Stills

    func testSwappedStillsFail() throws {
        let folder = try copy(try signedFolders().passed)
        let manager = FileManager.default
        try manager.moveItem(atPath: folder + "/autoshot.jpg", toPath: folder + "/x.jpg")
        try manager.moveItem(atPath: folder + "/snapshot.jpg", toPath: folder + "/autoshot.jpg")
        try manager.moveItem(atPath: folder + "/x.jpg", toPath: folder + "/snapshot.jpg")
        assertInvalid(try verify(folder), ["FAIL autoshot.jpg: differs from the signed autoshot", "it is the signed snapshot (stills swapped?)",
                                           "FAIL snapshot.jpg: differs from the signed snapshot", "it is the signed autoshot (stills swapped?)"])
    }

    /// The same picture decoded and encoded again by ffmpeg: it looks the same, it is not the signed file.
    func testReencodedStillFails() throws {
        let folder = try copy(try signedFolders().passed)
        try Fixtures.ffmpeg(["-i", folder + "/snapshot.jpg", "-q:v", "2", folder + "/again.jpg"])
        try FileManager.default.removeItem(atPath: folder + "/snapshot.jpg")
        try FileManager.default.moveItem(atPath: folder + "/again.jpg", toPath: folder + "/snapshot.jpg")
        let result = try verify(folder)
        assertInvalid(result, ["FAIL snapshot.jpg: differs from the signed snapshot", "ok   autoshot.jpg: matches the signed autoshot"])
        XCTAssertFalse(result.output.contains("swapped"), result.output)
    }

    func testMissingStillFails() throws {
        let folder = try copy(try signedFolders().passed)
        try FileManager.default.removeItem(atPath: folder + "/snapshot.jpg")
        assertInvalid(try verify(folder), ["FAIL snapshot.jpg: missing: the signed report has a snapshot (sha256 "])
    }

    /// A failed session releases no stills; a face added to its folder afterwards is flagged.
    func testStillAddedToAFailedReportFails() throws {
        let made = try signedFolders()
        let folder = try copy(made.failed)
        try FileManager.default.copyItem(atPath: made.passed + "/snapshot.jpg", toPath: folder + "/snapshot.jpg")
        assertInvalid(try verify(folder), ["FAIL snapshot.jpg: is not part of the signed result: the signed report has no snapshot"])
    }

    // MARK: Signature and keys

    func testSignatureFromAnotherKeyFailsUnlessThatKeyIsTrusted() throws {
        let made = try signedFolders()
        let other = try KeyFiles.create(in: try Fixtures.temporaryDirectory(self).path, key: try SigningKey.generate())
        let signer = try PublicKey.load(path: made.publicKey)
        let otherKey = try PublicKey.load(path: other.publicKey)
        assertInvalid(try verify(made.passed, keys: [other.publicKey]),
                      ["FAIL key: signed by \(signer.fingerprint), which is not a trusted key (trusted: \(otherKey.fingerprint))"])
        // Re-signed by the other key (what a forger holding another key can do): fails with the real key.
        let folder = try copy(made.passed)
        try EvidenceFolder.sign(folder: folder, reportJSON: [UInt8](try Data(contentsOf: URL(fileURLWithPath: folder + "/report.json"))),
                                inputPath: made.passedInput, key: try SigningKey.load(path: other.privateKey), engineVersion: LivenessEngine.version)
        assertInvalid(try verify(folder), ["FAIL key: signed by \(otherKey.fingerprint), which is not a trusted key (trusted: \(signer.fingerprint))"])
        // Several trusted keys (a rotation): either signer is accepted.
        XCTAssertEqual(try verify(folder, keys: [made.publicKey, other.publicKey]).status, 0)
        XCTAssertEqual(try verify(made.passed, keys: [other.publicKey, made.publicKey]).status, 0)
    }

    /// The key written in report.sig is not trusted: swapping in a forger's key and signature over a
    /// changed report still fails with the real key.
    func testForgedEnvelopeWithItsOwnKeyFails() throws {
        let made = try signedFolders()
        let folder = try copy(made.failed)
        try editReport(folder, "r['verdict']['status'] = 'passed'")
        let forger = try KeyFiles.create(in: try Fixtures.temporaryDirectory(self).path, key: try SigningKey.generate())
        try EvidenceFolder.sign(folder: folder, reportJSON: [UInt8](try Data(contentsOf: URL(fileURLWithPath: folder + "/report.json"))),
                                inputPath: "/nonexistent", key: try SigningKey.load(path: forger.privateKey), engineVersion: LivenessEngine.version)
        assertInvalid(try verify(folder), ["which is not a trusted key"])
        let noKey = Console.capturing()
        XCTAssertEqual(VerifyCommand.run([folder], console: noKey, environment: [:]), 2)
        XCTAssertTrue(noKey.errors.contains("no trusted public key: give --public-key FILE"), noKey.errors)
        XCTAssertEqual(VerifyCommand.run([made.passed], console: Console.capturing(), environment: ["LIVENESS_PUBLIC_KEY": made.publicKey]), 0)
    }

    func testTruncatedOrGarbledSignatureFileFails() throws {
        let made = try signedFolders()
        let envelope = try String(contentsOfFile: made.passed + "/report.sig", encoding: .utf8)
        let folder = try copy(made.passed)
        // Cut anywhere (inside a key, a string, a number, between members): never valid, always said.
        let bytes = Array(envelope.utf8)
        for length in stride(from: 0, to: bytes.count - 1, by: 97) {
            try Data(bytes[0..<length]).write(to: URL(fileURLWithPath: folder + "/report.sig"))
            let result = try verify(folder)
            assertInvalid(result, [length == 0 ? "FAIL report.sig: is empty" : "FAIL report.sig: is not valid JSON (truncated or damaged?)"])
            XCTAssertTrue(length == 0 || result.output.contains("truncated?) at byte \(length)"), "\(length): \(result.output)")
        }

        // One character of the signature changed.
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(envelope.utf8)) as? [String: Any])
        var signature = Array(try XCTUnwrap(object["signature"] as? String))
        signature[10] = signature[10] == "A" ? "B" : "A"
        try envelope.replacingOccurrences(of: object["signature"] as! String, with: String(signature))
            .write(toFile: folder + "/report.sig", atomically: false, encoding: .utf8)
        assertInvalid(try verify(folder), ["FAIL signature: does not match the contents of report.sig: it was changed or damaged after signing"])

        // A signed digest changed to that of a planted still.
        let digest = try XCTUnwrap(((object["stills"] as? [String: Any])?["snapshot"] as? [String: Any])?["sha256"] as? String)
        try envelope.replacingOccurrences(of: digest, with: String(repeating: "0", count: 64))
            .write(toFile: folder + "/report.sig", atomically: false, encoding: .utf8)
        assertInvalid(try verify(folder), ["FAIL signature: does not match the contents of report.sig"])

        // The signature cut short, and binary noise.
        try envelope.replacingOccurrences(of: object["signature"] as! String, with: String((object["signature"] as! String).prefix(40)))
            .write(toFile: folder + "/report.sig", atomically: false, encoding: .utf8)
        assertInvalid(try verify(folder), ["'signature' is not the base64 of a 64-byte Ed25519 signature"])
        try Data((0..<300).map { UInt8(truncatingIfNeeded: $0 &* 37) }).write(to: URL(fileURLWithPath: folder + "/report.sig"))
        assertInvalid(try verify(folder), ["FAIL report.sig: is not valid JSON"])
        try FileManager.default.removeItem(atPath: folder + "/report.sig")
        assertInvalid(try verify(folder), ["FAIL report.sig: missing: the report is not signed"])
    }

    func testWrongInputFails() throws {
        let made = try signedFolders()
        let other = try Fixtures.generated("astronaut-still.mp4")
        assertInvalid(try verify(made.passed, input: other), ["FAIL input: \(other) is not the signed input: sha256 "])
    }

    func testVerifyUsageErrors() throws {
        let made = try signedFolders()
        let empty = try Fixtures.temporaryDirectory(self).path
        let cases: [([String], String)] = [
            (["verify", empty, "--public-key", made.publicKey], "no report here"),
            (["verify", empty + "/nothing", "--public-key", made.publicKey], "no report here"),
            (["verify", made.passed, "--public-key", made.privateKey], "holds a private key; give the public key"),
            (["verify", made.passed, made.failed, "--public-key", made.publicKey, "--input", made.passedInput], "--input belongs to one report"),
            (["verify", "--public-key", made.publicKey], "missing argument"),
        ]
        for (arguments, fragment) in cases {
            let console = Console.capturing()
            XCTAssertEqual(LivenessCLI.run(arguments, console: console), 2, arguments.joined(separator: " "))
            XCTAssertTrue(console.errors.contains(fragment), "\(arguments): \(console.errors)")
        }
    }

    // MARK: analyze

    /// Inputs that cannot be analysed are recorded as invalidInput, and signed too: the signature
    /// says why there is no input digest.
    func testInvalidInputsAreSignedToo() throws {
        let made = try signedFolders()
        let out = try Fixtures.temporaryDirectory(self).path
        let notVideo = out + "/notes.mp4"
        try "not a video".write(toFile: notVideo, atomically: false, encoding: .utf8)
        let console = Console.capturing()
        XCTAssertEqual(LivenessCLI.run(["analyze", notVideo, out + "/missing.mp4", "--output", out + "/o", "--sign-key", made.privateKey],
                                       console: console), 2)
        for (name, digest) in [("notes", true), ("missing", false)] {
            let folder = out + "/o/" + name
            let result = try verify(folder)
            XCTAssertEqual(result.status, 0, result.output)
            XCTAssertTrue(result.output.contains("signed report: failed: invalidInput"), result.output)
            let envelope = try SignatureEnvelope.parse([UInt8](try Data(contentsOf: URL(fileURLWithPath: folder + "/report.sig"))))
            XCTAssertEqual(envelope.input.sha256 != nil, digest, name)
            if !digest { XCTAssertEqual(envelope.input.unavailable, "no such file") }
        }
        let withInput = try verify(out + "/o/notes", input: notVideo)
        XCTAssertEqual(withInput.status, 0, withInput.output)
    }

    func testAnalyzeRefusesAnUnusableKeyBeforeAnalysing() throws {
        let made = try signedFolders()
        let out = try Fixtures.temporaryDirectory(self).path
        let console = Console.capturing()
        XCTAssertEqual(LivenessCLI.run(["analyze", made.passedInput, "--output", out + "/o", "--sign-key", made.publicKey], console: console), 2)
        XCTAssertTrue(console.errors.contains("holds a public key; signing needs the private key"), console.errors)
        XCTAssertFalse(FileManager.default.fileExists(atPath: out + "/o"))
    }

    /// A rerun with a key analyses again a complete report that is not signed by it (rather than
    /// signing a file it did not make), keeps one that is; a rerun without a key removes report.sig
    /// of a report it rewrites.
    func testRerunsNeverSignReportsTheyDidNotMake() throws {
        let made = try signedFolders()
        let out = try Fixtures.temporaryDirectory(self).path + "/o"
        let input = try Fixtures.generated("astronaut-still.mp4")
        func analyze(_ extra: [String]) -> String {
            let console = Console.capturing()
            _ = LivenessCLI.run(["analyze", input, "--output", out] + extra, console: console)
            return console.printed
        }
        _ = analyze([])
        XCTAssertFalse(FileManager.default.fileExists(atPath: out + "/astronaut-still/report.sig"))
        XCTAssertFalse(analyze(["--sign-key", made.privateKey]).contains("already complete"))
        XCTAssertEqual(try verify(out + "/astronaut-still").status, 0)
        XCTAssertTrue(analyze(["--sign-key", made.privateKey]).contains("already complete"))
        _ = analyze(["--force"])
        XCTAssertFalse(FileManager.default.fileExists(atPath: out + "/astronaut-still/report.sig"))
    }

    // MARK: In memory (the service)

    /// The API the service signs with: a report and its stills held in memory.
    func testReportHeldInMemorySignsAndVerifies() throws {
        let made = try signedFolders()
        let folder = try copy(made.passed)
        let report = try JSONDecoder().decode(LivenessReport.self, from: Data(contentsOf: URL(fileURLWithPath: folder + "/report.json")))
        let autoshot = [UInt8](try Data(contentsOf: URL(fileURLWithPath: folder + "/autoshot.jpg")))
        let snapshot = [UInt8](try Data(contentsOf: URL(fileURLWithPath: folder + "/snapshot.jpg")))
        let key = try SigningKey.load(path: made.privateKey)
        let envelope = try report.signatureEnvelope(key: key, autoshot: autoshot, snapshot: snapshot,
                                                    input: .unavailable(path: report.input.path, reason: "frames were streamed"))
        try Data(envelope.jsonData).write(to: URL(fileURLWithPath: folder + "/report.sig"))
        try Data(try report.jsonData()).write(to: URL(fileURLWithPath: folder + "/report.json"))
        let result = try verify(folder)
        XCTAssertEqual(result.status, 0, result.output)
        XCTAssertTrue(result.output.contains("the signature holds no digest of \(report.input.path): frames were streamed"), result.output)
        XCTAssertThrowsError(try report.signatureEnvelope(key: key, autoshot: autoshot, snapshot: nil, input: .file(made.passedInput))) { error in
            XCTAssertTrue("\(error)".contains("names a snapshot (snapshot.jpg) that was not given to sign"), "\(error)")
        }
    }
}
