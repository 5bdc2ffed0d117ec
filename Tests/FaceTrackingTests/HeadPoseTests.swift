import FaceTracking
import Foundation
import XCTest

/// The line-of-sight yaw against an exact synthetic projection: a 3D face with a known pose,
/// seen through a pinhole camera (focal length = the frame's longer side, principal point at
/// the centre: the camera the engine assumes) at several places in the frame.
///
/// The face is this test's own (anthropometric values that differ from the engine's generic
/// face by a few millimetres, as a real person's do), placed so that its yaw against the line
/// of sight from its turning point to the camera is `ψ`: the oracle is the construction, not the
/// engine's formula.
final class HeadPoseTests: XCTestCase {
    // MARK: A small 3D toolkit (row-major 3×3 matrices)

    typealias Vector = (x: Double, y: Double, z: Double)
    typealias Matrix = [[Double]]

    static func rotationY(_ degrees: Double) -> Matrix {
        let a = degrees * .pi / 180, c = cos(a), s = sin(a)
        return [[c, 0, s], [0, 1, 0], [-s, 0, c]]
    }

    static func rotationX(_ degrees: Double) -> Matrix {
        let a = degrees * .pi / 180, c = cos(a), s = sin(a)
        return [[1, 0, 0], [0, c, -s], [0, s, c]]
    }

    static func rotationZ(_ degrees: Double) -> Matrix {
        let a = degrees * .pi / 180, c = cos(a), s = sin(a)
        return [[c, -s, 0], [s, c, 0], [0, 0, 1]]
    }

    static func multiply(_ a: Matrix, _ b: Matrix) -> Matrix {
        (0..<3).map { i in (0..<3).map { j in (0..<3).map { a[i][$0] * b[$0][j] }.reduce(0, +) } }
    }

    static func apply(_ m: Matrix, _ v: Vector) -> Vector {
        (m[0][0] * v.x + m[0][1] * v.y + m[0][2] * v.z,
         m[1][0] * v.x + m[1][1] * v.y + m[1][2] * v.z,
         m[2][0] * v.x + m[2][1] * v.y + m[2][2] * v.z)
    }

    // MARK: The scene

    /// Face points in millimetres, face frame: X towards the subject's left (the image's right
    /// when the face looks at the camera), Y down, Z away from the camera; origin at the nose tip.
    static let face: [Int: Vector] = [
        27: (0, -35, 20), 30: (0, 0, 0), 31: (-14, 12, 17), 33: (0, 16, 12), 35: (14, 12, 17),
        36: (-46, -28, 36), 39: (-18, -27, 26), 42: (18, -27, 26), 45: (46, -28, 36),
    ]
    /// The head turns about a vertical axis through this point (100 mm behind the nose tip).
    static let pivot: Vector = (0, 0, 100)
    static let width = 640, height = 480
    static var focal: Double { Double(max(width, height)) }

    /// Projects a camera-frame point (mm) to pixels.
    static func project(_ p: Vector) -> Point {
        Point(x: Double(width) / 2 + focal * p.x / p.z, y: Double(height) / 2 + focal * p.y / p.z)
    }

    /// The face with its turning point at `pivotAt` (camera frame, mm), turned `psi` degrees to
    /// its own left from looking straight at the camera centre; then the camera rolled by
    /// `cameraRoll` degrees about its optical axis. Returns camera-frame points of the face.
    static func scene(pivotAt p: Vector, psi: Double, cameraRoll: Double = 0) -> [Int: Vector] {
        // Point the face's +Z (away from the camera) along the ray to the pivot: pan, then tilt.
        let pan = atan2(p.x, p.z) * 180 / .pi
        let tilt = -atan2(p.y, hypot(p.x, p.z)) * 180 / .pi
        // Turning to one's own left swings the nose towards +X: a rotation of -psi about Y.
        let r = multiply(multiply(rotationY(pan), rotationX(tilt)), rotationY(-psi))
        let roll = rotationZ(cameraRoll)
        return face.mapValues { f in
            let local = apply(r, (f.x - pivot.x, f.y - pivot.y, f.z - pivot.z))
            return apply(roll, (p.x + local.x, p.y + local.y, p.z + local.z))
        }
    }

    /// 68 landmarks: the rigid points projected; the others (unused by the pose) at the nose tip.
    static func landmarks(_ points: [Int: Vector]) -> [Point] {
        (0..<68).map { project(points[$0] ?? points[30]!) }
    }

