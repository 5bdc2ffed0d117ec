import Foundation
import LivenessCore
import LivenessCommands
import LivenessKit
import XCTest

/// Drives a machine with ARKit-style observations at 25 fps (40 ms apart), frames 0… in order.
private struct Session {
    var machine: LivenessMachine
    var index = 0

    init(policy: LivenessPolicy = .init(), seed: UInt64 = 1) { machine = LivenessMachine(policy: policy, seed: seed) }

    /// One frame; `nil` face for a frame without a face.
    mutating func frame(closure: Double = 0, yaw: Double = 0, face: Bool = true, rotation: DeviceRotation = .unknown) throws {
        let f = face ? FaceObservation(centerX: 0.5, centerY: 0.5, eyes: .closure(left: closure, right: closure), yawDegrees: yaw,
                                       box: FaceBox(x: 10, y: 20, width: 30, height: 40), yawIsFiltered: true) : nil
        _ = try machine.observe(Observation(frameIndex: index, timestampMicroseconds: Int64(index) * 40_000, face: f,
                                           deviceRotation: rotation, frameWidth: 640, frameHeight: 480))
        index += 1
    }
}

/// A session that passes: framed autoshot on frame 10 (0.40 s), blink on frame 20 (0.80 s), a
/// right turn held on frames 30–31 (1.24 s).
private func passedMachine() throws -> LivenessMachine {
    var s = Session(seed: 5)
    for i in 0...31 {
        try s.frame(closure: i == 20 ? 0.5 : 0, yaw: i >= 30 ? -10 : 0, rotation: DeviceRotation(degreesPerSecond: 2, source: .sensor))
    }
    return s.machine
}

/// A session that ends without a turn: blink on frame 15 (0.60 s), input ends at frame 39 (1.56 s).
private func unfinishedMachine() throws -> LivenessMachine {
    var s = Session()
    for i in 0..<40 { try s.frame(closure: i == 15 ? 0.9 : 0, face: i != 25) }
    return s.machine
}

private let videoInput = ReportInput(path: "/videos/selfie.mp4", kind: .video, width: 640, height: 480, fps: 25,
                                     frames: 40, durationSeconds: 1.6, rotationDegrees: 90)

/// Whether a `JSONSerialization` value is a JSON boolean (Foundation gives `NSNumber` for both).
private func isBool(_ v: Any?) -> Bool {
    guard let n = v as? NSNumber else { return false }
    return String(cString: n.objCType) == "c"
}

private func isNumber(_ v: Any?) -> Bool { v is NSNumber && !isBool(v) }
private func isNull(_ v: Any?) -> Bool { v is NSNull }
private func isString(_ v: Any?) -> Bool { v is String }

private func object(_ report: LivenessReport) throws -> [String: Any] {
    try XCTUnwrap(try JSONSerialization.jsonObject(with: report.jsonData()) as? [String: Any])
}

final class ReportSchemaTests: XCTestCase {
    /// The keys of `liveness-report/1`, from docs/report-schema.md.
    private let topKeys: Set<String> = ["schema", "engine", "input", "policy", "seed", "challenge", "verdict", "actions",
                                        "autoshot", "snapshot", "frames", "timing", "warnings", "error", "policyWeakerThanSpec",
                                        "presentationAttack", "prompts"]
    private let inputKeys: Set<String> = ["path", "kind", "width", "height", "fps", "frames", "durationSeconds", "rotationDegrees",
                                          "mirrored", "sampleAspectRatio"]
    private let stillKeys: Set<String> = ["frame", "seconds", "path", "box"]
    private let frameKeys: Set<String> = ["read", "tracked", "credited", "rotating", "rotationUnknown", "ignoredAfterVerdict"]

