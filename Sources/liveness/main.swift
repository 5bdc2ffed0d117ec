import LivenessKit

#if canImport(Glibc)
import Glibc
#endif

exit(LivenessCLI.run(Array(CommandLine.arguments.dropFirst()), console: Console()))
