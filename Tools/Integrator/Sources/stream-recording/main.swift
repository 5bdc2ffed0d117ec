// Pushes a folder of JPEG frames (as a camera service receives them) through the engine's
// StreamSession, one at a time at the given frame rate, and prints one line of JSON: the frames
// accepted, the events, the verdict, and how the shim was built.
//
//     stream-recording FRAMES_DIR FPS
import FaceTracking
import Foundation
import LivenessCore
import LivenessKit

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("stream-recording: \(message)\n".utf8))
    exit(1)
}

let arguments = CommandLine.arguments
guard arguments.count == 3, let fps = Double(arguments[2]), fps > 0 else { fail("usage: stream-recording FRAMES_DIR FPS") }
let folder = URL(fileURLWithPath: arguments[1])
let names: [String]
do {
    names = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".jpg") }.sorted()
} catch { fail("cannot list \(folder.path): \(error)") }
guard !names.isEmpty else { fail("no .jpg frames in \(folder.path)") }

do {
    let model = try LandmarkModel.load()
    let session = try StreamSession(model: model)
    var events: [String] = []
    for (index, name) in names.enumerated() {
        let bytes = try Data(contentsOf: folder.appendingPathComponent(name))
        let timestamp = Int64((Double(index) * 1e6 / fps).rounded())
        let update = try bytes.withUnsafeBytes { buffer in
            try session.push(StreamFrame(content: .encoded(buffer), timestampMicroseconds: timestamp))
        }
        for event in update.events {
            switch event {
            case .autoshot: events.append("autoshot")
            case .actionCredited: events.append("actionCredited")
            case .snapshot: events.append("snapshot")
            case .verdict: events.append("verdict")
            default: break
            }
        }
    }
    if session.verdict == nil { _ = session.finish(.inputEnded) }
    guard let verdict = session.verdict else { fail("no verdict after finish") }
    let line: [String: Any] = [
        "frames": names.count,
        "accepted": session.framesAccepted,
        "events": events,
        "status": verdict.status.rawValue,
        "reason": verdict.reason?.rawValue ?? NSNull(),
        "seconds": Double(verdict.timestampMicroseconds) / 1e6,
        "shim": ShimBuild.current.summary,
    ]
    let json = try JSONSerialization.data(withJSONObject: line, options: [.sortedKeys])
    print(String(decoding: json, as: UTF8.self))
} catch {
    fail("\(error)")
}
