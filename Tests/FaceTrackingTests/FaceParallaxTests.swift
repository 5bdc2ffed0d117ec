import FaceTracking
import Foundation
import XCTest

/// The parallax residual against exact geometry: the images of a plane in two views are related
/// by a homography (a flat photo, however it is swung or moved, must read ~0), while points at
/// different depths on a head that turns are not (a turning head must read well above 0).
/// The face is this test's own 68-point layout in millimetres with rough depths; the views are
/// pinhole projections of it. The oracle is the construction, not the code under test.
final class FaceParallaxTests: XCTestCase {
    typealias Vector = (x: Double, y: Double, z: Double)

    /// 68 landmarks in mm: x to the image's right, y down, z towards the camera (0 = the plane
    /// of the inner eye corners). `flat` puts every point on z = 0 (a printed photo).
    static func face(flat: Bool = false) -> [Vector] {
        var p: [Vector] = []
        for k in 0...16 {  // jaw, ear to ear through the chin
            let a = Double.pi * Double(k) / 16
            p.append((-68 * cos(a), -8 + 72 * sin(a), -72 + 76 * sin(a)))
        }
        for k in 0..<5 { p.append((-55 + 10.5 * Double(k), -36 - 5 * sin(Double.pi * Double(k) / 4), -14 + 4.5 * Double(k))) }
        for k in 0..<5 { p.append((13 + 10.5 * Double(k), -36 - 5 * sin(Double.pi * Double(k + 1) / 4), 4 - 4.5 * Double(k))) }
        for (k, z) in [8.0, 14, 21, 29].enumerated() { p.append((0, -24 + 10 * Double(k), z)) }
        for (k, z) in [7.0, 11, 13, 11, 7].enumerated() { p.append((-12 + 6 * Double(k), 12 + (k == 2 ? 2 : 0), z)) }
        for side in [-1.0, 1.0] {  // eyes: outer, upper, upper, inner, lower, lower (mirrored for the left)
            let shape: [(Double, Double, Double)] = [(45, -20, -8), (37, -24, -2), (27, -24, -1), (19, -20, 0), (27, -17, -1), (37, -17, -2)]
            let ordered = side < 0 ? shape : [shape[3], shape[2], shape[1], shape[0], shape[5], shape[4]]
            for (x, y, z) in ordered { p.append((side * x, y, z)) }
        }
        for k in 0..<12 {  // outer lip
            let a = 2 * Double.pi * Double(k) / 12
            p.append((-25 * cos(a), 36 - 9 * sin(a), 2 + 11 * sin(a / 2)))
        }
        for k in 0..<8 {  // inner lip
            let a = 2 * Double.pi * Double(k) / 8
            p.append((-15 * cos(a), 36 - 3 * sin(a), 4 + 7 * sin(a / 2)))
        }
        precondition(p.count == 68)
        return flat ? p.map { ($0.x, $0.y, 0) } : p
    }

    /// The points turned by `yaw`° about a vertical axis `pivot` mm behind the eye plane, tilted
    /// by `pitch`° about a horizontal axis, moved by `shift`, and seen by a pinhole camera
    /// (focal length 800 px, principal point (320, 240)) 450 mm in front of the eye plane.
    static func view(_ points: [Vector], yaw: Double = 0, pitch: Double = 0, roll: Double = 0,
                     pivot: Double = -85, shift: Vector = (0, 0, 0)) -> [Point] {
        let (a, b, c) = (yaw * .pi / 180, pitch * .pi / 180, roll * .pi / 180)
        return points.map { p in
            var x = p.x, y = p.y, z = p.z - pivot
            (x, z) = (x * cos(a) + z * sin(a), -x * sin(a) + z * cos(a))
            (y, z) = (y * cos(b) - z * sin(b), y * sin(b) + z * cos(b))
            (x, y) = (x * cos(c) - y * sin(c), x * sin(c) + y * cos(c))
            z += pivot
            let depth = 450 - (z + shift.z)
            return Point(x: 320 + 800 * (x + shift.x) / depth, y: 240 + 800 * (y + shift.y) / depth)
        }
    }

    /// A plane's image under the homography `h` (row-major 3×3).
    static func map(_ points: [Point], _ h: [Double]) -> [Point] {
        points.map { p in
            let w = h[6] * p.x + h[7] * p.y + h[8]
            return Point(x: (h[0] * p.x + h[1] * p.y + h[2]) / w, y: (h[3] * p.x + h[4] * p.y + h[5]) / w)
        }
    }

