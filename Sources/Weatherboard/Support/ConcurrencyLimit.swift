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
final class ConcurrencyLimit: Sendable {
    private struct State {
        var running = 0
        var queue: [(ticket: UInt64, client: String)] = []
        var nextTicket: UInt64 = 0
        /// Checks each client started since the queue was last empty.
        var served: [String: Int] = [:]

        /// The ticket that goes next: least served client first, then the oldest.
        var nextInLine: UInt64? {
            queue.min { (served[$0.client] ?? 0, $0.ticket) < (served[$1.client] ?? 0, $1.ticket) }?.ticket
        }

        mutating func start(for client: String) {
            served[client, default: 0] += 1
            running += 1
        }
    }
    private let state = ConditionLock(State())
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
    var waitingCount: Int { state.withLock { $0.queue.count } }

    /// The waiting places one client may hold.
    private var waitingPerClient: Int { max(1, waiting / 2) }

    func run<Result>(for client: String, _ work: () throws -> Result) throws -> Result {
        let (slots, waiting, waitingPerClient) = (self.slots, self.waiting, self.waitingPerClient)
        let ticket = try state.withLock { state -> UInt64? in
            if state.running < slots && state.queue.isEmpty {
                state.served.removeAll(keepingCapacity: true) // nobody waited: turns start over
                state.start(for: client)
                return nil
            }
            guard state.queue.count < waiting, state.queue.count(where: { $0.client == client }) < waitingPerClient else {
                throw Self.busy
            }
            let ticket = state.nextTicket
            state.nextTicket &+= 1
            state.queue.append((ticket, client))
            return ticket
        }
        if let ticket {
            // Every waiter is woken when a slot frees or one gives up (only the next in line goes).
            try state.wait(until: Date().addingTimeInterval(maximumWait), for: { $0.running < slots && $0.nextInLine == ticket },
                           wake: .all) { state, ready in
                state.queue.removeAll { $0.ticket == ticket }
                guard ready else { throw Self.busy } // another may be next in line now
                state.start(for: client)
            }
        }
        defer { state.withLock(wake: .all) { $0.running -= 1 } }
        return try work()
    }

    static let busy = HTTPError(.serviceUnavailable, message: "Too many password checks at once; try again in a moment.",
                                headers: HTTPHeaders([("Retry-After", "1")]))
}
