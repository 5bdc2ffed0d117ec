// The network service embedded in another program: a LivenessServer on a loopback port chosen by
// the system, asked for /v1/capabilities over HTTP, then stopped. Prints one line of JSON.
import FaceTracking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LivenessService

do {
    var configuration = ServiceConfiguration()
    configuration.port = 0
    configuration.workers = 1
    let server = try LivenessServer(configuration: configuration, model: try LandmarkModel.load())
    try server.start()
    defer { server.stop() }
    let (data, response) = try await URLSession.shared.data(from: URL(string: server.url + "/v1/capabilities")!)
    let status = (response as? HTTPURLResponse)?.statusCode ?? 0
    let body = try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
    let line: [String: Any] = ["status": status, "keys": body.keys.sorted()]
    print(String(decoding: try JSONSerialization.data(withJSONObject: line, options: [.sortedKeys]), as: UTF8.self))
} catch {
    FileHandle.standardError.write(Data("service-embedded: \(error)\n".utf8))
    exit(1)
}
