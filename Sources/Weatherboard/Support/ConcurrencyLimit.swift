import Foundation
import HTTPServer

/// At most `slots` callers run at once and at most `waiting` more wait (each for at most
/// `maximumWait`); anyone past that is refused with 503 and `Retry-After`. Expensive CPU work
/// (password hashing) runs through one, so that it can never take every request worker.
///
/// Callers come with a `Priority`. A higher one goes first, and when the waiting places are
/// full it takes the place of the newest waiter of a lower one (who is refused): a crowd of
/// guesses can fill the queue, but never ahead of a browser that signed in before.
///
/// Within a priority, fair between clients (each a `ClientKey`): one client holds at most half
/// the waiting places, and when a slot frees, the waiter whose client has been served least
/// since the queue last emptied goes first (the oldest among equals). A person signing in from
/// one address is then served in turn with an attacker's many addresses, however often the
/// attacker asks.
final class ConcurrencyLimit: Sendable {
    /// Who goes first; lower raw values before higher.
    enum Priority: Int, Comparable, Sendable {
        /// A browser that signed in to this account before (`KnownDevices`).
        case knownDevice
        /// An account few attempts were made on lately.
        case quietAccount
        case other

        static func < (a: Priority, b: Priority) -> Bool { a.rawValue < b.rawValue }
    }

    private struct Waiter {
        let ticket: UInt64
        let client: String
        let priority: Priority
    }

    private struct State {
        var running = 0
        var queue: [Waiter] = []
        /// Waiters whose place a higher priority took: they leave, refused.
        var displaced: Set<UInt64> = []
        var nextTicket: UInt64 = 0
        /// Checks each client started since the queue was last empty.
        var served: [String: Int] = [:]

        /// The ticket that goes next: highest priority, then least served client, then the oldest.
        var nextInLine: UInt64? {
            queue.min { a, b in
                (a.priority.rawValue, served[a.client] ?? 0, a.ticket) < (b.priority.rawValue, served[b.client] ?? 0, b.ticket)
            }?.ticket
        }

        mutating func start(for client: String) {
            served[client, default: 0] += 1
            running += 1
        }

        /// Makes room for one waiter of `priority` in a full queue by displacing the newest
        /// waiter of the lowest priority below it; false when there is none.
        mutating func displace(below priority: Priority) -> Bool {
            let lower = queue.filter { $0.priority > priority }
            guard let lowest = lower.map(\.priority).max(),
                  let victim = lower.filter({ $0.priority == lowest }).max(by: { $0.ticket < $1.ticket })
            else { return false }
            queue.removeAll { $0.ticket == victim.ticket }
            displaced.insert(victim.ticket)
            return true
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

    func run<Result>(for client: String, priority: Priority = .other, _ work: () throws -> Result) throws -> Result {
        let (slots, waiting, waitingPerClient) = (self.slots, self.waiting, self.waitingPerClient)
        let ticket = try state.withLock(wake: .all) { state -> UInt64? in
            if state.running < slots && state.queue.isEmpty {
                state.served.removeAll(keepingCapacity: true) // nobody waited: turns start over
                state.start(for: client)
                return nil
            }
            guard state.queue.count(where: { $0.client == client && $0.priority == priority }) < waitingPerClient,
                  state.queue.count < waiting || state.displace(below: priority)
            else { throw Self.busy }
            let ticket = state.nextTicket
            state.nextTicket &+= 1
            state.queue.append(Waiter(ticket: ticket, client: client, priority: priority))
            return ticket
        }
        if let ticket {
            // Every waiter is woken when a slot frees, one gives up or one is displaced (only the
            // next in line goes; a displaced one leaves).
            try state.wait(until: Date().addingTimeInterval(maximumWait),
                           for: { $0.displaced.contains(ticket) || ($0.running < slots && $0.nextInLine == ticket) },
                           wake: .all) { state, ready in
                if state.displaced.remove(ticket) != nil { throw Self.busy }
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