    func testPassedReportHasEveryKeyWithItsType() throws {
        let report = LivenessReport(machine: try passedMachine(), input: videoInput, wallSeconds: 2,
                                    stills: (autoshot: "/out/autoshot.jpg", snapshot: "/out/snapshot.jpg"),
                                    warnings: ["a warning"])
        let json = try object(report)
        XCTAssertEqual(Set(json.keys), topKeys)
        XCTAssertEqual(json["schema"] as? String, "liveness-report/1")
        let engine = try XCTUnwrap(json["engine"] as? [String: Any])
        XCTAssertEqual(Set(engine.keys), ["name", "version"])
        XCTAssertEqual(engine["name"] as? String, "liveness")
        XCTAssertEqual(engine["version"] as? String, LivenessCLI.version)

        let input = try XCTUnwrap(json["input"] as? [String: Any])
        XCTAssertEqual(Set(input.keys), inputKeys)
        XCTAssertEqual(input["kind"] as? String, "video")
        for key in ["width", "height", "fps", "frames", "durationSeconds", "rotationDegrees"] {
            XCTAssertTrue(isNumber(input[key]), key)
        }

        // Every policy key, with the policy's values.
        let policy = try XCTUnwrap(json["policy"] as? [String: Any])
        let expectedPolicy = try XCTUnwrap(try JSONSerialization.jsonObject(with: JSONEncoder().encode(LivenessPolicy())) as? [String: Any])
        XCTAssertEqual(Set(policy.keys), Set(expectedPolicy.keys))
        XCTAssertEqual(policy.count, 64)
        XCTAssertEqual((policy["blinkClosureThreshold"] as? NSNumber)?.doubleValue, 0.22)

        XCTAssertEqual(json["seed"] as? Int, 5)
        let challenge = try XCTUnwrap(json["challenge"] as? [String])
        XCTAssertEqual(Set(challenge), ["blink", "turnHead"])
        XCTAssertEqual(challenge.count, 2)

        let verdict = try XCTUnwrap(json["verdict"] as? [String: Any])
        XCTAssertEqual(Set(verdict.keys), ["status", "reason", "seconds"])
        XCTAssertEqual(verdict["status"] as? String, "passed")
        XCTAssertTrue(isNull(verdict["reason"]), "reason must be present as null when passed")
        XCTAssertEqual((verdict["seconds"] as? NSNumber)?.doubleValue, 1.24)

        let actions = try XCTUnwrap(json["actions"] as? [String: Any])
        XCTAssertEqual(Set(actions.keys), ["blink", "turnHead"])
        let blink = try XCTUnwrap(actions["blink"] as? [String: Any])
        XCTAssertEqual(Set(blink.keys), ["credited", "frame", "seconds", "value"])
        XCTAssertTrue(isBool(blink["credited"]))
        XCTAssertEqual(blink["frame"] as? Int, 20)
        XCTAssertEqual((blink["seconds"] as? NSNumber)?.doubleValue, 0.8)
        XCTAssertEqual((blink["value"] as? NSNumber)?.doubleValue, 0.5)
        let turn = try XCTUnwrap(actions["turnHead"] as? [String: Any])
        XCTAssertEqual(Set(turn.keys), ["credited", "frame", "seconds", "value", "direction"])
        XCTAssertEqual(turn["frame"] as? Int, 31)
        XCTAssertEqual(turn["direction"] as? String, "right")
        XCTAssertEqual((turn["value"] as? NSNumber)?.doubleValue, -10)

        let autoshot = try XCTUnwrap(json["autoshot"] as? [String: Any])
        XCTAssertEqual(Set(autoshot.keys), stillKeys.union(["framed"]))
        XCTAssertEqual(autoshot["frame"] as? Int, 10)
        XCTAssertEqual((autoshot["seconds"] as? NSNumber)?.doubleValue, 0.4)
        XCTAssertEqual(autoshot["path"] as? String, "/out/autoshot.jpg")
        XCTAssertTrue(isBool(autoshot["framed"]))
        let box = try XCTUnwrap(autoshot["box"] as? [String: Any])
        XCTAssertEqual(Set(box.keys), ["x", "y", "width", "height"])
        XCTAssertEqual((box["height"] as? NSNumber)?.doubleValue, 40)
        let snapshot = try XCTUnwrap(json["snapshot"] as? [String: Any])
        XCTAssertEqual(Set(snapshot.keys), stillKeys)
        XCTAssertEqual(snapshot["frame"] as? Int, 31)
        XCTAssertEqual(snapshot["path"] as? String, "/out/snapshot.jpg")

        let frames = try XCTUnwrap(json["frames"] as? [String: Any])
        XCTAssertEqual(Set(frames.keys), frameKeys)
        XCTAssertEqual(frames["read"] as? Int, 32)
        XCTAssertEqual(frames["credited"] as? Int, 22)      // frames 10…31
        XCTAssertEqual(frames["rotationUnknown"] as? Int, 0)

        let timing = try XCTUnwrap(json["timing"] as? [String: Any])
        XCTAssertEqual(Set(timing.keys), ["wallSeconds", "framesPerSecond"])
        XCTAssertEqual((timing["framesPerSecond"] as? NSNumber)?.doubleValue, 16)
        XCTAssertEqual(json["warnings"] as? [String], ["a warning"])

        // The machine saw no residuals (ARKit-style observations): the check did not decide.
        let attack = try XCTUnwrap(json["presentationAttack"] as? [String: Any])
        XCTAssertEqual(Set(attack.keys), ["parallax", "frozen", "looped", "recapture", "continuity"])
        let continuity = try XCTUnwrap(attack["continuity"] as? [String: Any])
        XCTAssertEqual(Set(continuity.keys), ["status", "largestJumpRatio", "threshold", "framesJudged", "frameIndex"])
        XCTAssertEqual(continuity["status"] as? String, "notEvaluated", "on by default; these observations carry no differences")
        let recapture = try XCTUnwrap(attack["recapture"] as? [String: Any])
        XCTAssertEqual(Set(recapture.keys), ["status", "windowEnclosure", "threshold", "framesMeasured", "frameIndex"])
        XCTAssertEqual(recapture["status"] as? String, "notEvaluated", "on by default; these observations carry no enclosure")
        XCTAssertTrue(isNull(recapture["frameIndex"]), "written as null when nothing decided")
        let frozen = try XCTUnwrap(attack["frozen"] as? [String: Any])
        XCTAssertEqual(Set(frozen.keys), ["status", "longestRunFrames", "longestRunSeconds", "framesMeasured"])
        XCTAssertEqual(frozen["status"] as? String, "notEvaluated", "on by default; these observations carry no differences")
        let looped = try XCTUnwrap(attack["looped"] as? [String: Any])
        XCTAssertEqual(Set(looped.keys), ["status", "longestRepeatSeconds", "lagSeconds", "framesMeasured"])
        XCTAssertEqual(looped["status"] as? String, "notEvaluated", "on by default; these observations carry no repetitions")
        XCTAssertTrue(isNull(looped["lagSeconds"]), "lagSeconds must be present as null without a repeat")
        let parallax = try XCTUnwrap(attack["parallax"] as? [String: Any])
        XCTAssertEqual(Set(parallax.keys), ["status", "residual", "threshold", "framesUsed", "framesUnreliable", "frameIndex"])
        XCTAssertEqual(parallax["status"] as? String, "notEvaluated")
        XCTAssertTrue(isNull(parallax["residual"]), "an absent residual is written as null")
        XCTAssertEqual((parallax["threshold"] as? NSNumber)?.doubleValue, LivenessPolicy().parallaxMinResidual)
        XCTAssertEqual(parallax["frameIndex"] as? Int, 31)
    }

