import Foundation
import Synchronization

/// Everything a board's render reads, and so the key its bytes are kept under: which board and
/// page, the language, the rows shown, and the reader as the presenter sees them (`Reader`).
/// `BoardView.section` takes its inputs from this value alone (and the rows it names), so nothing
/// it shows can be missing here. What it reads of the clock is not a key: the render says until
/// when it holds (`ClockReading`), and is kept that long.
struct BoardRender: Hashable, Sendable {
    var city: Int64
    var slug: String
    var before: Int64?
    var language: Language
    var reader: Reader
    var signInHref: String
    var rows: Rows

    /// The rows as named: a kept read with the reader's marks (`BoardSnapshots`), named without
    /// hashing them (its stream position is the read's), or the rows read for this reader alone
    /// with the position taken before they were read (hashed: far less than rendering them).
    enum Rows: Hashable, Sendable {
        case shared(BoardView.SharedRead)
        case read(posts: [PostRow], livePosition: String, replies: [Replies])
    }

    struct Replies: Hashable, Sendable {
        var post: Int64
        var shown: [PostRow]
        var count: Int
    }
}

/// Boards as rendered, each with its deflated form, kept for the next reader whose
/// `BoardRender` is the same: one render and one deflate serve everyone a board looks the same
/// to (guests; members with nothing of theirs shown), and a member's own view serves their next
/// few pages. A page that holds a kept board compresses only the rest around it.
final class BoardCache: Sendable {
    /// Least recently used go first, past a count and a byte budget.
    private let boards: Mutex<LRUCache<BoardRender, KeptUntil<HTMLFragment>>>
    /// False: every board is rendered afresh (`--page-caches off`).
    let enabled: Bool
    /// What the kept boards hold now, in bytes (for the operator).
    var keptBytes: Int { boards.withLock { $0.totalCost } }
    /// The most it may hold.
    var byteBound: Int { boards.withLock { $0.maximumCost } }
    /// Renders kept, and reused (tests count them).
    let made = Atomic<Int>(0)
    let reused = Atomic<Int>(0)

    /// A board of 20 posts is about 60–80 KB plain and 15–20 KB deflated. The budget holds the
    /// busiest boards as everyone sees them and the views of members who read boards they post
    /// on (each their own: 20 members on 50 full boards are a thousand), with the small boards
    /// of a few thousand cities; past it, the least recently shown are made again.
    init(enabled: Bool = true, maximumEntries: Int = 8_000, maximumBytes: Int = 128 << 20) {
        self.enabled = enabled
        boards = Mutex(LRUCache(maximumCount: maximumEntries, maximumCost: maximumBytes))
    }

    /// The board `render` describes at `now`: kept, or made by `make` (with the moment it stops
    /// being true) and kept with its deflated form until then.
    func board(_ render: BoardRender, now: Date, make: () -> (HTMLFragment, until: Date)) -> HTMLFragment {
        guard enabled else { return make().0 }
        if let kept = boards.withLock({ $0.value(for: render) })?.value(at: now) {
            reused.add(1, ordering: .relaxed)
            return kept
        }
        // A board only its owner sees serves their next pages; one everyone with nothing of
        // theirs on it sees serves the whole site: it is worth the slower, smaller form.
        let (made, until) = make()
        let board = made.deflatedOnce(level: render.reader.owner == nil ? 6 : 1)
        self.made.add(1, ordering: .relaxed)
        // A key holding the rows read for this reader costs about half the bytes they render
        // to; a key naming a kept read (`.shared`) costs nothing of the kind.
        let keyBytes: Int
        switch render.rows {
        case .shared: keyBytes = 0
        case .read: keyBytes = board.bytes.count / 2
        }
        boards.withLock { $0.set(KeptUntil(value: board, until: until), for: render, cost: board.residentBytes + keyBytes) }
        return board
    }
}
