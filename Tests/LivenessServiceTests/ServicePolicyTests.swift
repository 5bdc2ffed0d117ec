import LivenessCore
import LivenessKit
@testable import LivenessService
import XCTest

/// A camera client may tighten the session's policy, never loosen a security threshold.
final class ServicePolicyTests: XCTestCase {
    func testAClientCannotWidenTheYawSwayAllowance() throws {
        // A wider allowance lets a camera's rotation through as a head turn (docs/head-pose.md).
        let base = LivenessPolicy()
        XCTAssertThrowsError(try ServicePolicy.applying(["yawSwayDegrees": base.yawSwayDegrees + 10], to: base)) {
            XCTAssertEqual(($0 as? StreamError)?.code, .forbidden)
        }
        let tighter = try ServicePolicy.applying(["yawSwayDegrees": 1], to: base)
        XCTAssertEqual(tighter.yawSwayDegrees, 1)
    }

    func testEyeConditioningIsASecurityThresholdToo() throws {
        // Raising the onset level or disabling the fit-jump rule makes a dip easier to count as a blink.
        let base = LivenessPolicy()
        for (key, value) in [("eyeDipOnsetLevel", base.eyeDipOnsetLevel + 0.2), ("eyeFitJumpRatio", 0.0),
                             ("blinkClosureThreshold", 0.1), ("scanCapSeconds", 60.0)] {
            XCTAssertThrowsError(try ServicePolicy.applying([key: value], to: base), key) {
                XCTAssertEqual(($0 as? StreamError)?.code, .forbidden, key)
            }
        }
        // A session already without the rule may keep it off.
        var relaxed = base
        relaxed.eyeFitJumpRatio = 0
        XCTAssertEqual(try ServicePolicy.applying(["eyeFitJumpRatio": 0], to: relaxed).eyeFitJumpRatio, 0)
        // Stricter values are taken.
        let strict = try ServicePolicy.applying(["blinkClosureThreshold": 0.3, "scanCapSeconds": 10], to: base)
        XCTAssertEqual(strict.blinkClosureThreshold, 0.3)
        XCTAssertEqual(strict.scanCapSeconds, 10)
    }

    func testValuesOutsideTheirBoundsAndUnknownKeysAreRefused() {
        let base = LivenessPolicy()
        for (key, value) in [("scanCapSeconds", 1e13), ("yawMedianWindowSeconds", -1.0), ("turnHeldFrames", 2.5),
                             ("blinkClosureThreshold", 7.0), ("noSuchKey", 1.0)] {
            XCTAssertThrowsError(try ServicePolicy.applying([key: value], to: base), key) {
                XCTAssertEqual(($0 as? StreamError)?.code, .invalidMessage, key)
            }
        }
    }
}

/// Choice keys (`challengeMode`) by name or index, and who may choose passive.
final class ServicePolicyChoiceTests: XCTestCase {
    func testAChoiceKeyIsReadByNameOrIndex() throws {
        XCTAssertEqual(try ServicePolicy.overrides(["challengeMode": "passive"]), ["challengeMode": 0])
        XCTAssertEqual(try ServicePolicy.overrides(["challengeMode": "prompted", "turnYawDegrees": 9]), ["challengeMode": 1, "turnYawDegrees": 9])
        XCTAssertEqual(try ServicePolicy.overrides(["challengeMode": 1, "scanCapSeconds": .null]), ["challengeMode": 1])
        for bad: [String: JSONValue] in [["challengeMode": "off"], ["turnYawDegrees": "9"], ["noSuchKey": "x"], ["challengeMode": true]] {
            XCTAssertThrowsError(try ServicePolicy.overrides(bad), "\(bad)") {
                XCTAssertEqual(($0 as? StreamError)?.code, .invalidMessage, "\(bad)")
            }
        }
        // The client message carries the index.
        guard case let .start(start) = try ClientMessage.parse(Array(#"{"type":"start","policy":{"challengeMode":"prompted"}}"#.utf8)) else {
            return XCTFail("not a start")
        }
        XCTAssertEqual(start.policy, ["challengeMode": 1])
    }

    /// A stream message with a key twice is refused (the package's strict JSON reader), at any
    /// depth: the first value must not win silently where the client's tools read the last.
    func testAMessageWithAKeyTwiceIsRefused() {
        for text in [#"{"type":"start","policy":{"turnYawDegrees":9,"turnYawDegrees":2}}"#,
                     #"{"type":"start","type":"cancel"}"#,
                     #"{"type":"motion","samples":[{"t":1,"x":0,"y":0,"z":0,"x":1}]}"#] {
            XCTAssertThrowsError(try ClientMessage.parse(Array(text.utf8)), text) {
                XCTAssertEqual(($0 as? StreamError)?.code, .invalidMessage, text)
                XCTAssertTrue(($0 as? StreamError)?.message.contains("duplicate key") == true, "\($0)")
            }
        }
        // Booleans and numbers stay apart: `true` is no number, 1 is no boolean.
        for text in [#"{"type":"start","width":true}"#, #"{"type":"start","ack":1}"#] {
            XCTAssertThrowsError(try ClientMessage.parse(Array(text.utf8)), text)
        }
    }

    func testPassiveIsWeakerThanPromptedExceptForTheRelyingParty() throws {
        var prompted = LivenessPolicy()
        prompted.challengeMode = .prompted
        // A camera client: forbidden, however it is written.
        XCTAssertThrowsError(try ServicePolicy.applying(try ServicePolicy.overrides(["challengeMode": "passive"]), to: prompted)) {
            XCTAssertEqual(($0 as? StreamError)?.code, .forbidden)
            XCTAssertTrue(($0 as? StreamError)?.message.contains(#""passive" is weaker than the session's "prompted""#) == true, "\($0)")
        }
        // A passive session may be made prompted.
        XCTAssertEqual(try ServicePolicy.applying(["challengeMode": 1], to: LivenessPolicy()).challengeMode, .prompted)
        // The relying party chooses the mode either way, and only the mode.
        XCTAssertEqual(try ServicePolicy.applying(["challengeMode": 0], to: prompted, modeIsChoice: true).challengeMode, .passive)
        XCTAssertThrowsError(try ServicePolicy.applying(["turnYawDegrees": 2], to: prompted, modeIsChoice: true)) {
            XCTAssertEqual(($0 as? StreamError)?.code, .forbidden)
        }
    }
}
