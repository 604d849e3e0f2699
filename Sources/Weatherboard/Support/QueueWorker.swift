import Foundation
import HTTPServer
import Synchronization

/// A thread that works through a queue kept in the database (mail, pushes): it runs `work`
/// when woken, and every `pollInterval` for what other nodes queued and what waits for a retry,
/// until stopped. `work` asks `isStopped` between items, so that stopping waits for one item at
/// most.
final class QueueWorker: Sendable {
    private struct State {
        var woken = false
        var stopped = false
        var running = false
    }
    private let state = ConditionLock(State())
    private let pollInterval: TimeInterval
    /// Rounds of work finished: a test that asserts nothing happened waits for one past its change.
    let rounds = Atomic<Int>(0)

    init(pollInterval: TimeInterval) {
        self.pollInterval = pollInterval
    }

    var isStopped: Bool { state.withLock { $0.stopped } }

    func start(_ work: @escaping @Sendable () -> Void) {
        state.withLock { $0.running = true }
        Thread.detachNewThread { [self] in
            while true {
                work()
                rounds.add(1, ordering: .relaxed)
                let stop = state.wait(until: Date().addingTimeInterval(pollInterval), for: { $0.woken || $0.stopped }) { state, _ in
                    state.woken = false
                    return state.stopped
                }
                if stop { break }
            }
            state.withLock(wake: .all) { $0.running = false }
        }
    }

    /// Something was queued: work now rather than at the next poll.
    func wake() {
        state.withLock(wake: .all) { $0.woken = true }
    }

    /// Stops, waiting at most `longest` seconds for the item under way.
    func stop(waitingAtMost longest: TimeInterval) {
        state.withLock(wake: .all) { $0.stopped = true }
        state.wait(until: Date().addingTimeInterval(longest), for: { !$0.running }) { _, _ in }
    }
}

/// Work a feature runs beside requests, on a thread of its own.
protocol BackgroundWork: Sendable {
    func start()
    func stop()
    /// Rounds finished so far (0 for work that does not count them).
    var rounds: Int { get }
}

extension BackgroundWork {
    var rounds: Int { 0 }
}