    static func pose(pivotAt p: Vector, psi: Double, cameraRoll: Double = 0) throws -> HeadPose {
        try HeadPose(landmarks: landmarks(scene(pivotAt: p, psi: psi, cameraRoll: cameraRoll)), width: width, height: height)
    }

    /// The pivot `distance` mm away along the ray `horizontal`°/`vertical`° off the optical axis.
    static func place(horizontal: Double, vertical: Double, distance: Double = 600) -> Vector {
        (distance * tan(horizontal * .pi / 180), distance * tan(vertical * .pi / 180), distance)
    }

    // MARK: Tests

    func testTheConstructionTurnsTheNoseTowardsTheImagesRightForTheSubjectsLeft() {
        let points = Self.scene(pivotAt: Self.place(horizontal: 0, vertical: 0), psi: 15)
        XCTAssertGreaterThan(Self.project(points[30]!).x, Self.project(points[27]!).x + 5)
        let frontal = Self.scene(pivotAt: Self.place(horizontal: 0, vertical: 0), psi: 0)
        XCTAssertEqual(Self.project(frontal[30]!).x, Double(Self.width) / 2, accuracy: 1e-9)
    }

    func testLineOfSightYawDoesNotDependOnWhereTheFaceIsInTheFrame() throws {
        for psi in [-20.0, -8, 0, 8, 20] {
            let centre = try Self.pose(pivotAt: Self.place(horizontal: 0, vertical: 0), psi: psi)
            for h in [-20.0, -10, 0, 10, 20] {
                for v in [-10.0, 0, 10] {
                    let p = try Self.pose(pivotAt: Self.place(horizontal: h, vertical: v), psi: psi)
                    XCTAssertEqual(p.lineOfSightYawDegrees, centre.lineOfSightYawDegrees, accuracy: 0.3,
                                   "ψ \(psi)° with the face \(h)° across and \(v)° down")
                    if v == 0 {
                        // The camera-axis yaw reads the angle of the line of sight on top.
                        XCTAssertEqual(p.yawDegrees - centre.yawDegrees, -h, accuracy: 0.5, "ψ \(psi)° at \(h)°")
                    }
                }
            }
        }
    }

    func testLineOfSightYawMeasuresTheTurn() throws {
        let centre = Self.place(horizontal: 0, vertical: 0)
        let frontal = try Self.pose(pivotAt: centre, psi: 0).lineOfSightYawDegrees
        for psi in [-30.0, -20, -8, 8, 20, 30] {
            for h in [-15.0, 0, 15] {
                let turned = try Self.pose(pivotAt: Self.place(horizontal: h, vertical: 5), psi: psi).lineOfSightYawDegrees
                // The engine's generic face is not this face: a few percent of scale error.
                XCTAssertEqual(turned - frontal, psi, accuracy: 0.1 * abs(psi), "ψ \(psi)° at \(h)°")
            }
        }
    }

    func testCameraRollDoesNotChangeTheLineOfSightYaw() throws {
        let p = Self.place(horizontal: 12, vertical: -6)
        for psi in [0.0, 15] {
            let level = try Self.pose(pivotAt: p, psi: psi)
            for roll in [-20.0, 20] {
                let rolled = try Self.pose(pivotAt: p, psi: psi, cameraRoll: roll)
                XCTAssertEqual(rolled.lineOfSightYawDegrees, level.lineOfSightYawDegrees, accuracy: 0.3, "ψ \(psi)°, roll \(roll)°")
            }
        }
    }

    func testBadLandmarksAreArgumentErrors() {
        var points = Self.landmarks(Self.scene(pivotAt: Self.place(horizontal: 0, vertical: 0), psi: 0))
        XCTAssertThrowsError(try HeadPose(landmarks: Array(points.prefix(67)), width: 640, height: 480)) {
            XCTAssertEqual(($0 as? FaceTrackingError)?.kind, .argument)
        }
        XCTAssertThrowsError(try HeadPose(landmarks: points, width: 0, height: 480)) {
            XCTAssertEqual(($0 as? FaceTrackingError)?.kind, .argument)
        }
        points[36].x = .nan
        XCTAssertThrowsError(try HeadPose(landmarks: points, width: 640, height: 480)) {
            XCTAssertEqual(($0 as? FaceTrackingError)?.kind, .argument)
        }
    }
}
