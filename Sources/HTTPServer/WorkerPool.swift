import Foundation

/// A fixed set of threads that run handlers, so that a slow handler (a SQLite write, a template)
/// never holds up an event loop. The queue needs no bound of its own: each connection has at most
/// one request in it, and connections are bounded.
final class WorkerPool: @unchecked Sendable {
    // Safe to share: `jobs`, `head` and the stop flag are only touched with `condition` held.
    private let condition = NSCondition()
    private var jobs: [() -> Void] = []
    private var head = 0
    private var stopping = false
    private var threads: [Thread] = []
    private let exited = DispatchGroup()

    init(threads count: Int, name: String) {
        for i in 0..<max(1, count) {
            exited.enter()
            let thread = Thread { [unowned self] in
                self.work()
                self.exited.leave()
            }
            thread.name = "\(name)-\(i)"
            thread.stackSize = 1 << 20
            threads.append(thread)
            thread.start()
        }
    }

    /// Queues jobs with one lock and as many wake-ups as jobs.
    func submit(_ batch: [() -> Void]) {
        guard !batch.isEmpty else { return }
        condition.lock()
        jobs.append(contentsOf: batch)
        if batch.count == 1 { condition.signal() } else { condition.broadcast() }
        condition.unlock()
    }

    private func work() {
        while true {
            condition.lock()
            while head == jobs.count && !stopping { condition.wait() }
            if head == jobs.count && stopping {
                condition.unlock()
                return
            }
            let job = jobs[head]
            head += 1
            if head == jobs.count {
                jobs.removeAll(keepingCapacity: true)
                head = 0
            }
            condition.unlock()
            job()
        }
    }

    /// Lets queued jobs finish, then ends the threads.
    func stop() {
        condition.lock()
        stopping = true
        condition.broadcast()
        condition.unlock()
        exited.wait()
    }
}
