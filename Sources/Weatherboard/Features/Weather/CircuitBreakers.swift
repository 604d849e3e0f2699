import Foundation
import Logging
import Synchronization

/// Providers (and the air's services) skipped for a while after they failed: a failing provider
/// is not asked again for every page, and the next in the chain answers meanwhile.
final class CircuitBreakers: Sendable {
    /// Until when each open breaker stays open, by provider key.
    private let openUntil = Mutex<[String: Date]>([:])
    /// How long a failure keeps a breaker open.
    let openFor: TimeInterval
    /// Where a breaker's opening and closing are said (once each, not on every skipped call).
    let logger: Logger?

    init(openFor: TimeInterval, logger: Logger? = nil) {
        self.openFor = openFor
        self.logger = logger
    }

    /// Whether `key` is being skipped at `now`.
    func isOpen(_ key: String, at now: Date) -> Bool {
        openUntil.withLock { ($0[key] ?? .distantPast) > now }
    }

    /// `key` failed at `now`: skipped for `openFor`.
    func trip(_ key: String, at now: Date) {
        let opened = openUntil.withLock { openUntil in
            defer { openUntil[key] = now.addingTimeInterval(openFor) }
            return (openUntil[key] ?? .distantPast) <= now
        }
        if opened { logger?.warning("\(key): skipped for \(Int(openFor)) s after a failure (breaker open)") }
    }

    /// `key` answered: asked again from now.
    func reset(_ key: String) {
        let wasTripped = openUntil.withLock { $0.removeValue(forKey: key) != nil }
        if wasTripped { logger?.notice("\(key): answering again (breaker closed)") }
    }
}
