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
