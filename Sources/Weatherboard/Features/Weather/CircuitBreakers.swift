import Foundation
import Synchronization

/// Providers (and the air's services) skipped for a while after they failed: a failing provider
/// is not asked again for every page, and the next in the chain answers meanwhile.
final class CircuitBreakers: Sendable {
    /// Until when each open breaker stays open, by provider key.
    private let openUntil = Mutex<[String: Date]>([:])
    /// How long a failure keeps a breaker open.
    let openFor: TimeInterval

    init(openFor: TimeInterval) { self.openFor = openFor }

    /// Whether `key` is being skipped at `now`.
    func isOpen(_ key: String, at now: Date) -> Bool {
        openUntil.withLock { ($0[key] ?? .distantPast) > now }
    }

    /// `key` failed at `now`: skipped for `openFor`.
    func trip(_ key: String, at now: Date) {
        openUntil.withLock { $0[key] = now.addingTimeInterval(openFor) }
    }

    /// `key` answered: asked again from now.
    func reset(_ key: String) {
        openUntil.withLock { $0[key] = nil }
    }
}
