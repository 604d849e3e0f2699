import Foundation
import HTTPServer

/// At most `slots` callers run at once and at most `waiting` more wait (each for at most
/// `maximumWait`); anyone past that is refused with 503 and `Retry-After`. Expensive CPU work
/// (password hashing) runs through one, so that it can never take every request worker.
final class ConcurrencyLimit: @unchecked Sendable {
    // Safe to share: `running` and `queued` are only touched with `condition` held.
    private let condition = NSCondition()
    private var running = 0
    private var queued = 0
    let slots: Int
    let waiting: Int
    let maximumWait: TimeInterval

    init(slots: Int, waiting: Int, maximumWait: TimeInterval = 2) {
        self.slots = max(1, slots)
        self.waiting = max(0, waiting)
        self.maximumWait = maximumWait
    }

    /// Half the CPUs run, as many wait: the request workers (twice the CPUs) keep at least half.
    static func forCPUWork() -> ConcurrencyLimit {
        let half = max(1, ProcessInfo.processInfo.activeProcessorCount / 2)
        return ConcurrencyLimit(slots: half, waiting: half)
    }

    func run<Result>(_ work: () throws -> Result) throws -> Result {
        condition.lock()
        if running >= slots {
            guard queued < waiting else {
                condition.unlock()
                throw Self.busy
            }
            queued += 1
            let deadline = Date().addingTimeInterval(maximumWait)
            while running >= slots {
                if !condition.wait(until: deadline) && running >= slots {
                    queued -= 1
                    condition.unlock()
                    throw Self.busy
                }
            }
            queued -= 1
        }
        running += 1
        condition.unlock()
        defer {
            condition.lock()
            running -= 1
            condition.signal()
            condition.unlock()
        }
        return try work()
    }

    static let busy = HTTPError(.serviceUnavailable, message: "Too many password checks at once; try again in a moment.",
                                headers: HTTPHeaders([("Retry-After", "1")]))
}
