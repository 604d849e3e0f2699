import Foundation
import Synchronization

/// Boards as rendered, kept for the next reader they are the same for. What a board's HTML
/// depends on is in its key: its rows as this reader may see them (posts and replies, with the
/// reader's own reports and agreements, blocked people already left out), the page of it, the
/// language, whether the reader is signed in, who the reader is only when a post or reply shown
/// is theirs (their edit and delete buttons), the token (or that it is a hole) and the minute
/// (relative times and the edit window are worded to the minute). Readers with the same key get
/// the same bytes, so one render serves them all, and `SharedDeflates` reuses its deflated form.
/// Rows from a kept read are named by it; others are hashed (a few thousand instructions a
/// post; rendering one, tens of thousands).
final class RenderedBoards: Sendable {
    struct Key: Hashable, Sendable {
        var city: Int64
        var before: Int64?
        var language: Language
        var signedIn: Bool
        /// The reader, when something shown is theirs; nil otherwise.
        var owner: Int64?
        /// The response's token when it is written in (a cached guest page's placeholder); nil
        /// when it is a hole filled per response.
        var token: String?
        var signInHref: String
        /// Minutes since 1970.
        var minute: Int64
        var rows: Rows
        /// Whether an older page follows (its link).
        var morePosts: Bool

        /// The rows the board shows: a kept read with the reader's marks (`BoardSnapshots`),
        /// named without hashing its rows, or the rows read for this reader alone.
        enum Rows: Hashable, Sendable {
            case shared(BoardView.SharedRead)
            case read(posts: [PostRow], replies: [Replies])
        }

        struct Replies: Hashable, Sendable {
            var post: Int64
            var shown: [PostRow]
            var count: Int
        }
    }

    /// Least recently used go first, past a count and a byte budget.
    private let boards = Mutex(LRUCache<Key, HTMLFragment>(maximumCount: 512, maximumCost: 8 << 20))
    /// What the kept boards hold now, in bytes (for the operator).
    var keptBytes: Int { boards.withLock { $0.totalCost } }
    /// Renders kept, and reused (tests count them).
    let made = Atomic<Int>(0)
    let reused = Atomic<Int>(0)

    func fragment(for key: Key) -> HTMLFragment? {
        let kept = boards.withLock { $0.value(for: key) }
        if kept != nil { reused.add(1, ordering: .relaxed) }
        return kept
    }

    func keep(_ fragment: HTMLFragment, for key: Key) {
        made.add(1, ordering: .relaxed)
        // The key holds the rows it was made from: about half the bytes they render to.
        boards.withLock { $0.set(fragment, for: key, cost: fragment.bytes.count * 3 / 2) }
    }
}
