import LivenessKit
/// The `liveness` command: a tree of subcommands.
public enum LivenessCLI {
    /// The engine's version, written into every report.
    public static var version: String { LivenessEngine.version }

    public static let help = """
        OVERVIEW: Liveness analysis of selfie videos: blink and head-turn challenge, autoshot and snapshot.

        USAGE: liveness <subcommand> [options]

        SUBCOMMANDS:
          analyze                 Judge recorded selfie videos: verdict, stills and a report per input.
          regress                 Run the regression suite: generated cases and labelled real clips.
          replay                  Judge a face-tracking trace (CSV, JSONL or arkit-trace/1) without video.
          serve                   Serve the streaming API for camera clients and relying parties.
          stream                  Stream a recording to 'liveness serve' as a camera would.
          trace                   Write the face-tracking observations of a video or image, one record per frame.

        OPTIONS:
          --version               Show the version.
          --help                  Show help information.

        See 'liveness <subcommand> --help' for detailed help.
        """

    /// Runs the command line (without the program name); returns the process exit code. When
    /// something could not be written to standard output the exit code is 2 and standard error
    /// says why, whatever the command decided.
    public static func run(_ arguments: [String], console: Console) -> Int32 {
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
        default:
            console.error("error: unknown subcommand '\(first)'\n\n\(help)")
            return 2
        }
    }

    static var specs: [String: CommandSpec] { ["analyze": AnalyzeCommand.spec, "regress": RegressCommand.spec, "replay": ReplayCommand.spec, "trace": TraceCommand.spec,
                                          "serve": ServeCommand.spec, "stream": StreamCommand.spec] }
}
