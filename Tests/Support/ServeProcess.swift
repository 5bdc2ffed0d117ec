import Foundation
import XCTest

#if canImport(Glibc)
import Glibc
#endif

/// A real `liveness serve` process (the executable built beside the tests) on a free loopback
/// port, for tests that need several instances, a load balancer in front, or `kill -9`. Its
/// standard output and error go to files (never a pipe that could fill and block it); it is
/// killed (SIGKILL) when the test ends, whatever happened.
public final class ServeProcess: @unchecked Sendable {
    /// `http://127.0.0.1:PORT`, as the process printed it.
    public private(set) var url = ""
    /// The port it listens on.
    public private(set) var port = 0
    /// Its process id.
    public let pid: Int32
    private let process: Process
    /// Where its standard output and error went.
    public let logPath: String

    /// Starts `liveness serve --port 0 ARGUMENTS` and waits (at most `timeout` seconds) for its
    /// "listening on" line; fails with the process's output when it exits or stays silent.
    public convenience init(_ test: XCTestCase, arguments: [String], timeout: Double = 60) throws {
        try self.init(launching: test, arguments: arguments)
        try waitUntilListening(timeout: timeout)
    }

    /// Starts one process per entry of `arguments` at once (their model loads overlap), then
    /// waits for each as `init` does.
    public static func start(_ test: XCTestCase, arguments: [[String]], timeout: Double = 60) throws -> [ServeProcess] {
        let all = try arguments.map { try ServeProcess(launching: test, arguments: $0) }
        for instance in all { try instance.waitUntilListening(timeout: timeout) }
        return all
    }

    private init(launching test: XCTestCase, arguments: [String]) throws {
        let executable = try Fixtures.livenessExecutable()
        logPath = FileManager.default.temporaryDirectory.appendingPathComponent("liveness-serve-\(UUID().uuidString).log").path
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["serve", "--port", "0"] + arguments
        let log = try XCTUnwrap(FileHandle(forWritingAtPath: logPath))
        process.standardOutput = log
        process.standardError = log
        try process.run()
        try? log.close()
        self.process = process
        pid = process.processIdentifier
        let logPath = logPath
        test.addTeardownBlock {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
            try? FileManager.default.removeItem(atPath: logPath)
        }
        self.arguments = arguments
    }

    private let arguments: [String]

    private func waitUntilListening(timeout: Double) throws {
        let deadline = Date().addingTimeInterval(timeout)
        var found: String?
        while found == nil {
            let text = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
            found = text.split(separator: "\n").first { $0.contains("listening on http://") }
                .flatMap { $0.split(separator: " ").first { $0.hasPrefix("http://") } }.map(String.init)
            if found != nil { break }
            guard process.isRunning else { throw ServeFailure("liveness serve \(arguments.joined(separator: " ")) exited (\(process.terminationStatus)): \(text)") }
            guard Date() < deadline else { throw ServeFailure("liveness serve did not say it was listening within \(Int(timeout)) s: \(text)") }
            Thread.sleep(forTimeInterval: 0.05)
        }
        url = found!
        guard let colon = url.lastIndex(of: ":"), let port = Int(url[url.index(after: colon)...]) else {
            throw ServeFailure("no port in \(url)")
        }
        self.port = port
    }

    /// True while the process runs.
    public var isRunning: Bool { process.isRunning }

    /// Everything it printed so far.
    public var output: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// `kill -9`: the process dies at once, with no chance to end its streams or leave the store.
    public func kill9() {
        kill(pid, SIGKILL)
        process.waitUntilExit()
    }

    struct ServeFailure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }
}
