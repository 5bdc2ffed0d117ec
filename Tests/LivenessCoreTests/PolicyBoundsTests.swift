import Foundation
@testable import LivenessCore
import XCTest

final class PolicyBoundsTests: XCTestCase {
    /// Every key the policy encodes (its coding keys) has exactly one row in the bounds table, so
    /// a key added later without a row fails here.
    func testEveryCodingKeyHasABound() throws {
        let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: JSONEncoder().encode(LivenessPolicy())) as? [String: Any])
        let rows = LivenessPolicy.bounds.map(\.key)
        XCTAssertEqual(Set(json.keys), Set(rows), "keys without a bound: \(Set(json.keys).subtracting(rows)); rows without a key: \(Set(rows).subtracting(json.keys))")
        XCTAssertEqual(rows.count, Set(rows).count, "a key has two rows")
        for row in LivenessPolicy.bounds {
            // The row reads and writes its own key: setting it changes exactly that key in the JSON.
            var p = LivenessPolicy()
            let v = row.isInteger ? row.range.upperBound : (row.range.lowerBound + row.range.upperBound) / 2
            row.set(v, in: &p)
            let changed = try XCTUnwrap(try JSONSerialization.jsonObject(with: JSONEncoder().encode(p)) as? [String: Any])
            if let choices = row.choices {
                // A choice is written by name.
                XCTAssertEqual(changed[row.key] as? String, choices[Int(v)], row.key)
            } else {
                XCTAssertEqual((changed[row.key] as? NSNumber)?.doubleValue, v, row.key)
            }
            for (k, value) in json where k != row.key {
                XCTAssertEqual("\(changed[k]!)", "\(value)", "\(row.key) also changed \(k)")
            }
        }
    }

    func testTheDefaultsAreInBoundsAndNotWeaker() {
        XCTAssertTrue(LivenessPolicy().outOfBounds.isEmpty)
        XCTAssertEqual(LivenessPolicy().weakerThanSpec, [])
    }

    /// The spec's numbers (liveness-spec.md §2–§6) are the references of the spec's thresholds.
    func testTheSpecThresholdsAndTheirWeakerDirections() {
        let expected: [(String, Double, PolicyBound.Weaker)] = [
            ("framedFramesRequired", 3, .below), ("scanCapSeconds", 20, .above), ("blinkClosureThreshold", 0.22, .below),
            ("turnYawDegrees", 7.5, .below), ("turnHeldFrames", 2, .below), ("rotationLimitDegreesPerSecond", 10, .above),
            ("guideRadius", 0.3, .above),
        ]
        for (key, spec, direction) in expected {
            let row = LivenessPolicy.bound(forKey: key)!
            XCTAssertTrue(row.isSpecNumber, key)
            XCTAssertEqual(row.reference, spec, key)
            XCTAssertEqual(row.weaker, direction, key)
        }
        XCTAssertEqual(LivenessPolicy.bounds.filter(\.isSpecNumber).count, expected.count)
    }

    func testWeakerValuesAreNamedAndStricterOnesAreNot() {
        var p = LivenessPolicy()
        p.blinkClosureThreshold = 0.1
        p.turnYawDegrees = 9
        p.rotationLimitDegreesPerSecond = 25
        p.turnHeldFrames = 1
        p.scanCapSeconds = 10
        p.eyeMaxDipSeconds = 0
        XCTAssertEqual(p.weakerThanSpec.map(\.key), ["blinkClosureThreshold", "turnHeldFrames", "rotationLimitDegreesPerSecond", "eyeMaxDipSeconds"])
        XCTAssertEqual(p.weakerThanSpec[0].description, "blinkClosureThreshold 0.1 is below the spec's 0.22")
        XCTAssertEqual(p.weakerThanSpec[2].description, "rotationLimitDegreesPerSecond 25 is above the spec's 10")
        XCTAssertEqual(p.weakerThanSpec[3].description, "eyeMaxDipSeconds 0, which disables its rule")

        var strict = LivenessPolicy()
        strict.blinkClosureThreshold = 0.3
        strict.guideRadius = 0.2
        strict.eyeMaxDipSeconds = 0.3
        strict.yawMedianWindowSeconds = 0.3
        strict.settleSeconds = 5        // not a security threshold
        XCTAssertEqual(strict.weakerThanSpec, [])
        var conditioning = LivenessPolicy()
        conditioning.eyeClosureDeadZone = 0.01
        XCTAssertEqual(conditioning.weakerThanSpec.map(\.description), ["eyeClosureDeadZone 0.01 is below the measured default 0.06"])
    }

    /// The values issue 10 found accepted silently are all out of bounds, each named with its
    /// value and its bounds.
    func testOutOfBoundsValuesAreNamedWithValueAndBound() {
        let cases: [(String, Double)] = [
            ("turnHeldFrames", 0), ("turnHeldFrames", -5), ("guideRadius", 0), ("guideRadius", 1e9),
            ("eyeBaselinePercentile", 2), ("rotationLimitDegreesPerSecond", -1), ("scanCapSeconds", 0), ("scanCapSeconds", -5),
            ("scanCapSeconds", 1e13), ("settleSeconds", 1e300), ("yawMedianWindowSeconds", -1), ("blinkClosureThreshold", 0),
            ("turnYawDegrees", 0), ("framingTimeoutSeconds", .nan), ("eyeClosureScale", .infinity),
        ]
        for (key, value) in cases {
            var p = LivenessPolicy()
            let row = LivenessPolicy.bound(forKey: key)!
            row.set(value, in: &p)
            XCTAssertEqual(p.outOfBounds.map(\.key), [key], "\(key) = \(value)")
        }
        var p = LivenessPolicy()
        p.turnHeldFrames = 0
        XCTAssertEqual(p.outOfBounds.first?.description, "policy key 'turnHeldFrames' is 0; it must be a whole number of frames from 1 to 100")
        p = LivenessPolicy()
        p.scanCapSeconds = 1e13
        XCTAssertEqual(p.outOfBounds.first?.description, "policy key 'scanCapSeconds' is 10000000000000.0; it must be a number from 0.1 to 300 (s)")
    }

    // MARK: - The core is safe for any value a caller can construct

    /// A session of 40 s at 25 fps with both eye inputs, blinks and turns: exercises every
    /// policy-driven window and duration.
    private func runSession(_ policy: LivenessPolicy, landmarks: Bool, start: Int64 = 0) throws -> LivenessMachine {
        var m = LivenessMachine(policy: policy, seed: 3)
        for i in 0..<1000 {
            let blink = i % 50 == 20
            let yaw = (i / 25) % 4 == 2 ? 15.0 : 0
            let f = landmarks
                ? FaceObservation(centerX: 0.5, centerY: 0.5, eyes: .aspectRatio(left: blink ? 0.1 : 0.3, right: blink ? 0.1 : 0.3), yawDegrees: yaw)
                : FaceObservation(centerX: 0.5, centerY: 0.5, eyes: .closure(left: blink ? 0.9 : 0, right: blink ? 0.9 : 0),
                                  yawDegrees: yaw, yawIsFiltered: true)
            _ = try m.observe(Observation(frameIndex: i, timestampMicroseconds: start + Int64(i) * 40_000, face: i % 7 == 3 ? nil : f,
                                          deviceRotation: DeviceRotation(degreesPerSecond: Double(i % 13), source: .sensor),
                                          frameWidth: 640, frameHeight: 480))
        }
        _ = m.finish(.inputEnded)
        return m
    }

    /// Issue 10: `scanCapSeconds` (and every other time) ≥ 9.2e12 s trapped in `microseconds()`,
    /// `yawMedianWindowSeconds: -1` trapped in `OrderStatistics.quantile`. Every key at every
    /// extreme a caller can construct now runs a whole session to a verdict.
    func testEveryKeyAtEveryExtremeRunsASessionToAVerdict() throws {
        let extremes: [Double] = [-.infinity, -1e300, -1e13, -9.3e12, -1, 0, 1e-300, 0.5, 1e13, 9.3e12, 1e300, .infinity, .nan,
                                  9.3e18, -9.3e18]
        for row in LivenessPolicy.bounds {
            for value in extremes {
                var p = LivenessPolicy()
                row.set(value, in: &p)
                for landmarks in [false, true] {
                    let m = try runSession(p, landmarks: landmarks)
                    XCTAssertNotNil(m.verdict, "\(row.key) = \(value)")
                }
            }
        }
    }

    /// A cap beyond what `Int64` microseconds hold saturates: the cap is never reached.
    func testAHugeScanCapIsNeverReached() throws {
        var p = LivenessPolicy()
        p.scanCapSeconds = 1e13
        p.turnYawDegrees = 89        // no turn: the session can only time out or end
        let m = try runSession(p, landmarks: false)
        XCTAssertEqual(m.verdict?.reason, .inputEnded)
        p.scanCapSeconds = 20
        XCTAssertEqual(try runSession(p, landmarks: false).verdict?.reason, .timeout)
    }

    /// A negative median window behaves as the documented 0: the yaw passes through unchanged.
    func testANegativeYawWindowPassesTheYawThrough() {
        var filter = YawMedianFilter(windowSeconds: -1)
        let raw: [Double] = [0, 10, -3, 7, 7, 2]
        let out = raw.enumerated().map { filter.update(yawDegrees: $1, timestampMicroseconds: Int64($0) * 33_333) }
        XCTAssertEqual(out, raw)
        XCTAssertTrue(OrderStatistics.quantile([], 0.5).isNaN)
        XCTAssertEqual(OrderStatistics.quantile([1, 2, 3], .nan), 2)
        XCTAssertEqual(microseconds(1e13), maximumDurationMicroseconds)
        XCTAssertEqual(microseconds(-.infinity), -maximumDurationMicroseconds)
        XCTAssertEqual(microseconds(.nan), 0)
        XCTAssertEqual(microseconds(0.3), 300_000)
    }

    /// Timestamps anywhere within ±2⁶⁰ µs work with every extreme policy; beyond, the frame is
    /// rejected with its own error instead of overflowing time arithmetic.
    func testTimestampsAtTheLimitsNeverOverflow() throws {
        var p = LivenessPolicy()
        for row in LivenessPolicy.bounds where !row.isInteger { row.set(1e300, in: &p) }
        let limit = LivenessMachine.timestampLimitMicroseconds
        XCTAssertNotNil(try runSession(p, landmarks: true, start: -limit).verdict)
        XCTAssertNotNil(try runSession(p, landmarks: true, start: limit - 1000 * 40_000).verdict)
        var m = LivenessMachine(seed: 1)
        _ = try m.observe(Observation(frameIndex: 0, timestampMicroseconds: -limit, face: nil))
        XCTAssertThrowsError(try m.observe(Observation(frameIndex: 1, timestampMicroseconds: .max, face: nil))) { error in
            XCTAssertEqual(error as? LivenessError, .timestampOutOfRange(frameIndex: 1, timestampMicroseconds: .max))
        }
        var fresh = LivenessMachine(seed: 1)
        XCTAssertThrowsError(try fresh.observe(Observation(frameIndex: 0, timestampMicroseconds: .min, face: nil)))
        // The rejected frame changed nothing: the next good frame is accepted.
        XCTAssertNoThrow(try m.observe(Observation(frameIndex: 1, timestampMicroseconds: limit, face: nil)))
    }
}
