import Foundation
import HTTPServer

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

    init(pollInterval: TimeInterval) {
        self.pollInterval = pollInterval
    }

    var isStopped: Bool { state.withLock { $0.stopped } }

    func start(_ work: @escaping @Sendable () -> Void) {
        state.withLock { $0.running = true }
        Thread.detachNewThread { [self] in
            while true {
                work()
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
