import Foundation
import Synchronization

/// One piece of work per key at a time: whoever asks while it runs waits for the same result
/// (a city's upstream fetch, however many pages want it at once).
final class SingleFlight<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private let flights = Mutex<[Key: Pending<Value>]>([:])

    func isInFlight(_ key: Key) -> Bool { flights.withLock { $0[key] != nil } }

    /// The flight in progress for `key` (not the leader), or a new one if `admit` allows it
    /// (asked with the flights locked, so two callers cannot both start one): the caller leads
    /// it and must `land` it. Nil when `admit` refused.
    func join(_ key: Key, admit: () -> Bool) -> (flight: Pending<Value>, isLeader: Bool)? {
        flights.withLock { flights in
            if let existing = flights[key] { return (existing, false) }
            guard admit() else { return nil }
            let flight = Pending<Value>()
            flights[key] = flight
            return (flight, true)
        }
    }

    /// Ends the flight for `key`: later callers start a new one, and everyone waiting gets `value`.
    func land(_ key: Key, with value: Value?) {
        let flight = flights.withLock { $0.removeValue(forKey: key) }
        flight?.finish(value)
    }
}
