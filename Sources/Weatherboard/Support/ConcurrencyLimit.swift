import Foundation
import HTTPServer

/// At most `slots` callers run at once and at most `waiting` more wait (each for at most
/// `maximumWait`); anyone past that is refused with 503 and `Retry-After`. Expensive CPU work
/// (password hashing) runs through one, so that it can never take every request worker.
///
/// Fair between clients (each a `ClientKey`): one client holds at most half the waiting places,
/// and when a slot frees, the waiter whose client has been served least since the queue last
/// emptied goes first (the oldest among equals). A person signing in from one address is then
/// served in turn with an attacker's many addresses, however often the attacker asks.
final class ConcurrencyLimit: @unchecked Sendable {
    // Safe to share: everything mutable is only touched with `condition` held.
    private let condition = NSCondition()
    private var running = 0
    private var queue: [(ticket: UInt64, client: String)] = []
    private var nextTicket: UInt64 = 0
    /// Checks each client started since the queue was last empty.
    private var served: [String: Int] = [:]
    let slots: Int
    let waiting: Int
    let maximumWait: TimeInterval

    init(slots: Int, waiting: Int, maximumWait: TimeInterval = 2) {
        self.slots = max(1, slots)
        self.waiting = max(0, waiting)
        self.maximumWait = maximumWait
    }

    /// Half the CPUs this process may run on (its affinity mask, as a container or `taskset`
    /// sets it, not the host's count) run, as many wait: the request workers (twice the CPUs)
    /// keep at least half.
    static func forCPUWork() -> ConcurrencyLimit {
        let half = max(1, ServerConfiguration.availableCPUs / 2)
        return ConcurrencyLimit(slots: half, waiting: half)
    }

    /// Callers waiting now (tests read it).
    var waitingCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return queue.count
    }

    /// The waiting places one client may hold.
    private var waitingPerClient: Int { max(1, waiting / 2) }

    /// The ticket that goes next: least served client first, then the oldest.
    private var nextInLine: UInt64? {
        queue.min { (served[$0.client] ?? 0, $0.ticket) < (served[$1.client] ?? 0, $1.ticket) }?.ticket
    }

    func run<Result>(for client: String, _ work: () throws -> Result) throws -> Result {
        condition.lock()
        if running >= slots || !queue.isEmpty {
            guard queue.count < waiting, queue.count(where: { $0.client == client }) < waitingPerClient else {
                condition.unlock()
                throw Self.busy
            }
            let ticket = nextTicket
            nextTicket &+= 1
            queue.append((ticket, client))
            let deadline = Date().addingTimeInterval(maximumWait)
            while running >= slots || nextInLine != ticket {
                if !condition.wait(until: deadline) && (running >= slots || nextInLine != ticket) {
                    queue.removeAll { $0.ticket == ticket }
                    condition.broadcast() // another may be next in line now
                    condition.unlock()
                    throw Self.busy
                }
            }
            queue.removeAll { $0.ticket == ticket }
        } else {
            served.removeAll(keepingCapacity: true) // nobody waited: turns start over
        }
        served[client, default: 0] += 1
        running += 1
        condition.unlock()
        defer {
            condition.lock()
            running -= 1
            condition.broadcast() // wake every waiter: only the next in line goes
            condition.unlock()
        }
        return try work()
    }

    static let busy = HTTPError(.serviceUnavailable, message: "Too many password checks at once; try again in a moment.",
                                headers: HTTPHeaders([("Retry-After", "1")]))
}
