import Foundation

/// A fixed set of threads and a bounded queue for blocking work that must not run on the request
/// workers (upstream fetches). Work beyond the queue's bound is refused, never queued without limit.
final class BoundedExecutor: @unchecked Sendable {
    // Safe to share: `queue` and `stopped` are only touched with `condition` held.
    private let condition = NSCondition()
    private var queue: [@Sendable () -> Void] = []
    private var stopped = false
    let queueLimit: Int

    init(name: String, threads: Int, queueLimit: Int) {
        self.queueLimit = queueLimit
        for index in 0..<max(1, threads) {
            // Threads of our own rather than Dispatch's: the work blocks (URLSession waits), and
            // Dispatch's shared threads also run URLSession's callbacks.
            let thread = Thread { [weak self] in self?.runLoop() }
            thread.name = "\(name)-\(index)"
            thread.stackSize = 512 * 1024
            thread.start()
        }
    }

    /// Queues `work`; false when the queue is full (the caller decides what that means).
    @discardableResult
    func submit(_ work: @escaping @Sendable () -> Void) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard !stopped, queue.count < queueLimit else { return false }
        queue.append(work)
        condition.signal()
        return true
    }

    /// Lets the threads finish what is queued and end.
    func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        condition.unlock()
    }

    private func runLoop() {
        while true {
            condition.lock()
            while queue.isEmpty && !stopped { condition.wait() }
            if queue.isEmpty && stopped {
                condition.unlock()
                return
            }
            let work = queue.removeFirst()
            condition.unlock()
            work()
        }
    }

    deinit { stop() }
}

/// A result that several threads may wait for, each with its own deadline.
final class Pending<Value: Sendable>: @unchecked Sendable {
    // Safe to share: `value` and `done` are only touched with `condition` held.
    private let condition = NSCondition()
    private var value: Value?
    private var done = false

    func finish(_ result: Value?) {
        condition.lock()
        value = result
        done = true
        condition.broadcast()
        condition.unlock()
    }

    /// The result once finished, or nil at the deadline.
    func wait(until deadline: Date) -> Value? {
        condition.lock()
        defer { condition.unlock() }
        while !done {
            if !condition.wait(until: deadline) { break }
        }
        return value
    }
}
