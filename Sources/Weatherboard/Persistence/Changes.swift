import Foundation
import Synchronization

/// A committed change to what pages show, as the store that made it emits it. The same value
/// reaches this node's consumers (the page cache's versions, the forecasts held in memory) and,
/// on PostgreSQL, every other node.
public enum PageChange: Sendable, Hashable {
    /// A city's board changed.
    case city(Int64)
    /// A city's forecast changed.
    case weather(Int64)
    /// Something every page may show changed (a display name, a ban, an account deleted, a role).
    case everything

    /// The change as text, for `pg_notify` (letters, digits and spaces only).
    var payload: String {
        switch self {
        case .city(let id): "city \(id)"
        case .weather(let id): "weather \(id)"
        case .everything: "everything"
        }
    }

    /// The change a payload names; nil for anything else.
    init?(payload: some StringProtocol) {
        let parts = payload.split(separator: " ")
        switch (parts.first, parts.count == 2 ? Int64(parts[1]) : nil) {
        case ("city", let id?): self = .city(id)
        case ("weather", let id?): self = .weather(id)
        case ("everything", nil) where parts.count == 1: self = .everything
        default: return nil
        }
    }
}

/// The changes one write transaction makes. A store emits each change where it writes the data,
/// inside the transaction; they reach consumers only if it commits. On PostgreSQL each is also
/// sent to the other nodes with `pg_notify` in the same transaction — PostgreSQL delivers
/// notifications on commit and drops them on rollback, so no crash between the commit and the
/// announcement can leave other nodes behind.
public final class ChangeLog {
    private let connection: any SQLConnection
    /// This node's name in notifications, or nil where there are no other nodes to tell (SQLite).
    private let notifyingAs: String?
    private(set) var changes: [PageChange] = []

    init(_ connection: any SQLConnection, notifyingAs node: String?) {
        self.connection = connection
        notifyingAs = node
    }

    /// Records that this transaction changes what `change` names (the same change twice is once).
    public func emit(_ change: PageChange) throws {
        guard !changes.contains(change) else { return }
        changes.append(change)
        if let node = notifyingAs {
            try connection.execute("SELECT pg_notify(?, ?)", ChangeStream.channel, "\(node) \(change.payload)")
        }
    }
}

/// Where committed changes go: every consumer subscribes here, and hears this node's changes
/// after their commit and other nodes' as they arrive.
public final class ChangeStream: Sendable {
    /// The PostgreSQL channel the nodes' notifications travel on.
    static let channel = "weatherboard_changes"

    public enum Origin: Sendable, Equatable {
        /// Committed through this process.
        case here
        /// Committed by another node (or, after a lost connection, possibly missed: `.everything`).
        case elsewhere
    }

    /// This process's name in notifications, so that it can tell its own from others'.
    public let node = UUID().uuidString
    private let consumers = Mutex<[@Sendable (PageChange, Origin) -> Void]>([])

    public init() {}

    /// Adds a consumer; it is called on the thread that committed (or heard) the change, so it
    /// must be quick.
    public func subscribe(_ consumer: @escaping @Sendable (PageChange, Origin) -> Void) {
        consumers.withLock { $0.append(consumer) }
    }

    func deliver(_ changes: [PageChange], from origin: Origin) {
        guard !changes.isEmpty else { return }
        let consumers = self.consumers.withLock { $0 }
        for change in changes {
            for consumer in consumers { consumer(change, origin) }
        }
    }
}