    func testFailedReportWritesNullsInsteadOfOmittingKeys() throws {
        let report = LivenessReport(machine: try unfinishedMachine(),
                                    input: ReportInput(path: "t.jsonl", kind: .trace), wallSeconds: 0,
                                    stills: (nil, nil), warnings: [])
        let json = try object(report)
        XCTAssertEqual(Set(json.keys), topKeys)
        XCTAssertTrue(isNull(json["snapshot"]))
        let input = try XCTUnwrap(json["input"] as? [String: Any])
        XCTAssertEqual(Set(input.keys), inputKeys)
        XCTAssertTrue(isNull(json["error"]), "error is null when the input was usable")
        for key in ["width", "height", "fps", "frames", "durationSeconds", "rotationDegrees", "mirrored", "sampleAspectRatio"] {
            XCTAssertTrue(isNull(input[key]), "input.\(key) should be null")
        }
        let verdict = try XCTUnwrap(json["verdict"] as? [String: Any])
        XCTAssertEqual(verdict["status"] as? String, "failed")
        XCTAssertEqual(verdict["reason"] as? String, "inputEnded")
        XCTAssertEqual((verdict["seconds"] as? NSNumber)?.doubleValue, 1.56)
        let turn = try XCTUnwrap((json["actions"] as? [String: Any])?["turnHead"] as? [String: Any])
        XCTAssertEqual(Set(turn.keys), ["credited", "frame", "seconds", "value", "direction"])
        XCTAssertEqual(turn["credited"] as? Bool, false)
        for key in ["frame", "seconds", "value", "direction"] { XCTAssertTrue(isNull(turn[key]), "turnHead.\(key) should be null") }
        let autoshot = try XCTUnwrap(json["autoshot"] as? [String: Any])
        XCTAssertTrue(isNull(autoshot["path"]))
        let timing = try XCTUnwrap(json["timing"] as? [String: Any])
        XCTAssertTrue(isNull(timing["framesPerSecond"]))
        XCTAssertEqual(json["warnings"] as? [String], [])
        let frames = try XCTUnwrap(json["frames"] as? [String: Any])
        XCTAssertEqual(frames["tracked"] as? Int, 39)
    }

