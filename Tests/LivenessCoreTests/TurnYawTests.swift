import LivenessCore
import XCTest

/// The turn signal from camera-axis and line-of-sight yaw (`TurnYaw`) and the machine that uses it.
///
/// The scenarios are stated as geometry: a head that turns by ψ changes both yaws by ψ; a camera
/// that rotates by α (or an image that slides by α of line-of-sight angle) changes the
/// camera-axis yaw by −α and leaves the line-of-sight yaw; a head that moves sideways by α of
/// line-of-sight angle changes the line-of-sight yaw by α and leaves the camera-axis yaw.
final class TurnYawTests: XCTestCase {
    let sway = 3.0

    func testAHeadTurnIsMeasuredInFull() {
        for psi in [-30.0, -8, 0, 8, 30] {
            XCTAssertEqual(TurnYaw.relative(cameraAxis: psi, lineOfSight: psi, swayDegrees: sway), psi, accuracy: 1e-12)
        }
    }

    func testACameraRotationMovesTheSignalByAtMostTheSwayAllowance() {
        for alpha in stride(from: -40.0, through: 40, by: 0.5) {
            let signal = TurnYaw.relative(cameraAxis: -alpha, lineOfSight: 0, swayDegrees: sway)
            XCTAssertLessThanOrEqual(abs(signal), sway + 1e-12, "camera rotated \(alpha)°")
            // Within the allowance the camera-axis yaw is kept as measured.
            if abs(alpha) <= sway { XCTAssertEqual(signal, -alpha, accuracy: 1e-12) }
        }
    }

    func testAHeadTurnSeenByARotatingCameraKeepsTheTurn() {
        // A 20° turn while the camera rotates 15° the other way: the camera-axis yaw reads 35°.
        let signal = TurnYaw.relative(cameraAxis: 20 + 15, lineOfSight: 20, swayDegrees: sway)
        XCTAssertEqual(signal, 20 + sway, accuracy: 1e-12)
    }

    func testASwayingHeadWithinTheAllowanceKeepsTheCameraAxisYaw() {
        // 6° of real turn while the head drifts 2.5° of line-of-sight angle sideways.
        XCTAssertEqual(TurnYaw.relative(cameraAxis: 6, lineOfSight: 8.5, swayDegrees: sway), 6, accuracy: 1e-12)
        XCTAssertEqual(TurnYaw.relative(cameraAxis: 6, lineOfSight: 3.5, swayDegrees: sway), 6, accuracy: 1e-12)
    }

    func testZeroAllowanceIsTheLineOfSightYawAndAnInfiniteOneTheCameraAxisYaw() {
        XCTAssertEqual(TurnYaw.relative(cameraAxis: 12, lineOfSight: 1, swayDegrees: 0), 1)
        XCTAssertEqual(TurnYaw.relative(cameraAxis: 12, lineOfSight: 1, swayDegrees: .infinity), 12)
        XCTAssertEqual(TurnYaw.relative(cameraAxis: 12, lineOfSight: 1, swayDegrees: -5), 1, "a negative allowance is none")
    }

    // MARK: The machine

    /// A dlib-style face (raw yaw, median-filtered by the machine) with both yaws.
    func tracked(camera: Double, sight: Double?) -> FaceObservation {
        FaceObservation(centerX: 0.5, centerY: 0.5, eyes: .aspectRatio(left: 0.3, right: 0.3),
                        yawDegrees: camera, lineOfSightYawDegrees: sight)
    }

    /// A session: 11 frontal frames (autoshot at 0.4 s), then `scan` at 25 fps, rotation unknown.
    func run(_ scan: [(camera: Double, sight: Double?)], base: (Double, Double?) = (4, -2)) throws -> Driver {
        var d = Driver()
        try d.frames(11, tracked(camera: base.0, sight: base.1))
        XCTAssertNotNil(d.machine.evidence.autoshot)
        for s in scan { try d.frame(tracked(camera: s.camera, sight: s.sight)) }
        return d
    }

    func testACameraPanWithUnknownRotationCreditsNoTurn() throws {
        // The camera pans 20° and back: the camera-axis yaw sweeps, the line-of-sight yaw stays
        // (both carry a per-person offset: 4° and -2°).
        let sweep = (0..<50).map { i in 20 * sin(Double(i) / 49 * .pi) }
        let d = try run(sweep.map { (camera: 4 - $0, sight: -2) })
        XCTAssertTrue(d.credited.isEmpty, "\(d.credited)")
        let largest = d.steps.compactMap(\.frame.relativeYawDegrees).map(abs).max() ?? .nan
        XCTAssertEqual(largest, 3, accuracy: 1e-9, "the sway allowance is all a pan can move the signal")
        XCTAssertEqual(d.machine.evidence.framesRotationUnknown, d.machine.evidence.framesCredited)
    }

    func testTheSameSweepWithoutALineOfSightYawIsATurn() throws {
        // Observations without a line-of-sight yaw (ARKit, older traces): the camera-axis yaw decides.
        let sweep = (0..<50).map { i in 20 * sin(Double(i) / 49 * .pi) }
        let d = try run(sweep.map { (camera: 4 - $0, sight: nil) }, base: (4, nil))
        XCTAssertEqual(d.credited.first?.action, .turnHead)
        XCTAssertEqual(d.credited.first?.direction, .right)
    }

    func testAHeadTurnIsCredited() throws {
        let d = try run(Array(repeating: (camera: 4 + 8.5, sight: -2 + 8.5), count: 5))
        let turn = try XCTUnwrap(d.credited.first)
        XCTAssertEqual(turn.direction, .left)
        XCTAssertEqual(turn.value, 8.5, accuracy: 1e-9)
    }

    func testAHeadTurnWhileTheCameraPansTheOtherWayIsCredited() throws {
        // 12° to the subject's right while the camera pans 10° the other way: the camera-axis
        // yaw reads only -2°; the signal is the line-of-sight yaw less the sway allowance.
        let d = try run(Array(repeating: (camera: 4 - 12 + 10, sight: -2 - 12), count: 5))
        let turn = try XCTUnwrap(d.credited.first)
        XCTAssertEqual(turn.direction, .right)
        XCTAssertEqual(turn.value, -12 + 3, accuracy: 1e-9)
    }
}
