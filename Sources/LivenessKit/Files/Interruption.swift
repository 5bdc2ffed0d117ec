import Dispatch
import Foundation
import LivenessEvidence

#if canImport(Glibc)
import Glibc
#endif

/// SIGINT, SIGTERM and SIGHUP during a run. The signal is taken on a dispatch queue (not in a
/// signal handler), which asks the work to stop: an analysis ends at its next frame with a
/// `cancelled` report that a rerun redoes, a batch starts no further input, and temporaries are
/// removed. If the work has not stopped `grace` seconds later, the temporaries are removed and
/// the process ends with the signal's status (128 + the signal's number) all the same.
public enum Interruption {
    nonisolated(unsafe) private static var sources: [DispatchSourceSignal] = []
    private static let lock = NSLock()
    nonisolated(unsafe) private static var received: Int32 = 0

    /// The signal that asked the run to stop, or nil.
    public static var signal: Int32? {
        lock.lock()
        defer { lock.unlock() }
        return received == 0 ? nil : received
    }

    /// The signal's name, for messages ("SIGTERM").
    public static func name(_ signal: Int32) -> String {
        switch signal {
        case SIGINT: return "SIGINT"
        case SIGTERM: return "SIGTERM"
        case SIGHUP: return "SIGHUP"
        default: return "signal \(signal)"
        }
    }

    /// The error an interrupted piece of work throws.
    public static func error(path: String) -> InputError {
        InputError(path: path, problem: "interrupted by \(name(signal ?? SIGTERM)) before the end; rerun to analyse it")
    }

    /// Takes the three signals for the rest of the process (call once, from the command line's entry).
    public static func install(grace: Double = 5) {
        for number in [SIGINT, SIGTERM, SIGHUP] {
            Glibc.signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                lock.lock()
                let first = received == 0
                if first { received = number }
                lock.unlock()
                guard first else {
                    // A second signal: stop now.
                    TemporaryFiles.removeAll()
                    ForeignNames.removeAliases()
                    _exit(128 + number)
                }
                DispatchQueue.global().asyncAfter(deadline: .now() + grace) {
                    TemporaryFiles.removeAll()
                    ForeignNames.removeAliases()
                    _exit(128 + number)
                }
            }
            source.resume()
            sources.append(source)
        }
    }

    /// For tests: forget a signal received.
    static func reset() {
        lock.lock()
        received = 0
        lock.unlock()
    }
}
