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
// Swift's strings hold Unicode only: an argument that is not UTF-8 (a file name in Latin-1, say)
// would arrive with its bad bytes replaced, and the file would "not exist". Such a name is read
// through a UTF-8 alias (a symbolic link named with the bytes written \xNN; ForeignNames).
var arguments: [String] = []
for index in 1..<Int(CommandLine.argc) {
    guard let raw = CommandLine.unsafeArgv[index] else { continue }
    if let text = String(validatingCString: raw) {
        arguments.append(text)
        continue
    }
    let bytes = Array(UnsafeBufferPointer(start: UnsafeRawPointer(raw).assumingMemoryBound(to: UInt8.self), count: strlen(raw)))
    do {
        arguments.append(try ForeignNames.alias(forPath: bytes))
    } catch {
        console.error("error: argument \(index) is not valid UTF-8 (\(ForeignNames.escaped(bytes))): \(error.problem); "
                      + "a name that is not UTF-8 can name only an existing file or folder (an output to be created needs a UTF-8 name)")
        exit(2)
    }
}
// The commands that write files stop cleanly on SIGINT, SIGTERM and SIGHUP: no temporaries left,
// an interrupted input's report says so (the service handles its own signals).
if let command = arguments.first, ["analyze", "trace", "replay", "regress"].contains(command) {
    Interruption.install()
}
exit(LivenessCLI.run(arguments, console: console))
