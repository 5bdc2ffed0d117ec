import Foundation
import TestSupport
import XCTest

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif

/// docs/scale/liveness-replicas.yaml (docs/scale.md): N replicas of `liveness serve` on one
/// PostgreSQL store. The YAML parses (python3-yaml) into a Deployment and a Service that fit
/// together, with the store's URL, password and key from a Secret and no stickiness; and the
/// container's own command, run here against a real PostgreSQL server (`TemporaryPostgres`) with
/// the Secret's values in its environment, starts an instance that is ready.
final class ReplicasManifestTests: XCTestCase {
    private func documents() throws -> (deployment: [String: Any], service: [String: Any]) {
        let all = try ScaleDocTests.manifests("liveness-replicas.yaml")
        XCTAssertEqual(all.map { $0["kind"] as? String }, ["Deployment", "Service"])
        return (try XCTUnwrap(all.first), try XCTUnwrap(all.last))
    }

    private func container(_ deployment: [String: Any]) throws -> [String: Any] {
        let pod = try XCTUnwrap(((deployment["spec"] as? [String: Any])?["template"] as? [String: Any])?["spec"] as? [String: Any])
        return try XCTUnwrap((pod["containers"] as? [[String: Any]])?.first)
    }

    func testTheDeploymentAndServiceFitTogetherWithSecretsAndNoStickiness() throws {
        let (deployment, service) = try documents()
        XCTAssertEqual(deployment["apiVersion"] as? String, "apps/v1")
        let spec = try XCTUnwrap(deployment["spec"] as? [String: Any])
        XCTAssertGreaterThanOrEqual(spec["replicas"] as? Int ?? 0, 2, "several replicas")
        let labels = try XCTUnwrap(((spec["template"] as? [String: Any])?["metadata"] as? [String: Any])?["labels"] as? [String: String])
        let selector = try XCTUnwrap((spec["selector"] as? [String: Any])?["matchLabels"] as? [String: String])
        XCTAssertEqual(selector, labels.filter { selector[$0.key] != nil }, "the Deployment selects its own pods")
        let serviceSpec = try XCTUnwrap(service["spec"] as? [String: Any])
        XCTAssertEqual(try XCTUnwrap(serviceSpec["selector"] as? [String: String]), selector, "the Service selects the pods")
        XCTAssertNotEqual(serviceSpec["sessionAffinity"] as? String, "ClientIP", "no stickiness")

        let container = try container(deployment)
        let environment = try XCTUnwrap(container["env"] as? [[String: Any]])
        for name in ["LIVENESS_STORE_URL", "PGPASSWORD", "LIVENESS_STORE_KEY"] {
            let entry = try XCTUnwrap(environment.first { $0["name"] as? String == name }, name)
            XCTAssertNil(entry["value"], "\(name) is not written in the manifest")
            XCTAssertNotNil((entry["valueFrom"] as? [String: Any])?["secretKeyRef"], "\(name) comes from a Secret")
        }
        let script = try XCTUnwrap((container["args"] as? [String])?.first)
        for option in ["--store \"$LIVENESS_STORE_URL\"", "--store-key ", "--token-file ", "--host 0.0.0.0"] {
            XCTAssertTrue(script.contains(option), "the command has \(option)")
        }
        // Readiness on /healthz (503 while the store is unreachable), on the container's port.
        let port = try XCTUnwrap((container["ports"] as? [[String: Any]])?.first)
        let readiness = try XCTUnwrap((container["readinessProbe"] as? [String: Any])?["httpGet"] as? [String: Any])
        XCTAssertEqual(readiness["path"] as? String, "/healthz")
        XCTAssertEqual(readiness["port"] as? String, port["name"] as? String)
        let liveness = try XCTUnwrap((container["livenessProbe"] as? [String: Any])?["httpGet"] as? [String: Any])
        XCTAssertEqual(liveness["port"] as? String, port["name"] as? String)
        XCTAssertTrue(script.contains("--port \(try XCTUnwrap(port["containerPort"] as? Int))"))
        let target = try XCTUnwrap((serviceSpec["ports"] as? [[String: Any]])?.first?["targetPort"] as? String)
        XCTAssertEqual(target, port["name"] as? String)
    }

