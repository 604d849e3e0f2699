import Foundation
import Synchronization

/// Board pages as read for a reader with no part in them (a guest's view: no blocks, nothing
/// hidden of theirs, no reports or agreements of theirs), kept while the board is unchanged.
/// Most signed-in readers see exactly that plus their own reports and agreements, which one
/// statement of their own reads (`BoardQueries.viewerMarks`); the rest — readers who blocked
/// someone, hid posts, have a post of theirs hidden in the city, and admins — are read as
/// before. A page of posts with their newest replies costs three statements with window passes;
/// keeping it makes a signed-in board page a key look-up and one index walk per reader.
///
/// A page is valid while the city's board version and everything's are those it was read at
/// (`PageVersions.boardStamp`, taken before the read: a change committed meanwhile makes it
/// stale at once). Only where every change reaches this process as it commits (SQLite): on
/// PostgreSQL another node's change arrives a moment later, and a reader who posted through
/// that node must find their post on the page they are sent back to.
final class BoardSnapshots: Sendable {
    struct Key: Hashable, Sendable {
        var city: Int64
        var before: Int64?
    }

    struct Snapshot: Sendable {
        var stamp: PageVersions.Stamp
        var readAt: Date
        var rows: BoardView.Rows
        /// When the observations were counted: their window moves with the clock, so they are
        /// counted again after `observationsLifetime` even when the board is unchanged.
        var observedAt: Date
        /// The first moment the rows stop being the board with no change announced: a pin
        /// running out (its post then goes back to its place).
        var until: Date?

        init(stamp: PageVersions.Stamp, readAt: Date, rows: BoardView.Rows, observedAt: Date) {
            self.stamp = stamp
            self.readAt = readAt
            self.rows = rows
            self.observedAt = observedAt
            until = rows.posts.compactMap(\.pinnedUntil).filter { $0 > readAt }.min()
        }
    }

    /// How old the "last 3 hours" tally may be.
    static let observationsLifetime: TimeInterval = 60
    /// How old a page may be even when no change was announced: a bound on what a change made
    /// around the application (an operator's SQL) leaves stale, as the guests' page cache has.
    static let maximumAge: TimeInterval = 600

    private let versions: PageVersions
    private let pages = Mutex(LRUCache<Key, Snapshot>(maximumCount: 4_000, maximumCost: 16 << 20))
    /// What the kept pages hold now, in bytes (for the operator).
    var keptBytes: Int { pages.withLock { $0.totalCost } }
    /// The most it may hold.
    var byteBound: Int { pages.withLock { $0.maximumCost } }
    /// Pages read for the cache, and pages served from it (tests count them).
    let reads = Atomic<Int>(0)
    /// Names each read, so that what is made from it can be kept under its name
    /// (`RenderedBoards.Key`) rather than under its rows.
    private let serials = Atomic<UInt64>(0)

    /// A name no earlier read has.
    func nextSerial() -> UInt64 {
        serials.add(1, ordering: .relaxed).newValue
    }
    let hits = Atomic<Int>(0)

    init(versions: PageVersions) {
        self.versions = versions
    }

    /// The board's version now: taken before reading it, kept with what was read.
    func stamp(city: Int64) -> PageVersions.Stamp {
        versions.boardStamp(city: city)
    }

    /// The kept page, if it is still the board at `stamp` and not older than `maximumAge`.
    func snapshot(_ key: Key, stamp: PageVersions.Stamp, now: Date) -> Snapshot? {
        let kept = pages.withLock { $0.value(for: key) }
        guard let kept, kept.stamp == stamp, now.timeIntervalSince(kept.readAt) < Self.maximumAge, now >= kept.readAt,
              kept.until.map({ now < $0 }) ?? true else { return nil }
        hits.add(1, ordering: .relaxed)
        return kept
    }

    func keep(_ snapshot: Snapshot, for key: Key) {
        reads.add(1, ordering: .relaxed)
        pages.withLock { $0.set(snapshot, for: key, cost: Self.cost(of: snapshot.rows)) }
    }

    /// About what the rows hold: their text and a few hundred bytes of fields each.
    private static func cost(of rows: BoardView.Rows) -> Int {
        let replies = rows.replies.values.flatMap(\.shown)
        return (rows.posts + replies).reduce(0) { $0 + $1.body.utf8.count + 256 }
    }
}

/// What a signed-in reader adds to a board as everyone sees it: the posts they reported and
/// agreed with, the people they muted among its authors, and whether they see it otherwise
/// (they blocked someone or hid posts, or a post of theirs in the city is hidden by reports:
/// then the board is read for them alone).
struct ViewerMarks: Sendable, Hashable {
    var seesOtherwise = false
    var reported: [Int64: Date] = [:]
    var agreed: Set<Int64> = []
    var muted: Set<Int64> = []

    /// The rows as this reader sees them.
    func applied(to rows: BoardView.Rows) -> BoardView.Rows {
        var rows = rows
        var marks = self
        marks.muted = muted.isEmpty ? [] : muted.intersection(rows.authors)
        rows.muted = marks.muted
        rows.shared?.marks = marks
        guard !reported.isEmpty || !agreed.isEmpty else { return rows }
        func marked(_ row: PostRow) -> PostRow {
            var row = row
            row.reportedByViewerAt = reported[row.id]
            row.reactedByViewer = agreed.contains(row.id)
            return row
        }
        rows.posts = rows.posts.map(marked)
        for (post, replies) in rows.replies { rows.replies[post] = (replies.shown.map(marked), replies.count) }
        return rows
    }
}
