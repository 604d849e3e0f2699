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
    /// The official warnings in force in a city changed.
    case warning(Int64)
    /// Something every page may show changed (a display name, a ban, an account deleted, a role).
    case everything
    /// Something happened to one post or reply (it changes its city's board, and live pages hear it).
    case post(PostEvent)
    /// A member was told something (a notification): their open pages' counts change.
    case notice(Int64)
    /// A member blocked, muted, or let back someone: what their open pages' streams announce changes.
    case silenced(Int64)
    /// This node may have missed other nodes' changes (its listener was away): anything may have
    /// changed. Never sent to other nodes.
    case missed

    /// The board a change is about, if it is one board's.
    var cityID: Int64? {
        switch self {
        case .city(let id), .weather(let id), .warning(let id): id
        case .post(let event): event.city
        case .everything, .missed, .notice, .silenced: nil
        }
    }

    /// The change as text, for `pg_notify` (letters, digits, `-` and spaces only).
    var payload: String {
        switch self {
        case .city(let id): "city \(id)"
        case .weather(let id): "weather \(id)"
        case .warning(let id): "warning \(id)"
        case .everything: "everything"
        case .notice(let id): "notice \(id)"
        case .silenced(let id): "silenced \(id)"
        case .missed: "everything" // (only ever delivered here)
        case .post(let e):
            "post \(e.kind.rawValue) \(e.id) \(e.city) \(e.parent.map(String.init) ?? "-") \(e.author.map(String.init) ?? "-") \(e.count.map(String.init) ?? "-")"
        }
    }

    /// The change a payload names; nil for anything else.
    init?(payload: some StringProtocol) {
        let parts = String(payload).split(separator: " ").map(String.init)
        if parts.first == "post" {
            guard parts.count == 7, let kind = PostEvent.Kind(rawValue: parts[1]),
                  let id = Int64(parts[2]), let city = Int64(parts[3]) else { return nil }
            func optional(_ part: String) -> Int64?? { part == "-" ? .some(nil) : Int64(part).map { .some($0) } }
            guard let parent = optional(parts[4]), let author = optional(parts[5]), let count = optional(parts[6]) else { return nil }
            self = .post(PostEvent(kind, id: id, city: city, parent: parent, author: author, count: count.map(Int.init)))
            return
        }
        switch (parts.first, parts.count == 2 ? Int64(parts[1]) : nil) {
        case ("city", let id?): self = .city(id)
        case ("weather", let id?): self = .weather(id)
        case ("warning", let id?): self = .warning(id)
        case ("notice", let id?): self = .notice(id)
        case ("silenced", let id?): self = .silenced(id)
        case ("everything", nil) where parts.count == 1: self = .everything
        default: return nil
        }
    }
}

/// What happened to one post or reply, as much as a live page needs to follow it: which it is,
/// where it shows, whose it is (a reader who blocked its author hears nothing of it) and, for
/// agreement, the count now.
public struct PostEvent: Sendable, Hashable {
    public enum Kind: String, Sendable {
        /// Written (a post, or a reply when `parent` is set).
        case posted
        case edited
        /// Deleted by its author or removed by a moderator: it goes from every page.
        case gone
        /// Hidden by reports until a moderator decides: it goes from every page but its author's.
        case hidden
        /// Shown again (reports dismissed, or restored by a moderator).
        case shown
        /// The number of people agreeing changed to `count`.
        case agreed
    }
    public var kind: Kind
    public var id: Int64
    public var city: Int64
    /// The post a reply answers; nil for a post.
    public var parent: Int64?
    /// Whose it is; nil for an account since deleted.
    public var author: Int64?
    public var count: Int?

    public init(_ kind: Kind, id: Int64, city: Int64, parent: Int64? = nil, author: Int64? = nil, count: Int? = nil) {
        self.kind = kind
        self.id = id
        self.city = city
        self.parent = parent
        self.author = author
        self.count = count
    }

    /// The conversation it belongs to: the post itself, or the post a reply answers.
    public var conversation: Int64 { parent ?? id }
}

/// The changes one write transaction makes. A store emits each change where it writes the data,
/// inside the transaction; they reach consumers only if it commits. On PostgreSQL each is also
/// sent to the other nodes with `pg_notify`, in the same round trip as COMMIT and right after it
/// (`ChangeStream.notifications`): the server runs both once it has them, so no crash of this
/// node between the commit and the announcement can leave other nodes behind, and a rolled-back
/// write tells nobody. Not inside the transaction: PostgreSQL makes notifying transactions commit
/// one at a time, their log flush included, and every post notifies.
public final class ChangeLog {
    private let connection: any SQLConnection
    private(set) var changes: [PageChange] = []

    init(_ connection: any SQLConnection) {
        self.connection = connection
    }

    /// Records that this transaction changes what `change` names (the same change twice is once).
    public func emit(_ change: PageChange) throws {
        guard !changes.contains(change) else { return }
        changes.append(change)
    }

    /// Records that every board showing a post of `userID`'s changes (what a post says of its
    /// author: their name, their standing).
    func emitBoards(showingPostsOf userID: Int64) throws {
        for city in try connection.all("SELECT DISTINCT city_id FROM posts WHERE user_id = ?", [userID], { $0.int64(0) }) {
            try emit(.city(city))
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
        /// Committed by another node (or, after a lost connection, possibly missed: `.missed`).
        case elsewhere
    }

    /// This process's name in notifications, so that it can tell its own from others'.
    public let node = UUID().uuidString

    /// The statement that tells the other nodes of `changes` (nil for none): a `pg_notify` for
    /// each element of one array, however many (a purge is thousands). Literals, since it runs
    /// in the simple protocol's round trip with COMMIT; a node's name and a payload are letters,
    /// digits, `-` and spaces.
    func notifications(_ changes: [PageChange]) -> String? {
        guard !changes.isEmpty else { return nil }
        let literal = { (text: String) in "'" + text.replacingOccurrences(of: "'", with: "''") + "'" }
        return "SELECT pg_notify(\(literal(Self.channel)), change) FROM unnest(ARRAY["
            + changes.map { literal("\(node) \($0.payload)") }.joined(separator: ", ") + "]::text[]) AS change"
    }
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
