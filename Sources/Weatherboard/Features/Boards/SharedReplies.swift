import Foundation
import Synchronization

/// New replies as open pages fetch them (`GET /posts/{id}/replies?after=`, issue 46 #1), kept
/// per what their render reads: the post, the rows as read for the reader, the reader as the
/// presenter sees them (`Reader`: signed in or not, owner of one, a moderator, a form token, whom
/// they muted), the language and the minute (times read "5 minutes ago"), as `BoardRender`. Everyone with no part in the replies reads the same rows and is
/// the same `Reader`, so a reply reaching thousands of open pages is rendered once; a reader
/// with a part (their own reply, an agreement, someone they blocked) gets a key of their own.
final class SharedReplies: Sendable {
    struct Key: Hashable, Sendable {
        var post: Int64
        var rows: [PostRow]
        var reader: Reader
        var language: Language
        /// Minutes since 1970.
        var minute: Int64
    }

    private let entries = Mutex(LRUCache<Key, HTMLFragment>(maximumCount: 4_000, maximumCost: 16 << 20))
    /// Readers arriving together wait for the one render under way rather than make their own.
    private let flights = SingleFlight<Key, HTMLFragment>()
    /// False: every fetch renders afresh (`--page-caches off`).
    let enabled: Bool
    /// What the kept replies hold now, in bytes (for the operator).
    var keptBytes: Int { entries.withLock { $0.totalCost } }
    /// Renders made (tests and the benchmark read it).
    let renders = Atomic<Int>(0)

    init(enabled: Bool = true) {
        self.enabled = enabled
    }

    /// How long a reader waits for another's render before making its own.
    static let wait: TimeInterval = 2

    func fragment(_ key: Key, make: () -> HTMLFragment) -> HTMLFragment {
        func render() -> HTMLFragment {
            renders.add(1, ordering: .relaxed)
            return make()
        }
        guard enabled else { return render() }
        if let kept = entries.withLock({ $0.value(for: key) }) { return kept }
        guard let (flight, isLeader) = flights.join(key, admit: { true }) else { return render() }
        guard isLeader else { return flight.wait(until: Date().addingTimeInterval(Self.wait)) ?? render() }
        let made = render()
        entries.withLock { $0.set(made, for: key, cost: made.bytes.count) }
        flights.land(key, with: made)
        return made
    }
}