    /// A seeded generator (SplitMix64), so the homographies are the same on every run.
    struct SplitMix: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    func testAPlaneUnderArbitraryHomographiesHasNoResidual() throws {
        let reference = Self.view(Self.face())  // any 68 points: each target is a homography of them
        var rng = SplitMix(state: 14)
        for _ in 0..<20 {
            let h: [Double] = [Double.random(in: 0.6...1.4, using: &rng), Double.random(in: -0.3...0.3, using: &rng), Double.random(in: -80...80, using: &rng),
                               Double.random(in: -0.3...0.3, using: &rng), Double.random(in: 0.6...1.4, using: &rng), Double.random(in: -80...80, using: &rng),
                               Double.random(in: -4e-4...4e-4, using: &rng), Double.random(in: -4e-4...4e-4, using: &rng), 1]
            let r = try FaceParallax.residual(reference: reference, landmarks: Self.map(reference, h))
            XCTAssertLessThan(r, 1e-6, "homography \(h)")
        }
    }

    func testAFlatFaceSwungTiltedAndMovedInFrontOfTheCameraHasNoResidual() throws {
        let photo = Self.face(flat: true)
        let reference = Self.view(photo)
        for (yaw, pitch, roll, shift) in [(20.0, 0.0, 0.0, (0.0, 0.0, 0.0)), (-30, 0, 0, (0, 0, 0)), (0, 25, 0, (0, 0, 0)),
                                          (15, -10, 8, (40, -20, 60)), (0, 0, 0, (-60, 10, -80))] {
            let r = try FaceParallax.residual(reference: reference, landmarks: Self.view(photo, yaw: yaw, pitch: pitch, roll: roll, shift: shift))
            XCTAssertLessThan(r, 1e-6, "photo swung \(yaw)°, tilted \(pitch)°, rolled \(roll)°, moved \(shift)")
        }
    }

    func testATurningHeadHasAResidualThatGrowsWithTheTurn() throws {
        let head = Self.face()
        let reference = Self.view(head)
        var previous = 0.0
        for yaw in [2.5, 5, 7.5, 10, 15, 20, 30] {
            for sign in [-1.0, 1.0] {
                let r = try FaceParallax.residual(reference: reference, landmarks: Self.view(head, yaw: sign * yaw))
                XCTAssertGreaterThan(r, previous, "the residual grows with the turn (\(sign * yaw)°)")
                if yaw >= 7.5 { XCTAssertGreaterThan(r, 0.02, "a \(yaw)° turn of a head is far from flat") }
            }
            previous = try FaceParallax.residual(reference: reference, landmarks: Self.view(head, yaw: yaw))
                .magnitude.nextDown
        }
        // A nod shows depth too; a roll in the image plane is a similarity: no depth shown.
        XCTAssertGreaterThan(try FaceParallax.residual(reference: reference, landmarks: Self.view(head, pitch: 15)), 0.02)
        let rolled = try FaceParallax.residual(reference: Self.view(head, pivot: 0), landmarks: Self.view(head, roll: 20, pivot: 0))
        XCTAssertLessThan(rolled, 0.01)
    }

    func testAFewLandmarksThatJumpedDoNotMakeAPhotoLookDeep() throws {
        let photo = Self.face(flat: true)
        let reference = Self.view(photo)
        var target = Self.view(photo, yaw: 25, pitch: 5)
        for i in [8, 30, 36, 45, 48, 54, 60, 66] { target[i].x += 25; target[i].y -= 18 }  // 8 points, ~0.3 eye distance
        XCTAssertLessThan(try FaceParallax.residual(reference: reference, landmarks: target), 1e-6)
    }

    func testBadArgumentsAreErrors() {
        let p = Self.view(Self.face())
        XCTAssertThrowsError(try FaceParallax.residual(reference: Array(p.prefix(67)), landmarks: p))
        var nan = p
        nan[3].x = .nan
        XCTAssertThrowsError(try FaceParallax.residual(reference: p, landmarks: nan))
        XCTAssertThrowsError(try FaceParallax.pointErrors(reference: Array(p.prefix(5)), points: Array(p.prefix(5))))
        let collapsed = [Point](repeating: Point(x: 1, y: 1), count: 68)
        XCTAssertThrowsError(try FaceParallax.residual(reference: collapsed, landmarks: collapsed))
    }
}
