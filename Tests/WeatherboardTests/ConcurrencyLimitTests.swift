import Foundation
import HTTPServer
import HTTPTestSupport
import Testing
@testable import Weatherboard

/// Issue 20 #6: password checks share the CPU fairly between clients: one client holds at most
/// one place (running or waiting), and waiting clients are served in the order they came.
@Suite struct ConcurrencyLimitTests {
    /// Starts `work` for `client` on a thread of its own; its outcome lands in `outcomes`.
    private func start(_ limit: ConcurrencyLimit, _ client: String, _ outcomes: Locked<[String]>, _ work: @escaping @Sendable () -> Void) {
        Thread.detachNewThread {
            do {
                // Recorded while the slot is held, so the record's order is the slots' order.
                try limit.run(for: client) {
                    outcomes.update { $0.append("\(client) ran") }
                    work()
                }
            } catch {
                outcomes.update { $0.append("\(client) refused") }
            }
        }
    }

    @Test func waitersAreServedByTurnsBetweenClientsNotByHowOftenTheyAsk() throws {
        let limit = ConcurrencyLimit(slots: 1, waiting: 4, maximumWait: 10)
        let outcomes = Locked<[String]>([])
        let release = DispatchSemaphore(value: 0)
        let running = Locked(0)
        start(limit, "a", outcomes) { running.update { $0 += 1 }; release.wait() }
        try waitUntil("a runs", timeout: 5) { running.value == 1 }
        // a asks again twice (half the waiting places at most: its third is refused), then b and c.
        start(limit, "a", outcomes) {}
        try waitUntil("a's second waits", timeout: 5) { limit.waitingCount == 1 }
        start(limit, "a", outcomes) {}
        try waitUntil("a's third waits", timeout: 5) { limit.waitingCount == 2 }
        #expect(throws: HTTPError.self) { try limit.run(for: "a") {} }
        start(limit, "b", outcomes) {}
        try waitUntil("b waits", timeout: 5) { limit.waitingCount == 3 }
        start(limit, "c", outcomes) {}
        try waitUntil("c waits", timeout: 5) { limit.waitingCount == 4 }
        #expect(throws: HTTPError.self) { try limit.run(for: "d") {} } // the queue is full
        release.signal()
        try waitUntil("all ran", timeout: 5) { outcomes.value.count == 5 }
        // b and c, who had not been served, go before a's second and third.
        #expect(outcomes.value == ["a ran", "b ran", "c ran", "a ran", "a ran"])
    }
}

/// Issue 39 #2: a crowd of guesses can fill the waiting places, but never ahead of a browser that
/// signed in before: it takes the place of the newest waiter of a lower priority, and goes first.
@Suite struct PriorityLimitTests {
    @Test func aKnownBrowserTakesTheNewestLowerPlaceAndGoesFirst() throws {
        let limit = ConcurrencyLimit(slots: 1, waiting: 2, maximumWait: 10)
        let outcomes = Locked<[String]>([])
        let release = DispatchSemaphore(value: 0)
        let running = Locked(0)
        func start(_ client: String, _ priority: ConcurrencyLimit.Priority, _ work: @escaping @Sendable () -> Void = {}) {
            Thread.detachNewThread {
                do {
                    try limit.run(for: client, priority: priority) {
                        outcomes.update { $0.append("\(client) ran") }
                        work()
                    }
                } catch {
                    outcomes.update { $0.append("\(client) refused") }
                }
            }
        }
        start("guesser 1", .other) { running.update { $0 += 1 }; release.wait() }
        try waitUntil("the first guess runs", timeout: 5) { running.value == 1 }
        start("guesser 2", .other)
        try waitUntil("a guess waits", timeout: 5) { limit.waitingCount == 1 }
        start("guesser 3", .other)
        try waitUntil("the queue is full", timeout: 5) { limit.waitingCount == 2 }
        #expect(throws: HTTPError.self) { try limit.run(for: "guesser 4", priority: .other) {} }
        // A quiet account's check displaces the newest guess; the owner's browser the next newest.
        start("quiet", .quietAccount)
        try waitUntil("the newest guess is refused", timeout: 5) { outcomes.value.contains("guesser 3 refused") }
        start("owner", .knownDevice)
        try waitUntil("the next guess is refused", timeout: 5) { outcomes.value.contains("guesser 2 refused") }
        #expect(limit.waitingCount == 2)
        // Nothing lower is left to displace: another quiet account's check is refused.
        #expect(throws: HTTPError.self) { try limit.run(for: "quiet 2", priority: .quietAccount) {} }
        release.signal()
        try waitUntil("all ran", timeout: 5) { outcomes.value.count == 5 }
        #expect(outcomes.value == ["guesser 1 ran", "guesser 3 refused", "guesser 2 refused", "owner ran", "quiet ran"])
    }
}
