import FaceTracking
import Foundation
import LivenessCore
import LivenessClient
import LivenessKit
import LivenessService

/// `liveness stream`: pushes a recording to `liveness serve` as a camera would and prints what
/// comes back — the reference client for integrators.
package enum StreamCommand {
    package static let spec = CommandSpec(
        name: "stream",
        overview: "Stream a recording to 'liveness serve' as a camera client would, and print the events.",
        summary: "Stream a recording to 'liveness serve' as a camera would.",
        arguments: [("<url>", "The service, e.g. http://127.0.0.1:8080 (https:// for TLS)."),
                    ("<video>", "A recording (or image) whose frames are sent in order with their timestamps.")],
        options: [
            .flag("--realtime", "Send frames at the recording's pace (as a camera would); default: as fast as the server acknowledges them."),
            .option("--fps", "N", "Send at most N frames per second of the recording (the others are skipped)."),
            .option("--format", "raw|bgr|jpeg", "raw (default: the decoder's I420 planes, or BGR when the picture is not upright 8-bit 4:2:0; the server sees exactly the decoded frames), bgr or jpeg."),
            .option("--jpeg-quality", "Q", "With --format jpeg: the JPEG quality, 1-100 (default 90; a browser's toBlob('image/jpeg', 0.8) is about 80)."),
            .option("--token-file", "FILE", "The service's API token, to create the session and read its report."),
            .option("--challenge-mode", "passive|prompted", "Create the session in this mode (the relying party's choice; default: the service's, prompted unless its --policy says otherwise)."),
            .option("--ca-file", "FILE", "PEM certificates to trust for https:// (the service's own when self-signed)."),
            .flag("--insecure", "Accept any TLS certificate (testing only)."),
            .flag("--json", "Print the server's messages as they are (JSON lines) and the report."),
        ],
        positionalCount: 2...2)

    package static func run(_ arguments: [String], console: Console) -> Int32 {
        let begun = spec.begin(arguments, console: console)
        guard let parsed = begun.parsed else { return begun.exitCode }
        do {
            let address = try ServiceAddress(url: parsed.positionals[0])
            let source = try FrameSource(path: parsed.positionals[1])
            let jpeg: Bool, alwaysBGR: Bool
            switch parsed.value("--format") ?? "raw" {
            case "raw": (jpeg, alwaysBGR) = (false, false)
            case "bgr": (jpeg, alwaysBGR) = (false, true)
            case "jpeg": (jpeg, alwaysBGR) = (true, false)
            case let other: throw UsageError("--format must be raw, bgr or jpeg, not '\(other)'")
            }
            let quality = try parsed.integer("--jpeg-quality", in: 1...100)
            if quality != nil && !jpeg { throw UsageError("--jpeg-quality applies to --format jpeg") }
            let maxRate = try parsed.integer("--fps", in: 1...1000).map(Double.init)
            let tls = ClientTLS(caFile: parsed.value("--ca-file"), insecure: parsed.has("--insecure"))
            let bearer = try parsed.value("--token-file").map { String(decoding: try ServiceConfiguration.readToken(path: $0), as: UTF8.self) }
            var mode: ChallengeMode?
            if let name = parsed.value("--challenge-mode") {
                guard let chosen = ChallengeMode(rawValue: name) else {
                    throw UsageError("--challenge-mode must be passive or prompted, not '\(name)'")
                }
                mode = chosen
            }
            let realtime = parsed.has("--realtime")
            let json = parsed.has("--json")

            var streamer = RecordingStreamer(address: address)
            streamer.tls = tls
            streamer.bearer = bearer
            streamer.pacing = realtime ? .realTime : .lockStep
            streamer.jpeg = jpeg
            if let quality { streamer.jpegQuality = quality }
            streamer.alwaysBGR = alwaysBGR
            streamer.maxFramesPerSecond = maxRate
            streamer.challengeMode = mode
            let outcome = try streamer.run(source) { text in
                if json {
                    console.out(text)
                } else if let message = try? ServerMessage(json: text), let line = describe(message) {
                    console.out(line)
                }
            }
            if let body = outcome.report {
                if json {
                    console.out(String(decoding: body, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
                } else if let report = try? JSONDecoder().decode(LivenessReport.self, from: Data(body)) {
                    console.out("\(Console.printable(parsed.positionals[1])): \(report.summary) (session \(outcome.sessionID))")
                }
            }
            guard let verdict = outcome.verdict else {
                console.error("error: the stream ended without a verdict")
                return 2
            }
            return verdict.status == .passed ? 0 : 1
        } catch let error as UsageError {
            return console.usageError(error, spec: spec)
        } catch {
            console.error("error: \(Console.printable("\(error)"))")
            return 2
        }
    }

    /// One line per server message, for people.
    static func describe(_ message: ServerMessage) -> String? {
        let at = message.seq >= 0 ? "frame \(message.seq)" : "start"
        switch message {
        case let .session(m): return "session \(m.id) (\(m.protocol))"
        case let .hud(m):
            var text = "\(at): \(m.text)"
            if let done = m.done, let total = m.total { text += " (\(done) of \(total))" }
            return text
        case let .prompt(m):
            return "\(at): prompt \(m.index + 1) of \(m.total) shown: \(m.step.rawValue)\(String(format: " at %.2f s", m.seconds))"
        case let .promptAnswered(m): return "\(at): prompt \(m.index + 1) of \(m.total): \(m.outcome)"
        case let .autoshot(m): return "\(at): autoshot (\(m.framed ? "framed" : "fallback"))"
        case let .action(m): return "\(at): action done (\(m.done) of \(m.total))"
        case .snapshot: return "\(at): snapshot"
        case let .verdict(m): return "\(at): verdict \(m.status.rawValue)\(m.reason.map { " (\($0))" } ?? "")"
        case let .flow(m): return "\(at): flow \(m.state.rawValue) (\(m.dropped) dropped)"
        case let .error(m): return "\(at): error \(m.code.rawValue): \(m.message)"
        case .ack: return nil
        }
    }
}
