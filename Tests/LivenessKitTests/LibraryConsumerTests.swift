import Foundation
import TestSupport
import XCTest

/// The library as an integrator takes it (issue 24): an outside Swift package that depends on
/// this one *by version* — a temporary clone of the committed tree, tagged — and uses the
/// LivenessCore product. It used to fail to link (`undefined reference to 'round'`: the core did
/// not declare libm, and only the shim's link line hid that inside this package). The oracle is
/// the spec: the consumer prints the default blink threshold (0.22) and turn threshold (7.5°),
/// and a machine fed a frame without a face fails `noFace` when its input ends.
final class LibraryConsumerTests: XCTestCase {
    func testAPackageDependingOnThisOneByVersionBuildsAndRunsWithLivenessCore() throws {
        let root = Fixtures.packageRoot.path
        guard FileManager.default.fileExists(atPath: root + "/.git") else {
            throw Skip.unavailable("the package is not a git checkout, so it cannot be cloned and tagged as a dependency")
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("liveness-consumer-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let clone = directory.appendingPathComponent("liveness").path
        let consumer = directory.appendingPathComponent("consumer")
        try FileManager.default.createDirectory(at: consumer.appendingPathComponent("Sources/Consumer"), withIntermediateDirectories: true)
        for command in [["git", "clone", "-q", "--no-hardlinks", root, clone], ["git", "-C", clone, "tag", "0.9.0"]] {
            let run = try Fixtures.runTool("/usr/bin/env", command)
            XCTAssertEqual(run.status, 0, "\(command): \(run.errors)")
        }
        try """
        // swift-tools-version:6.0
        import PackageDescription
        let package = Package(
            name: "Consumer",
            dependencies: [.package(url: "file://\(clone)", from: "0.9.0")],
            targets: [.executableTarget(name: "Consumer", dependencies: [.product(name: "LivenessCore", package: "liveness")])]
        )
        """.write(to: consumer.appendingPathComponent("Package.swift"), atomically: true, encoding: .utf8)
        try """
        import LivenessCore
        let policy = LivenessPolicy()
        var machine = LivenessMachine(policy: policy, seed: 1)
        _ = try machine.observe(Observation(frameIndex: 0, timestampMicroseconds: 0, face: nil))
        _ = machine.finish(.inputEnded)
        print(policy.blinkClosureThreshold, policy.turnYawDegrees, machine.verdict?.reason?.rawValue ?? "none")
        """.write(to: consumer.appendingPathComponent("Sources/Consumer/main.swift"), atomically: true, encoding: .utf8)
        let build = try Fixtures.runTool("/usr/bin/env", ["swift", "build", "--package-path", consumer.path])
        XCTAssertEqual(build.status, 0, build.errors)
        let output = consumer.appendingPathComponent("out.txt").path
        let run = try Fixtures.runTool("/bin/sh", ["-c", #""$0/.build/debug/Consumer" > "$1""#, consumer.path, output])
        XCTAssertEqual(run.status, 0, run.errors)
        XCTAssertEqual(try String(contentsOfFile: output, encoding: .utf8), "0.22 7.5 noFace\n")
    }
}
