import Foundation
import Synchronization

/// A fixed set of threads of its own running queued jobs in order: the server runs handlers on
/// one, so that a slow handler (a SQLite write, a template) never holds up an event loop, and
/// an application may run blocking work that must not take the request workers (upstream
/// fetches) on another. Threads of their own rather than Dispatch's: the jobs block, and a
/// blocked Dispatch thread is one the rest of the process (URLSession's callbacks) waits for.
///
/// Without a `queueLimit` the queue is unbounded, for a caller that bounds it itself (the
/// server: each connection has at most one request in it, and connections are bounded); with
/// one, a job past it is refused, never queued without limit.
public final class ThreadPool: Sendable {
    public typealias Job = @Sendable () -> Void

    private struct Queue: Sendable {
        var jobs: [Job] = []
        /// The next job to run: taking one moves this, and the array is emptied, keeping its
        /// room, once every job in it was taken (no shifting per job).
        var head = 0
        var stopping = false
        var waiting: Int { jobs.count - head }
    }

    private let queue = ConditionLock(Queue())
    private let exited = DispatchGroup()
    public let queueLimit: Int?
    public let threadCount: Int
    private final class Counters: Sendable {
        /// Jobs running now.
        let running = Atomic<Int>(0)
        /// Jobs that were queued while every thread was busy, since the start (they waited).
        let queuedBehindBusy = Atomic<Int>(0)
        /// When a job last finished (or the pool started), in `monotonicMilliseconds`.
        let lastFinished = Atomic<UInt64>(monotonicMilliseconds())
    }
    private let counters = Counters()

    /// How saturated the pool is: its threads, those running a job, jobs waiting, and how many
    /// jobs so far found every thread busy.
    public var status: (threads: Int, busy: Int, queued: Int, waitedTotal: Int) {
        (threadCount, counters.running.load(ordering: .relaxed), queue.withLock { $0.waiting }, counters.queuedBehindBusy.load(ordering: .relaxed))
    }

    /// Whether every thread is busy and none has finished a job for `milliseconds`: the jobs
    /// wait on something that stopped answering. Two atomic loads, no lock.
    public func isStalled(after milliseconds: UInt64) -> Bool {
        counters.running.load(ordering: .relaxed) >= threadCount
            && monotonicMilliseconds() &- counters.lastFinished.load(ordering: .relaxed) >= milliseconds
    }

    public init(name: String, threads count: Int, stackSize: Int = 1 << 20, queueLimit: Int? = nil) {
        self.queueLimit = queueLimit
        threadCount = max(1, count)
        for index in 0..<max(1, count) {
            exited.enter()
            // The threads hold the queue, not the pool: a pool nobody holds stops (deinit).
            let thread = Thread { [queue, exited, counters] in
                while let job = Self.next(from: queue) {
                    counters.running.add(1, ordering: .relaxed)
                    job()
                    counters.lastFinished.store(monotonicMilliseconds(), ordering: .relaxed)
                    counters.running.subtract(1, ordering: .relaxed)
                }
                exited.leave()
            }
            thread.name = "\(name)-\(index)"
            thread.stackSize = stackSize
            thread.start()
        }
    }

    /// Queues `job`; false when the pool is stopping or its queue is full (the caller decides
    /// what that means).
    @discardableResult
    public func submit(_ job: @escaping Job) -> Bool {
        queue.withLock(wake: .one) { queue in
            guard !queue.stopping, queue.waiting < queueLimit ?? .max else { return false }
            if queue.waiting + counters.running.load(ordering: .relaxed) >= threadCount { counters.queuedBehindBusy.add(1, ordering: .relaxed) }
            queue.jobs.append(job)
            return true
        }
    }

    /// Queues several jobs with one lock and as many wake-ups as jobs; on a bounded pool, those
    /// past the limit are dropped. How many were queued.
    @discardableResult
    public func submit(_ batch: [Job]) -> Int {
        guard !batch.isEmpty else { return 0 }
        return queue.withLock(wake: batch.count == 1 ? .one : .all) { queue in
            guard !queue.stopping else { return 0 }
            let room = min(batch.count, (queueLimit ?? .max) - queue.waiting)
            guard room > 0 else { return 0 }
            let idle = max(0, threadCount - queue.waiting - counters.running.load(ordering: .relaxed))
            if room > idle { counters.queuedBehindBusy.add(room - idle, ordering: .relaxed) }
            queue.jobs.append(contentsOf: batch.prefix(room))
            return room
        }
    }

    /// The next job, waiting for one; nil once stopping with nothing left.
    private static func next(from queue: ConditionLock<Queue>) -> Job? {
        queue.wait(for: { $0.waiting > 0 || $0.stopping }) { queue, _ in
            guard queue.waiting > 0 else { return nil }
            let job = queue.jobs[queue.head]
            queue.head += 1
            if queue.waiting == 0 {
                queue.jobs.removeAll(keepingCapacity: true)
                queue.head = 0
            }
            return job
        }
    }

    /// Lets queued jobs finish and the threads end; refuses new jobs from now.
    public func stop() {
        queue.withLock(wake: .all) { $0.stopping = true }
    }

    /// `stop()`, then waits until every thread has ended.
    public func stopAndWait() {
        stop()
        exited.wait()
    }

    deinit { stop() }
}
