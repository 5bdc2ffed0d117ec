import FaceTracking
import LivenessKit
/// The `liveness` command: a tree of subcommands.
package enum LivenessCLI {
    /// The engine's version, written into every report.
    package static var version: String { LivenessEngine.version }

    /// The top-level help; the list of subcommands comes from their specs.
    package static var help: String {
        let list = specs.keys.sorted().map { "  " + $0.padding(toLength: 24, withPad: " ", startingAt: 0) + specs[$0]!.summary }
        return """
            OVERVIEW: Liveness analysis of selfie videos: blink and head-turn challenge, autoshot and snapshot.

            USAGE: liveness <subcommand> [options]

            SUBCOMMANDS:
            \(list.joined(separator: "\n"))

            OPTIONS:
              --version               Show the version and how the C shim was built.
              --help                  Show help information.

            See 'liveness <subcommand> --help' for detailed help.
            """
    }

    /// Runs the command line (without the program name); returns the process exit code. When
    /// something could not be written to standard output the exit code is 2 and standard error
    /// says why, whatever the command decided.
    package static func run(_ arguments: [String], console: Console) -> Int32 {
        let code = dispatch(arguments, console: console)
        if let failure = console.standardOutputFailure {
            console.error("error: cannot write to standard output: \(failure)")
            return 2
        }
        return code
    }

    private static func dispatch(_ arguments: [String], console: Console) -> Int32 {
        guard let first = arguments.first else {
            console.error(help)
            return 2
        }
        let rest = Array(arguments.dropFirst())
        switch first {
        case "--help", "-h", "help":
            if let name = rest.first, let spec = specs[name] { console.out(spec.help) } else { console.out(help) }
            return 0
        case "--version":
            console.out("liveness \(version)")
            console.out(ShimBuild.current.summary)
            return 0
        case "analyze":
            return AnalyzeCommand.run(rest, console: console)
        case "regress":
            return RegressCommand.run(rest, console: console)
        case "replay":
            return ReplayCommand.run(rest, console: console)
        case "trace":
            return TraceCommand.run(rest, console: console)
        case "serve":
            return ServeCommand.run(rest, console: console)
        case "stream":
            return StreamCommand.run(rest, console: console)
        case "keygen":
            return KeygenCommand.run(rest, console: console)
        case "verify":
            return VerifyCommand.run(rest, console: console)
        default:
            console.error("error: unknown subcommand '\(first)'\n\n\(help)")
            return 2
        }
    }

    /// Every subcommand's interface, by name.
    package static var specs: [String: CommandSpec] { ["analyze": AnalyzeCommand.spec, "regress": RegressCommand.spec, "replay": ReplayCommand.spec, "trace": TraceCommand.spec,
                                          "serve": ServeCommand.spec, "stream": StreamCommand.spec,
                                          "keygen": KeygenCommand.spec, "verify": VerifyCommand.spec] }
}
