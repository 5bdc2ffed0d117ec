import Foundation
import LivenessCore
import LivenessKit

/// A JSON text message from a camera client (`liveness-stream/1`).
public enum ClientMessage: Sendable, Equatable {
    /// Opens the stream: optional policy overrides (within the documented bounds, never weaker
    /// than the session's policy), the frame size and rate the client will send, and whether it
    /// wants an `ack` after each processed frame (lock-step clients such as `liveness stream`).
    case start(Start)
    /// Gyroscope samples (rad/s about the device's x, y, z; microseconds on the frames' clock).
    case motion([MotionSample])
    /// The client gives up: the session ends `failed`/`cancelled`.
    case cancel

    /// The fields of `start`.
    public struct Start: Sendable, Equatable {
        /// Policy keys to override, as given (checked by the server against the session's policy);
        /// a choice key given by name (`"challengeMode": "prompted"`) holds the choice's index.
        public var policy: [String: Double]
        /// Announced frame size, pixels (0: not announced); larger frames are refused.
        public var width: Int
        public var height: Int
        /// Announced frames per second (0: not announced), informational.
        public var framesPerSecond: Double
        /// Send an `ack` after every processed frame.
        public var acknowledge: Bool

        public init(policy: [String: Double] = [:], width: Int = 0, height: Int = 0, framesPerSecond: Double = 0,
                    acknowledge: Bool = false) {
            self.policy = policy
            self.width = width
            self.height = height
            self.framesPerSecond = framesPerSecond
            self.acknowledge = acknowledge
        }
    }

    /// Largest text message accepted, bytes.
    public static let maxBytes = 64 * 1024
    /// Most motion samples in one message.
    public static let maxSamples = 1000

    /// Parses a text message.
    /// - Throws: `StreamError.invalidMessage` naming the field.
    public static func parse(_ bytes: [UInt8]) throws(StreamError) -> ClientMessage {
        guard bytes.count <= maxBytes else {
            throw StreamError(.invalidMessage, "a text message of \(bytes.count) bytes is larger than \(maxBytes)")
        }
        // The package's strict reader: a duplicate key is refused, not resolved one way here and
        // another in the client's tools.
        let parsed: JSONValue
        do { parsed = try JSONValue.parse(bytes) } catch {
            throw StreamError(.invalidMessage, "a text message must be one JSON object: \(error.message)")
        }
        guard let object = parsed.members else { throw StreamError(.invalidMessage, "a text message must be one JSON object") }
        guard case .string(let type)? = object["type"] else { throw StreamError(.invalidMessage, "the message has no \"type\"") }
        func number(_ key: String, in o: [String: JSONValue]) throws(StreamError) -> Double? {
            guard let value = o[key], !value.isNull else { return nil }
            guard let n = value.double, n.isFinite else {
                throw StreamError(.invalidMessage, "\"\(key)\" must be a finite number")
            }
            return n
        }
        switch type {
        case "start":
            var start = Start()
            if let policy = object["policy"], !policy.isNull {
                guard let keys = policy.members else { throw StreamError(.invalidMessage, "\"policy\" must be an object") }
                // Numbers, and the names of a choice key's values ("challengeMode": "prompted").
                start.policy = try ServicePolicy.overrides(keys)
            }
            func size(_ key: String) throws(StreamError) -> Int {
                guard let v = try number(key, in: object) else { return 0 }
                guard v >= 0, v <= 65536, v == v.rounded() else {
                    throw StreamError(.invalidMessage, "\"\(key)\" must be a whole number of pixels in 0…65536")
                }
                return Int(v)
            }
            start.width = try size("width")
            start.height = try size("height")
            if let fps = try number("fps", in: object) {
                guard fps >= 0, fps <= 1000 else { throw StreamError(.invalidMessage, "\"fps\" must be in 0…1000") }
                start.framesPerSecond = fps
            }
            if let ack = object["ack"], !ack.isNull {
                guard case .bool(let flag) = ack else {
                    throw StreamError(.invalidMessage, "\"ack\" must be true or false")
                }
                start.acknowledge = flag
            }
            return .start(start)
        case "motion":
            guard case .array(let list)? = object["samples"] else {
                throw StreamError(.invalidMessage, "a motion message needs \"samples\": [{\"t\": µs, \"x\": rad/s, \"y\": …, \"z\": …}]")
            }
            guard list.count <= maxSamples else {
                throw StreamError(.invalidMessage, "\(list.count) motion samples in one message, more than \(maxSamples)")
            }
            var samples: [MotionSample] = []
            for (i, item) in list.enumerated() {
                guard let s = item.members, let t = try number("t", in: s), let x = try number("x", in: s),
                      let y = try number("y", in: s), let z = try number("z", in: s)
                else { throw StreamError(.invalidMessage, "motion sample \(i) needs numbers t, x, y, z") }
                guard abs(t) < 9e18, abs(x) < 1e4, abs(y) < 1e4, abs(z) < 1e4 else {
                    throw StreamError(.invalidMessage, "motion sample \(i) is out of range (|t| < 9e18 µs, |x|, |y|, |z| < 1e4 rad/s)")
                }
                samples.append(MotionSample(timestampMicroseconds: Int64(t), x: x, y: y, z: z))
            }
            return .motion(samples)
        case "cancel":
            return .cancel
        default:
            throw StreamError(.invalidMessage, "unknown message type \"\(type)\" (start, motion, cancel)")
        }
    }
}
