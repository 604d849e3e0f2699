import Foundation

/// State behind a lock that threads can also wait on: `Mutex` with a condition variable, for
/// the few places where a thread must sleep until another changes something (a queue's worker
/// waiting for a job, a caller waiting for a free slot or a result).
///
/// The house's one lock the compiler cannot check: `Mutex` cannot wait, so an `NSCondition`
/// guards `state` here, and `@unchecked Sendable` says what the compiler cannot see, that
/// `state` is only ever touched with the condition locked (every access below is inside
/// `lock()`/`unlock()`). Types built on it are `Sendable` without opting out themselves.
/// Something not `Sendable` kept here (a pooled database connection) is handed over whole: the
/// thread that takes it out is from then on its only user, which is what `sending` would say
/// if the compiler could follow a value out of a lock.
public final class ConditionLock<State>: @unchecked Sendable {
    private let condition = NSCondition()
    private var state: State

    public init(_ state: State) { self.state = state }

    /// Whom a change wakes among the threads waiting.
    public enum Wake { case none, one, all }

    /// Runs `body` with the lock held, then wakes waiters as `wake` says.
    public func withLock<Result>(wake: Wake = .none, _ body: (inout State) throws -> Result) rethrows -> Result {
        condition.lock()
        defer {
            switch wake {
            case .none: break
            case .one: condition.signal()
            case .all: condition.broadcast()
            }
            condition.unlock()
        }
        return try body(&state)
    }

    /// Waits, with the lock released meanwhile, until `isReady` holds or `deadline` (if any)
    /// passes, then runs `body` with the lock held and whether it became ready; then wakes as
    /// `wake` says.
    public func wait<Result>(until deadline: Date? = nil, for isReady: (State) -> Bool, wake: Wake = .none,
                             then body: (inout State, _ ready: Bool) throws -> Result) rethrows -> Result {
        condition.lock()
        defer {
            switch wake {
            case .none: break
            case .one: condition.signal()
            case .all: condition.broadcast()
            }
            condition.unlock()
        }
        var ready = isReady(state)
        while !ready {
            if let deadline {
                // A timed-out wait still looks once more: the change may have come with the deadline.
                let signalled = condition.wait(until: deadline)
                ready = isReady(state)
                if !signalled { break }
            } else {
                condition.wait()
                ready = isReady(state)
            }
        }
        return try body(&state, ready)
    }
}
