import FaceTracking
import Foundation
import LivenessClient
import LivenessService
import LivenessStore
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

extension ServiceClient.Response {
    /// The body read by Foundation's `JSONSerialization` as an object: the tests' view of what
    /// the service answers, independent of the types it encodes them with.
    var json: [String: Any]? { (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] }
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

#if canImport(Glibc)
import Glibc
#endif

/// Bytes sent as they are over one TCP connection to 127.0.0.1:`port`, and everything the
/// server answered until it closed the connection or `timeout` seconds passed (a hang guard).
/// For requests an HTTP client library would refuse to send (ambiguous framing, forged headers).
func rawExchange(port: Int, _ request: String, timeout: Double = 10) throws -> String {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw POSIXError(.EIO) }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard connected == 0 else { throw POSIXError(.ECONNREFUSED) }
    var wait = timeval(tv_sec: Int(timeout), tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
    let bytes = Array(request.utf8)
    _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    var answer: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if n <= 0 { break }
        answer += buffer[0..<n]
    }
    return String(decoding: answer, as: UTF8.self)
}

/// The rows `query` gives on the SQLite store in `dir`, read through Python's own sqlite3 module
/// (read-only, an implementation that is not the engine's), fields joined by "|".
func sqliteRows(in dir: URL, _ query: String) throws -> [String] {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
    process.arguments = ["-c", """
        import sqlite3, sys
        db = sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True)
        for row in db.execute(sys.argv[2]):
            print("|".join("" if v is None else str(v) for v in row))
        """, dir.appendingPathComponent(SQLiteSessionStore.fileName).path, query]
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    XCTAssertEqual(process.terminationStatus, 0, query)
    let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    return text.isEmpty ? [] : text.components(separatedBy: "\n")
}
