import FaceTracking
import Foundation
import LivenessCore
import LivenessEvidence
import LivenessKit
import LivenessClient
import LivenessService
import TestSupport
import XCTest

/// `liveness serve --sign-key`: a streamed session's `report.sig` and a signed upload, checked by
/// the engine's verifier and by the Python reference verifier (Tools/verify_signature.py, no
/// engine code), with the input digest compared against Python's hashlib.
final class SignedServiceTests: XCTestCase {
    private func server(key: SigningKey?) throws -> LivenessServer {
        try startService { $0.signingKey = key }
    }

    private func scratch() throws -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("liveness-signed-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(atPath: folder) }
        return folder
    }

    private func get(_ path: String, _ server: LivenessServer) throws -> ServiceClient.Response {
        try ServiceClient.request("GET", path, at: try ServiceAddress(url: server.url))
    }

    /// Streams a generated case that passes, then stores what a relying party fetches (report,
    /// stills, report.sig) as a folder and verifies it.
    func testAStreamedSessionsReportIsSignedWithItsStills() throws {
        let key = try SigningKey.generate()
        let server = try server(key: key)
        let capabilities = try XCTUnwrap(try get("/v1/capabilities", server).json)
        let signing = try XCTUnwrap(capabilities["signing"] as? [String: Any])
        XCTAssertEqual(signing["publicKey"] as? String, key.publicKey.base64)
        XCTAssertEqual(signing["fingerprint"] as? String, key.publicKey.fingerprint)

        let clip = try Fixtures.generated("cases/blink-then-turn/video.mp4")
        // A passive session (the relying party's choice): the unprompted clip passes it.
        var streamer = RecordingStreamer(address: try ServiceAddress(url: server.url))
        streamer.challengeMode = .passive
        let outcome = try streamer.run(try FrameSource(path: clip))
        let id = outcome.sessionID
        let reportResponse = try get("/v1/sessions/\(id)", server)
        XCTAssertEqual(reportResponse.status, 200)
        let report = try JSONDecoder().decode(LivenessReport.self, from: Data(reportResponse.body))
        XCTAssertEqual(report.verdict.status, .passed, "the generated blink-then-turn case passes")
        XCTAssertEqual(try fetch(server, "/v1/sessions/\(id)").headers["link"], "</v1/sessions/\(id)/report.sig>; rel=\"signature\"",
                       "the result points to its signature")
        let signature = try get("/v1/sessions/\(id)/report.sig", server)
        XCTAssertEqual(signature.status, 200, String(decoding: signature.body, as: UTF8.self))

        let folder = try scratch()
        try Data(reportResponse.body).write(to: URL(fileURLWithPath: folder + "/report.json"))
        try Data(signature.body).write(to: URL(fileURLWithPath: folder + "/report.sig"))
        for still in ["autoshot.jpg", "snapshot.jpg"] {
            let response = try get("/v1/sessions/\(id)/\(still)", server)
            XCTAssertEqual(response.status, 200, still)
            try Data(response.body).write(to: URL(fileURLWithPath: folder + "/" + still))
        }
        let result = EvidenceFolder.verify(folder, trusting: [key.publicKey])
        XCTAssertTrue(result.isValid, result.findings.map(\.description).joined(separator: "\n"))
        XCTAssertEqual(result.envelope?.input.path, "stream:\(id)")
        XCTAssertEqual(result.envelope?.stillRoles.sorted(), ["autoshot", "snapshot"])
        // Another key is not trusted.
        XCTAssertFalse(EvidenceFolder.verify(folder, trusting: [try SigningKey.generate().publicKey]).isValid)

        // The Python reference verifier agrees; a swapped still is caught by both.
        let publicKey = folder + "/liveness.pub"
        try key.publicKey.pem.write(toFile: publicKey, atomically: true, encoding: .utf8)
        let tool = Fixtures.packageRoot.appendingPathComponent("Tools/verify_signature.py").path
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/python3") {
            let python = try runPython([tool, folder, "--public-key", publicKey])
            if !python.errors.contains("No module named 'cryptography'") {
                XCTAssertEqual(python.status, 0, python.output + python.errors)
            }
        }
        try FileManager.default.copyItem(atPath: folder + "/autoshot.jpg", toPath: folder + "/autoshot-copy.jpg")
        try FileManager.default.removeItem(atPath: folder + "/snapshot.jpg")
        try FileManager.default.moveItem(atPath: folder + "/autoshot-copy.jpg", toPath: folder + "/snapshot.jpg")
        let swapped = EvidenceFolder.verify(folder, trusting: [key.publicKey])
        XCTAssertFalse(swapped.isValid)
        XCTAssertTrue(swapped.problems.contains { $0.subject.contains("snapshot") }, swapped.findings.map(\.description).joined(separator: "\n"))
    }

    /// `POST /v1/analyze/signed` answers with report.sig: the report inside, the upload's SHA-256
    /// as Python's hashlib computes it, valid by the service's key.
    func testASignedUploadBindsTheUploadedBytes() throws {
        let key = try SigningKey.generate()
        let server = try server(key: key)
        let path = try Fixtures.generated("astronaut-still.mp4")
        let video = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let response = try ServiceClient.request("POST", "/v1/analyze/signed", at: try ServiceAddress(url: server.url),
                                                 body: video, contentType: "video/mp4", timeout: 60)
        XCTAssertEqual(response.status, 200, String(decoding: response.body, as: UTF8.self))
        let envelope = try SignatureEnvelope.parse(response.body)
        XCTAssertEqual(envelope.publicKey, key.publicKey)
        XCTAssertTrue(key.publicKey.isValidSignature(envelope.signature, of: envelope.signedMessage))
        XCTAssertEqual(envelope.input.path, "upload")
        XCTAssertEqual(envelope.input.byteCount, video.count)
        let hashlib = try runPython(["-c", "import hashlib,sys; print(hashlib.sha256(open(sys.argv[1],'rb').read()).hexdigest())", path])
        XCTAssertEqual(hashlib.status, 0, hashlib.errors)
        XCTAssertEqual(envelope.input.sha256.map { "\($0)" }, hashlib.output.trimmingCharacters(in: .whitespacesAndNewlines))
        XCTAssertEqual(envelope.report["verdict"]?["reason"]?.string, "presentationAttack")  // a still encoded as video
    }

    /// Without a key there is no signature, and the service says why.
    func testWithoutAKeyNothingIsSigned() throws {
        let server = try server(key: nil)
        XCTAssertTrue(try XCTUnwrap(try get("/v1/capabilities", server).json)["signing"] is NSNull)
        let upload = try ServiceClient.request("POST", "/v1/analyze/signed", at: try ServiceAddress(url: server.url),
                                               body: Array("x".utf8), contentType: "video/mp4")
        XCTAssertEqual(upload.status, 404)
        XCTAssertTrue(String(decoding: upload.body, as: UTF8.self).contains("--sign-key"))
        let clip = try Fixtures.generated("astronaut-still.mp4")
        let outcome = try RecordingStreamer(address: try ServiceAddress(url: server.url)).run(try FrameSource(path: clip))
        let id = outcome.sessionID
        XCTAssertEqual(try get("/v1/sessions/\(id)/report.sig", server).status, 404)
    }

    private func runPython(_ arguments: [String]) throws -> (status: Int32, output: String, errors: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = arguments
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let output = out.fileHandleForReading.readDataToEndOfFile()
        let errors = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: output, as: UTF8.self), String(decoding: errors, as: UTF8.self))
    }
}
