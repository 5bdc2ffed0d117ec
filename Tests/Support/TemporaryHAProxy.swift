import Foundation
import XCTest

#if canImport(Glibc)
import Glibc
#endif

/// A real load balancer for one test: Debian's `haproxy` (Tools/setup.sh --test) in the
/// foreground, running the sample configuration `docs/scale/haproxy.cfg` (round robin, health
/// checks on `/healthz`) with its `bind` line set to a free loopback port and its `server` lines
/// to the given backends. Its log (one line per request: server, method, path, status; and the
/// health checks' state changes) goes to a file; it is killed when the test ends.
public final class TemporaryHAProxy: @unchecked Sendable {
    /// `http://127.0.0.1:PORT`, the frontend.
    public let url: String
    public let port: Int
    private let process: Process
    private let folder: String

    /// Starts haproxy in front of `backends` (name, port on 127.0.0.1) and waits (at most
    /// `timeout` seconds) until it accepts connections; skips (a failure in CI) when haproxy is
    /// not installed.
    public init(_ test: XCTestCase, backends: [(name: String, port: Int)], timeout: Double = 20) throws {
        let binary = ["/usr/sbin/haproxy", "/usr/local/sbin/haproxy"].first { FileManager.default.isExecutableFile(atPath: $0) }
        guard let binary else { throw Skip.unavailable("haproxy is not installed: run Tools/setup.sh --test") }
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("liveness-haproxy-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        port = try Self.freePort()
        url = "http://127.0.0.1:\(port)"
        let sample = try String(contentsOf: Fixtures.packageRoot.appendingPathComponent("docs/scale/haproxy.cfg"), encoding: .utf8)
        var lines: [String] = []
        for line in sample.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("bind ") {
                lines.append("    bind 127.0.0.1:\(port)")
            } else if !trimmed.hasPrefix("server ") {
                lines.append(String(line))
            }
        }
        // The server lines close the backend section, the file's last.
        while lines.last?.isEmpty == true { lines.removeLast() }
        lines += backends.map { "    server \($0.name) 127.0.0.1:\($0.port)" }
        let configuration = folder + "/haproxy.cfg"
        try (lines.joined(separator: "\n") + "\n").write(toFile: configuration, atomically: true, encoding: .utf8)
        _ = FileManager.default.createFile(atPath: folder + "/log", contents: nil)
        let logFile = try XCTUnwrap(FileHandle(forWritingAtPath: folder + "/log"))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = ["-db", "-f", configuration]
        process.standardOutput = logFile
        process.standardError = logFile
        process.currentDirectoryURL = URL(fileURLWithPath: folder)
        try process.run()
        try? logFile.close()
        self.process = process
        let folder = folder
        test.addTeardownBlock {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
            try? FileManager.default.removeItem(atPath: folder)
        }
        let deadline = Date().addingTimeInterval(timeout)
        while !Self.accepts(port: port) {
            guard process.isRunning else { throw HAProxyFailure("haproxy exited (\(process.terminationStatus)): \(self.log())") }
            guard Date() < deadline else { throw HAProxyFailure("haproxy did not listen within \(Int(timeout)) s: \(self.log())") }
            Thread.sleep(forTimeInterval: 0.05)
        }
    }

    /// Everything haproxy logged so far.
    public func log() -> String { (try? String(contentsOfFile: folder + "/log", encoding: .utf8)) ?? "" }

    /// The request lines of the log (`server method path status`, as `log-format` in the sample
    /// says), in order.
    public func requests() -> [(server: String, method: String, path: String, status: Int)] {
        log().split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ")
            guard fields.count == 4, let status = Int(fields[3]), fields[2].hasPrefix("/") else { return nil }
            return (String(fields[0]), String(fields[1]), String(fields[2]), status)
        }
    }

    /// Waits (at most `timeout` seconds) until haproxy's health checks took `server` out of the
    /// rotation ("Server liveness/NAME is DOWN" in its log). True when they did.
    public func waitUntilDown(_ server: String, timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if log().contains("/\(server) is DOWN") { return true }
            Thread.sleep(forTimeInterval: 0.1)
        }
        return false
    }

    /// A TCP port on 127.0.0.1 that was free a moment ago (the kernel's pick for port 0).
    public static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw HAProxyFailure("socket: \(errno)") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer -> Int32 in
                guard bind(fd, pointer, length) == 0 else { return -1 }
                return getsockname(fd, pointer, &length)
            }
        }
        guard bound == 0 else { throw HAProxyFailure("bind: \(errno)") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// True when a TCP connection to 127.0.0.1:`port` opens.
    public static func accepts(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        } == 0
    }

    struct HAProxyFailure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }
}