    /// The container's command as the pod runs it, with the Secret's values in its environment,
    /// the volumes at temporary folders, loopback and a free port instead of 0.0.0.0:8080.
    func testTheContainersCommandStartsAReadyInstanceOnPostgreSQL() throws {
        let (deployment, _) = try documents()
        let container = try container(deployment)
        let command = try XCTUnwrap(container["command"] as? [String]) + (try XCTUnwrap(container["args"] as? [String]))
        let liveness = try Fixtures.livenessExecutable()
        let postgres = try TemporaryPostgres(self)
        let root = try Fixtures.temporaryDirectory(self)
        let run = root.appendingPathComponent("run"), api = root.appendingPathComponent("api")
        try FileManager.default.createDirectory(at: run, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: api, withIntermediateDirectories: true)
        try Data("relying-party-token-0123456789\n".utf8).write(to: api.appendingPathComponent("token"))
        let port = try TemporaryHAProxy.freePort()
        let script = command.last!
            .replacingOccurrences(of: "/run/liveness", with: run.path)
            .replacingOccurrences(of: "/etc/liveness/api", with: api.path)
            .replacingOccurrences(of: "--host 0.0.0.0 --port 8080", with: "--host 127.0.0.1 --port \(port)")
        XCTAssertFalse(script.contains("8080"), "the port was replaced")
        let key = String(repeating: "5a", count: 32)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = Array(command.dropFirst().dropLast()) + [script]
        process.environment = ["PATH": URL(fileURLWithPath: liveness).deletingLastPathComponent().path + ":/usr/bin:/bin",
                               "LIVENESS_STORE_URL": postgres.url, "PGPASSWORD": "unused-with-trust", "LIVENESS_STORE_KEY": key]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        addTeardownBlock {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }
        var health: (Int, String)?
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline && process.isRunning {
            health = get("http://127.0.0.1:\(port)/healthz")
            if health?.0 == 200 { break }
            Thread.sleep(forTimeInterval: 0.2)
        }
        XCTAssertEqual(health?.0, 200, "the readiness probe passes: \(String(describing: health))")
        XCTAssertTrue(health?.1.contains("\"store\":\"ok\"") == true || health?.1.contains("\"store\" : \"ok\"") == true, "\(String(describing: health))")
        XCTAssertEqual(get("http://127.0.0.1:\(port)/v1/capabilities")?.0, 200, "the liveness probe passes")
        // The key file: the service's user's only, with the Secret's value; the variable gone
        // from the service's environment.
        let keyFile = run.appendingPathComponent("store.key").path
        let mode = try XCTUnwrap(try FileManager.default.attributesOfItem(atPath: keyFile)[.posixPermissions] as? Int)
        XCTAssertEqual(mode, 0o600)
        XCTAssertEqual(try String(contentsOfFile: keyFile, encoding: .utf8), key + "\n")
        let environ = try Data(contentsOf: URL(fileURLWithPath: "/proc/\(process.processIdentifier)/environ"))
        XCTAssertTrue(environ.range(of: Data("LIVENESS_STORE_URL=".utf8)) != nil, "the process read is the service")
        XCTAssertNil(environ.range(of: Data("LIVENESS_STORE_KEY".utf8)), "the key is not left in the service's environment")
        let instances = try postgres.psql("SELECT pid FROM liveness_instances")
        XCTAssertEqual(instances, ["\(process.processIdentifier)"], "the shell exec'd the service: one instance in the store")
    }

    /// GET `url` through URLSession: status and body, nil when nothing answered within 10 s.
    private func get(_ url: String) -> (Int, String)? {
        guard let address = URL(string: url) else { return nil }
        var request = URLRequest(url: address)
        request.timeoutInterval = 10
        let box = Answer()
        let done = DispatchSemaphore(value: 0)
        URLSession.shared.dataTask(with: request) { data, response, _ in
            if let http = response as? HTTPURLResponse { box.value = (http.statusCode, String(decoding: data ?? Data(), as: UTF8.self)) }
            done.signal()
        }.resume()
        guard done.wait(timeout: .now() + 12) == .success else { return nil }
        return box.value
    }
}

private final class Answer: @unchecked Sendable {
    var value: (Int, String)?
}