    func testReportsDecodeBackUnchanged() throws {
        for machine in [try passedMachine(), try unfinishedMachine()] {
            let report = LivenessReport(machine: machine, input: videoInput, wallSeconds: 1.5, stills: ("a.jpg", nil), warnings: ["w"])
            XCTAssertEqual(try JSONDecoder().decode(LivenessReport.self, from: report.jsonData()), report)
        }
    }

    func testBuilderFinishesAnOpenSessionAndAddsFramesIgnoredByTheFrontEnd() throws {
        var s = Session()
        for _ in 0..<5 { try s.frame(face: false) }
        let report = LivenessReport(machine: s.machine, input: videoInput, wallSeconds: 1, stills: (nil, nil), warnings: [],
                                    ignoredAfterVerdict: 3)
        XCTAssertEqual(report.verdict.status, .failed)
        XCTAssertEqual(report.verdict.reason, .noFace)     // never a face: noFace beats inputEnded
        XCTAssertEqual(report.verdict.seconds, 0.16)
        XCTAssertNil(report.autoshot)
        XCTAssertEqual(report.frames.ignoredAfterVerdict, 3)
        XCTAssertEqual(report.frames.read, 5)
    }

    func testRotatingFramesAreCounted() throws {
        var s = Session()
        for i in 0..<20 { try s.frame(rotation: DeviceRotation(degreesPerSecond: i >= 15 ? 30 : nil, source: i >= 15 ? .video : .unknown)) }
        let report = LivenessReport(machine: s.machine, input: videoInput, wallSeconds: 1, stills: (nil, nil), warnings: [])
        XCTAssertEqual(report.frames.rotating, 5)
        XCTAssertEqual(report.frames.credited, 5)          // frames 10…14
        XCTAssertEqual(report.frames.rotationUnknown, 5)
    }
}

final class ReportSummaryTests: XCTestCase {
    func testSummaries() throws {
        let passed = LivenessReport(machine: try passedMachine(), input: videoInput, wallSeconds: 1, stills: (nil, nil), warnings: [])
        XCTAssertEqual(passed.summary, "passed in 1.24 s (blink at 0.80 s, turn right at 1.24 s)")

        let unfinished = LivenessReport(machine: try unfinishedMachine(), input: videoInput, wallSeconds: 1, stills: (nil, nil), warnings: [])
        XCTAssertEqual(unfinished.summary, "failed: inputEnded after 1.56 s (blink at 0.60 s, no head turn)")

        var policy = LivenessPolicy()
        policy.scanCapSeconds = 1
        var s = Session(policy: policy)
        for _ in 0...35 { try s.frame() }   // autoshot at 0.40 s, cap reached at 1.40 s (frame 35)
        let timeout = LivenessReport(machine: s.machine, input: videoInput, wallSeconds: 1, stills: (nil, nil), warnings: [])
        XCTAssertEqual(timeout.summary, "failed: timeout after 1.40 s")
    }
}
