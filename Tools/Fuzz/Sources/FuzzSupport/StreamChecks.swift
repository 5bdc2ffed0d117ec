import FaceTracking
import Foundation
import LivenessCore
import LivenessKit
import LivenessService

extension FuzzChecks {
    /// The landmark model, loaded once per fuzzing process.
    nonisolated(unsafe) static var model: LandmarkModel? = try? LandmarkModel.load()

    /// The messages of `liveness-stream/1` as a camera client sends them. The first byte says
    /// what the rest is: even, a text message (`ClientMessage.parse`); odd, a binary frame message
    /// (the 32-byte `LVF1` header, then the frame's bytes: JPEG, PNG or raw pixels), parsed and
    /// pushed into a fresh `StreamSession` twice (the second push repeats the capture time and must
    /// be refused as out of order).
    ///
    /// Properties beyond not crashing: errors say what is wrong in a short message; an accepted
    /// `start` has finite, non-negative sizes and rate and finite policy values; accepted motion
    /// samples are finite and at most `ClientMessage.maxSamples`; an accepted frame header has a
    /// format, a quarter-turn rotation and non-negative sizes; a frame that is pushed gives a
    /// frame count of one, a repeated capture time an error.
    public static func stream(_ bytes: [UInt8]) {
        guard let mode = bytes.first else { return }
        let rest = Array(bytes.dropFirst())
        if mode % 2 == 0 {
            clientMessage(rest)
        } else {
            frameMessage(rest)
        }
    }

    static func clientMessage(_ bytes: [UInt8]) {
        let message: ClientMessage
        do {
            message = try ClientMessage.parse(bytes)
        } catch {
            checkMessage(describe(error), "stream")
            return
        }
        switch message {
        case let .start(start):
            guard start.width >= 0, start.height >= 0, start.framesPerSecond.isFinite, start.framesPerSecond >= 0,
                  start.policy.values.allSatisfy(\.isFinite) else {
                fatalError("stream: an accepted start has impossible values: \(start)")
            }
        case let .motion(samples):
            guard samples.count <= ClientMessage.maxSamples,
                  samples.allSatisfy({ $0.x.isFinite && $0.y.isFinite && $0.z.isFinite }) else {
                fatalError("stream: accepted motion with \(samples.count) samples, some not finite")
            }
        case .cancel:
            break
        }
    }

    static func describe(_ error: any Error) -> String {
        (error as? StreamError)?.message ?? "\(error)"
    }

    static func frameMessage(_ bytes: [UInt8]) {
        let header: FrameHeader
        do {
            header = try bytes.withUnsafeBytes { raw throws(StreamError) in try FrameHeader.parse(raw) }
        } catch {
            checkMessage(describe(error), "stream")
            return
        }
        guard header.width >= 0, header.height >= 0, header.bytesPerRow >= 0, [0, 90, 180, 270].contains(header.rotationDegrees) else {
            fatalError("stream: an accepted header has impossible values: \(header)")
        }
        guard let model else { fatalError("stream: the landmark model cannot be loaded (libdlib-data)") }
        let payload = Array(bytes[min(bytes.count, FrameHeader.size)...])
        let session: StreamSession
        do {
            session = try StreamSession(model: model)
        } catch {
            fatalError("stream: a session cannot be created: \(describe(error))")
        }
        payload.withUnsafeBytes { raw in
            let content: StreamFrame.Content
            if let format = header.format.pixelFormat {
                content = .pixels(raw, format: format, width: header.width, height: header.height, bytesPerRow: header.effectiveBytesPerRow)
            } else {
                content = .encoded(raw)
            }
            let frame = StreamFrame(content: content, timestampMicroseconds: header.captureMicroseconds,
                                    rotationDegrees: header.rotationDegrees)
            do {
                _ = try session.push(frame)
            } catch {
                checkMessage(describe(error), "stream")
                return
            }
            do {
                _ = try session.push(frame)
                if session.verdict == nil { fatalError("stream: a repeated capture time was accepted") }
            } catch {
                checkMessage(describe(error), "stream")
            }
        }
    }
}
