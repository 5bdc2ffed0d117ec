import Foundation
import XCTest

#if canImport(Glibc)
import Glibc
#endif

/// A throwaway PostgreSQL server for one test: Debian's `postgresql` (Tools/setup.sh --test),
/// `initdb` in a temporary folder as an unprivileged user (`postgres` when the tests run as root),
/// listening on a unix socket in that folder only, stopped and removed when the test ends.
public final class TemporaryPostgres: @unchecked Sendable {
    /// The folder of the cluster, its socket and its log.
    public let folder: String
    /// The database the tests use.
    public let database = "liveness"
    private let binaries: String
    private let user: String?

    /// A libpq connection URI for the test database over the unix socket.
    public var url: String { "postgresql:///\(database)?host=\(folder)&port=5432&user=postgres" }

    /// Starts a server, or skips (a failure in CI) when PostgreSQL is not installed.
    public init(_ test: XCTestCase) throws {
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
        guard let version = versions.sorted().last, FileManager.default.isExecutableFile(atPath: "/usr/lib/postgresql/\(version)/bin/initdb") else {
            throw Skip.unavailable("PostgreSQL is not installed: run Tools/setup.sh --test")
        }
        binaries = "/usr/lib/postgresql/\(version)/bin"
        user = getuid() == 0 ? "postgres" : nil
        folder = "/tmp/liveness-pg-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        if let user {
            try run("/bin/chown", [user, folder], asUser: false)
        }
        try run("\(binaries)/initdb", ["-D", "\(folder)/data", "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8"])
        // The server outlives pg_ctl and would inherit this process's descriptors (Foundation's
        // pipes and the socket by which it sees a child end), so neither would ever close: pg_ctl
        // runs under Python's subprocess, which closes every other descriptor in its child.
        var start = ["\(binaries)/pg_ctl", "-D", "\(folder)/data", "-l", "\(folder)/log", "-w", "-t", "60", "-o",
                     "-k \(folder) -c listen_addresses='' -p 5432 -F", "start"]
        if let user { start = ["/usr/sbin/runuser", "-u", user, "--"] + start }
        try run("/usr/bin/python3", ["-c", "import subprocess, sys; sys.exit(subprocess.run(sys.argv[1:], close_fds=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode)"] + start,
                asUser: false)
        test.addTeardownBlock { [self] in stop() }
        try psql("CREATE DATABASE \(database)", database: "postgres")
    }

    /// Stops the server (immediately) and removes its folder.
    public func stop() {
        try? run("\(binaries)/pg_ctl", ["-D", "\(folder)/data", "-m", "immediate", "-w", "stop"])
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// Runs SQL through `psql` (the PostgreSQL project's own client, not the engine's code) and
    /// returns the rows, columns separated by `|`.
    @discardableResult
    public func psql(_ sql: String, database: String? = nil) throws -> [String] {
        let output = try run("/usr/bin/psql", ["-h", folder, "-p", "5432", "-U", "postgres", "-d", database ?? self.database,
                                               "-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", sql])
        return output.split(separator: "\n").map(String.init)
    }

    @discardableResult
    private func run(_ tool: String, _ arguments: [String], asUser: Bool = true) throws -> String {
        let process = Process()
        if let user, asUser {
            process.executableURL = URL(fileURLWithPath: "/usr/sbin/runuser")
            process.arguments = ["-u", user, "--", tool] + arguments
        } else {
            process.executableURL = URL(fileURLWithPath: tool)
            process.arguments = arguments
        }
        process.currentDirectoryURL = URL(fileURLWithPath: "/tmp")
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        let problem = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            let log = (try? String(contentsOfFile: "\(folder)/log", encoding: .utf8)) ?? ""
            throw PostgresFailure(message: "\(tool) \(arguments.joined(separator: " ")): \(String(decoding: problem, as: UTF8.self)) \(log.suffix(600))")
        }
        return String(decoding: data, as: UTF8.self)
    }

    struct PostgresFailure: Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }
}
