import FaceTracking
import Foundation
import LivenessService
import XCTest

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What the service tests share: one landmark model per test process, a service started on a
/// free loopback port for one test, and requests through Foundation's URLSession (an HTTP client
/// that is not the engine's own) with their headers.
enum ServiceTestSupport {
    static let model = try? LandmarkModel.load()
}

extension XCTestCase {
    /// A started `LivenessServer` on a free loopback port (unless `configure` sets another),
    /// stopped when the test ends.
    func startService(_ configure: (inout ServiceConfiguration) -> Void = { _ in }) throws -> LivenessServer {
        var configuration = ServiceConfiguration()
        configuration.port = 0
        configure(&configuration)
        let server = try LivenessServer(configuration: configuration, model: try XCTUnwrap(ServiceTestSupport.model, "the landmark model"))
        try server.start()
        addTeardownBlock { server.stop() }
        return server
    }

    /// `method` `path` on `server` through URLSession: status, headers (names in lower case), body.
    func fetch(_ server: LivenessServer, _ path: String, method: String = "GET") throws -> (status: Int, headers: [String: String], body: Data) {
        var request = URLRequest(url: try XCTUnwrap(URL(string: server.url + path)))
        request.httpMethod = method
        request.cachePolicy = .reloadIgnoringLocalCacheData
        let box = FetchBox()
        let done = DispatchSemaphore(value: 0)
        URLSession.shared.dataTask(with: request) { data, response, error in
            box.result = (data, response as? HTTPURLResponse, error)
            done.signal()
        }.resume()
        XCTAssertEqual(done.wait(timeout: .now() + 20), .success, "\(method) \(path) answered")
        let (data, response, error) = try XCTUnwrap(box.result)
        if let error { throw error }
        let http = try XCTUnwrap(response)
        var headers: [String: String] = [:]
        for (key, value) in http.allHeaderFields { headers["\(key)".lowercased()] = "\(value)" }
        return (http.statusCode, headers, data ?? Data())
    }
}

private final class FetchBox: @unchecked Sendable {
    var result: (Data?, HTTPURLResponse?, Error?)?
}
