import LivenessCommands
import LivenessKit

#if canImport(Glibc)
import Glibc
#endif

// A closed pipe on standard output is a write error the commands report, not a silent death.
signal(SIGPIPE, SIG_IGN)
let console = Console()
// A descriptor closed by the caller (`liveness trace clip.mp4 >&-`) would be reused by the next
// file opened, and results meant for standard output would land in it: put /dev/null there and
// treat output as failed instead.
for descriptor in [STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO] where fcntl(descriptor, F_GETFD) == -1 {
    let null = open("/dev/null", O_RDWR)
    if null >= 0 && null != descriptor {
        dup2(null, descriptor)
        close(null)
    }
    if descriptor == STDOUT_FILENO { console.markStandardOutputClosed() }
}
// The commands that write files stop cleanly on SIGINT, SIGTERM and SIGHUP: no temporaries left,
// an interrupted input's report says so (the service handles its own signals).
if let command = CommandLine.arguments.dropFirst().first, ["analyze", "trace", "replay", "regress"].contains(command) {
    Interruption.install()
}
exit(LivenessCLI.run(Array(CommandLine.arguments.dropFirst()), console: console))
