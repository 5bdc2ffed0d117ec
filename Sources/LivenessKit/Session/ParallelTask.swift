import Foundation

/// One job at a time on a thread of its own: `start` hands it over, `wait` joins it. Lets a
/// frame's device-rotation estimate run beside its face tracking (both only read the frame).
final class ParallelTask: @unchecked Sendable {
    private let condition = NSCondition()
    private var job: (() -> Void)?
    private var busy = false
    private var stopping = false

    init() {
        let thread = Thread { [self] in run() }
        thread.name = "liveness-rotation"
        thread.stackSize = 4 << 20
        thread.start()
    }

    /// Runs `job` on the task's thread; call `wait()` before starting another.
    func start(_ job: @escaping () -> Void) {
        condition.withLock {
            self.job = job
            busy = true
            condition.broadcast()
        }
    }

    /// Waits for the job started last.
    func wait() {
        condition.lock()
        while busy { condition.wait() }
        condition.unlock()
    }

    /// Ends the thread (after the job in hand).
    func stop() {
        condition.withLock {
            stopping = true
            condition.broadcast()
        }
    }

    private func run() {
        while true {
            condition.lock()
            while job == nil && !stopping { condition.wait() }
            if stopping && job == nil { condition.unlock(); return }
            let work = job!
            job = nil
            condition.unlock()
            work()
            condition.withLock {
                busy = false
                condition.broadcast()
            }
        }
    }
}
