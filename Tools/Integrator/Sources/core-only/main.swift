// The pure core alone: a LivenessMachine fed 30 s of frames without a face at 30 fps. By the spec
// the fallback autoshot comes at 2.8 s (settle, then 2.5 s of framing) and the scan's 20 s cap
// after it: `failed: noFace` at 22.8 s. Prints one line of JSON.
import Foundation
import LivenessCore

var machine = LivenessMachine(seed: 1)
var verdict: Verdict?
do {
    for index in 0..<900 where verdict == nil {
        let timestamp = Int64((Double(index) * 1e6 / 30).rounded())
        let step = try machine.observe(Observation(frameIndex: index, timestampMicroseconds: timestamp, face: nil))
        for case .verdict(let v) in step.events { verdict = v }
    }
} catch {
    FileHandle.standardError.write(Data("core-only: \(error)\n".utf8))
    exit(1)
}
guard let verdict else {
    FileHandle.standardError.write(Data("core-only: no verdict in 30 s\n".utf8))
    exit(1)
}
print("{\"reason\":\"\(verdict.reason?.rawValue ?? "")\",\"seconds\":\(Double(verdict.timestampMicroseconds) / 1e6),\"status\":\"\(verdict.status.rawValue)\"}")
