import Foundation
import TestSupport
import XCTest

/// Independent implementations the signing tests compare with: Python's json and hashlib, the
/// `cryptography` package and OpenSSL (installed by Tools/setup.sh). A test skips, saying why,
/// when one is missing.
enum ExternalTools {
    struct Output {
        var status: Int32
        var output: Data
        var errors: String
        var text: String { String(decoding: output, as: UTF8.self) }
    }

    /// Runs `tool` (an absolute path) with `arguments`, feeding `input` on standard input.
    static func run(_ tool: String, _ arguments: [String], input: Data = Data()) throws -> Output {
        guard FileManager.default.isExecutableFile(atPath: tool) else {
            throw Skip.unavailable("\(tool) is not installed: run Tools/setup.sh --test")
        }
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("liveness-tool-\(UUID().uuidString)")
        try input.write(to: scratch.appendingPathExtension("in"))
        FileManager.default.createFile(atPath: scratch.path + ".out", contents: nil)
        FileManager.default.createFile(atPath: scratch.path + ".err", contents: nil)
        defer { for ext in ["in", "out", "err"] { try? FileManager.default.removeItem(atPath: scratch.path + "." + ext) } }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        process.standardInput = FileHandle(forReadingAtPath: scratch.path + ".in")
        process.standardOutput = FileHandle(forWritingAtPath: scratch.path + ".out")
        process.standardError = FileHandle(forWritingAtPath: scratch.path + ".err")
        try process.run()
        process.waitUntilExit()
        return Output(status: process.terminationStatus, output: try Data(contentsOf: URL(fileURLWithPath: scratch.path + ".out")),
                      errors: String(decoding: try Data(contentsOf: URL(fileURLWithPath: scratch.path + ".err")), as: UTF8.self))
    }

    /// Runs a Python program with Debian's python3 (which has python3-cryptography).
    static func python(_ program: String, _ arguments: [String] = [], input: Data = Data()) throws -> Output {
        try run("/usr/bin/python3", ["-c", program] + arguments, input: input)
    }

    /// Skips unless Python's `cryptography` package is importable.
    static func requireCryptography() throws {
        let probe = try python("import cryptography.hazmat.primitives.asymmetric.ed25519")
        if probe.status != 0 { throw Skip.unavailable("python3-cryptography is not installed: run Tools/setup.sh --test") }
    }

    static func openssl(_ arguments: [String], input: Data = Data()) throws -> Output {
        try run("/usr/bin/openssl", arguments, input: input)
    }
}
