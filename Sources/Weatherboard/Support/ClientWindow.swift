import Foundation
import Synchronization

/// Each client's actions in a window of its own, in this process's memory: limits a node keeps
/// for itself (cold fetches, searches), where a database write per request would cost more than
/// what it protects. The least recently seen clients are forgotten first, so a crowd of
/// addresses cannot grow it past `maximumClients`.
struct ClientWindow {
    let limit: Int
    let window: TimeInterval
    private var clients = LRUCache<String, (count: Int, since: Date)>(maximumCount: ClientWindow.maximumClients, maximumCost: .max)
    static let maximumClients = 10_000

    init(limit: Int, window: TimeInterval) {
        self.limit = limit
        self.window = window
    }

    /// The seconds until `client` has room for one more, or nil when it has room now.
    mutating func wait(_ client: String, now: Date) -> Int? {
        guard let entry = clients.value(for: client), now.timeIntervalSince(entry.since) < window, entry.count >= limit else { return nil }
        return max(1, Int(clampedSeconds: (window - now.timeIntervalSince(entry.since)).rounded(.up)))
    }

    /// Counts one for `client` (a new window when its last one is over).
    mutating func count(_ client: String, now: Date) {
        var entry = clients.value(for: client) ?? (0, now)
        if now.timeIntervalSince(entry.since) >= window || now < entry.since { entry = (0, now) }
        entry.count += 1
        clients.set(entry, for: client, cost: 1)
    }

    /// Counts one for `client` when it has room; else the seconds to wait, nothing counted.
    mutating func admit(_ client: String, now: Date) -> Int? {
        if let wait = wait(client, now: now) { return wait }
        count(client, now: now)
        return nil
    }
}

/// A `ClientWindow` shared by a node's request workers.
final class ClientLimit: Sendable {
    private let windows: Mutex<ClientWindow>

    init(limit: Int, window: TimeInterval) {
        windows = Mutex(ClientWindow(limit: limit, window: window))
    }

    /// Counts one for `client` when it has room; else the seconds to wait.
    func admit(_ client: String, now: Date) -> Int? { windows.withLock { $0.admit(client, now: now) } }
}
