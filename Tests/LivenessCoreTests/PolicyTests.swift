import Foundation
import LivenessCore
import XCTest

final class PolicyTests: XCTestCase {
    func testDefaultsAreTheSpecs() {
        let p = LivenessPolicy()
        XCTAssertEqual(p.settleSeconds, 0.3)
        XCTAssertEqual(p.framingTimeoutSeconds, 2.5)
        XCTAssertEqual(p.framedFramesRequired, 3)
        XCTAssertEqual(p.scanCapSeconds, 20)
        XCTAssertEqual(p.blinkClosureThreshold, 0.22)
        XCTAssertEqual(p.turnYawDegrees, 7.5)
        XCTAssertEqual(p.turnHeldFrames, 2)
        XCTAssertEqual(p.rotationLimitDegreesPerSecond, 10)
        XCTAssertEqual(p.guideCenterX, 0.5)
        XCTAssertEqual(p.guideCenterY, 0.5)
        XCTAssertEqual(p.guideRadius, 0.3)
    }

    func testPartialJSONKeepsDefaultsForAbsentKeys() throws {
        let json = #"{"turnYawDegrees": 10, "scanCapSeconds": 5.5, "eyeBaselinePercentile": 0.9}"#
        let p = try JSONDecoder().decode(LivenessPolicy.self, from: Data(json.utf8))
        var expected = LivenessPolicy()
        expected.turnYawDegrees = 10
        expected.scanCapSeconds = 5.5
        expected.eyeBaselinePercentile = 0.9
        XCTAssertEqual(p, expected)
        XCTAssertEqual(try JSONDecoder().decode(LivenessPolicy.self, from: Data("{}".utf8)), LivenessPolicy())
    }

    func testRoundTripAndWrongTypesFail() throws {
        var p = LivenessPolicy()
        p.guideRadius = 0.25
        p.turnHeldFrames = 3
        p.yawMedianWindowSeconds = 0.3
        let data = try JSONEncoder().encode(p)
        XCTAssertEqual(try JSONDecoder().decode(LivenessPolicy.self, from: data), p)
        XCTAssertThrowsError(try JSONDecoder().decode(LivenessPolicy.self, from: Data(#"{"turnHeldFrames": "two"}"#.utf8)))
    }

    func testPolicyOverridesChangeTheMachine() throws {
        var p = LivenessPolicy()
        p.turnHeldFrames = 3
        p.blinkClosureThreshold = 0.5
        var d = Driver(policy: p)
        try d.startScan()
        try d.frames(2, face(closure: 0.4, yaw: 9))
        XCTAssertTrue(d.credited.isEmpty)
        try d.frame(face(closure: 0.5, yaw: 9))
        XCTAssertEqual(d.credited.map(\.action), [.blink, .turnHead])
        XCTAssertEqual(d.machine.evidence.policy, p)
    }
}
