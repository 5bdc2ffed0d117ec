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
}
