import Foundation
import HTTPServer

/// What the post form shows when it comes back: the text as typed and why it was refused.
struct Composer {
    var text: String
    var error: String
    /// The observation's choices as sent (post form only).
    var sky: String? = nil
    var feels: String? = nil
    /// The photo's description as typed (the photo itself has to be chosen again).
    var photoAlt: String? = nil
}

/// A city's board on its page: one page of posts and the form to post.
struct BoardSection {
    var slug: String
    var signInHref: String
    var feedHref: String
    var canPost: Bool
    var composerText: String
    var composerError: String?
    var composerPhotoAlt: String?
    /// The largest photo taken, for the page's script to shrink or refuse before sending.
    var photoMaxBytes = PhotoProcessor.Limits().maxBytes
    var posts: [PostView]
    var hasPosts: Bool { !posts.isEmpty }
    /// The post form's optional observation, with what was chosen (open when something was).
    var skyChoices: [ObservationChoice] = []
    var feelsChoices: [ObservationChoice] = []
    var observing = false
    var newestHref: String?
    var olderHref: String?
    /// The live stream's position the rows reflect (`data-live-position`).
    var livePosition: String
    /// When something shown stops being true by the clock alone (`ClockReading`).
    var changesAt = Date.distantFuture
}

/// Builds a city's board section for a viewer.
struct BoardView {
    let database: AppDatabase
    let pages: Pages
    let clock: @Sendable () -> Date
    /// What every page in a language shares, prepared once: the relative-time phrases (pages
    /// listing notifications use them) and the report form's reasons.
    private let relativeTimes: [Language: PostPresenter.RelativeTimes]
    private let replyPhrases: [Language: PostPresenter.ReplyPhrases]
    private let reasonOptions: [Language: HTMLFragment]

    /// Board pages as everyone sees them, where they can be kept (nil: read per reader).
    let snapshots: BoardSnapshots?
    /// A live topic's position now (`LiveBoards.position(of:)`), taken before rows are read: a
    /// page resumes its stream from there, so that nothing written after the read is missed.
    let livePosition: @Sendable (LiveBoards.Topic) -> String

    init(database: AppDatabase, pages: Pages, clock: @escaping @Sendable () -> Date, snapshots: BoardSnapshots? = nil,
         livePosition: @escaping @Sendable (LiveBoards.Topic) -> String) {
        self.database = database
        self.pages = pages
        self.clock = clock
        self.snapshots = snapshots
        self.livePosition = livePosition
        var relativeTimes: [Language: PostPresenter.RelativeTimes] = [:]
        var reasonOptions: [Language: HTMLFragment] = [:]
        var replyPhrases: [Language: PostPresenter.ReplyPhrases] = [:]
        for language in Language.allCases {
            relativeTimes[language] = PostPresenter.RelativeTimes { pages.string($0, language) }
            replyPhrases[language] = PostPresenter.ReplyPhrases { pages.string($0, language) }
            let reasons = ReportReasons(options: ReportReason.allCases.map {
                SelectOption(value: $0.rawValue, label: pages.string("reason_\($0.rawValue)", language))
            })
            reasonOptions[language] = pages.renderer.fragment(language) { Templates.report_reasons(reasons, &$0, $1) }
        }
        self.relativeTimes = relativeTimes
        self.reasonOptions = reasonOptions
        self.replyPhrases = replyPhrases
    }

    /// A board page's rows: its posts (one more than a page, to know whether there is an older
    /// page) and the newest replies under each, with their counts.
    struct Rows {
        var posts: [PostRow]
        var replies: [Int64: (shown: [PostRow], count: Int)]
        var observations: ObservationTally
        /// Which kept read these rows are and the marks the reader added: the same two are the
        /// same rows (nil: read for this reader alone).
        var shared: SharedRead?
        /// The authors shown whom the reader has muted (their posts and replies come collapsed).
        var muted: Set<Int64> = []
        /// The live stream's position taken before these rows were read.
        var livePosition = ""
        /// Today's reports by the hour as this reader may count them (without those they blocked
        /// or hid); nil: everyone's (the rows are everyone's too).
        var hourReports: HourReports?

        /// Everyone whose post or reply the page shows.
        var authors: Set<Int64> {
            var authors = Set(posts.prefix(BoardQueries.pageSize).compactMap(\.userID))
            for replies in self.replies.values { authors.formUnion(replies.shown.compactMap(\.userID)) }
            return authors
        }
    }

    struct SharedRead: Hashable, Sendable {
        var serial: UInt64
        var marks = ViewerMarks()
    }

    /// The rows of a board page for the viewer. Kept as everyone sees them (`BoardSnapshots`),
    /// most readers add their own marks in one statement; otherwise three statements for this
    /// reader, however many posts and replies there are. Read inside the caller's read, with
    /// whatever else its page needs.
    func posts(city: City, context: AppContext, before: Int64?, _ db: any SQLConnection) throws -> Rows {
        guard let snapshots, context.user?.isAdmin != true else { return try read(city: city, viewer: context.user, before: before, db) }
        let key = BoardSnapshots.Key(city: city.id, before: before)
        let stamp = snapshots.stamp(city: city.id)
        let now = clock()
        var shared: BoardSnapshots.Snapshot
        if let kept = snapshots.snapshot(key, stamp: stamp, now: now) {
            shared = kept
            if now.timeIntervalSince(kept.observedAt) >= BoardSnapshots.observationsLifetime {
                shared.rows.observations = try BoardQueries.observations(cityID: city.id, viewer: nil, now: now.timeIntervalSince1970, db)
                shared.observedAt = now
                snapshots.keep(shared, for: key)
            }
        } else {
            var rows = try read(city: city, viewer: nil, before: before, db)
            rows.shared = SharedRead(serial: snapshots.nextSerial())
            shared = BoardSnapshots.Snapshot(stamp: stamp, readAt: now, rows: rows, observedAt: now)
            snapshots.keep(shared, for: key)
        }
        guard let viewer = context.user else { return shared.rows }
        let ids = shared.rows.posts.map(\.id) + shared.rows.replies.values.flatMap { $0.shown.map(\.id) }
        let marks = try BoardQueries.viewerMarks(cityID: city.id, viewer: viewer, ids: ids.min() ?? 1, ids.max() ?? 0, now: now, db)
        if marks.seesOtherwise { return try read(city: city, viewer: viewer, before: before, db) }
        return marks.applied(to: shared.rows)
    }

    /// The rows of a board page as `viewer` may see them, in three statements (five for a
    /// viewer: their mutes and their count of the hours).
    func read(city: City, viewer: User?, before: Int64?, _ db: any SQLConnection) throws -> Rows {
        let position = livePosition(.board(city.id))
        let now = clock()
        let posts = try BoardQueries.board(cityID: city.id, viewer: viewer, before: before, limit: BoardQueries.pageSize + 1, pinnedAt: now, db)
        let shown = posts.prefix(BoardQueries.pageSize)
        let observations = try BoardQueries.observations(cityID: city.id, viewer: viewer, now: now.timeIntervalSince1970, db)
        // Replies by id range: the pinned posts' own, then the page's in order.
        let pinned = shown.filter { $0.pinnedUntil.map { $0 > now } ?? false }, ordered = shown.filter { !pinned.contains($0) }
        var replies: [Int64: (shown: [PostRow], count: Int)] = [:]
        for post in pinned {
            replies.merge(try BoardQueries.newestReplies(cityID: city.id, posts: post.id, post.id, viewer: viewer, db)) { a, _ in a }
        }
        if let newest = ordered.first?.id, let oldest = ordered.last?.id {
            replies.merge(try BoardQueries.newestReplies(cityID: city.id, posts: oldest, newest, viewer: viewer, db)) { a, _ in a }
        }
        var rows = Rows(posts: posts, replies: replies, observations: observations, livePosition: position)
        if let viewer {
            let muted = try Mutes.mutedIDs(by: viewer.id, now: now, db)
            if !muted.isEmpty { rows.muted = muted.intersection(rows.authors) }
            rows.hourReports = try HourReports.read(city: city, now: now, viewer: viewer.id, db)
        }
        return rows
    }

    /// What this reader's board page reads (`BoardRender`): the reader as the presenter sees
    /// them, derived here from the rows shown.
    func render(city: City, context: AppContext, before: Int64?, posts rows: Rows, signInHref: String) -> BoardRender {
        let shown = rows.posts.prefix(BoardQueries.pageSize)
        let reader = context.user?.id
        let owns = reader != nil && (shown.contains { $0.userID == reader }
                                     || shown.contains { rows.replies[$0.id]?.shown.contains { $0.userID == reader } == true })
        let named: BoardRender.Rows = rows.shared.map { .shared($0) } ?? .read(
            posts: rows.posts, livePosition: rows.livePosition,
            replies: shown.compactMap { post in
                rows.replies[post.id].map { BoardRender.Replies(post: post.id, shown: $0.shown, count: $0.count) }
            })
        return BoardRender(city: city.id, slug: city.slug, before: before, language: context.language,
                           reader: Reader(context, owns: owns, muted: rows.muted),
                           signInHref: signInHref, rows: named)
    }

    /// The board section `render` describes, of `rows` (the rows it names), with the post form
    /// given back as typed when `composer` says so.
    func section(_ render: BoardRender, rows: Rows, composer: Composer?) -> BoardSection {
        let language = render.language
        let reading = ClockReading(clock())
        let presenter = presenter(render.reader, language, clock: reading)
        let posts = rows.posts
        let shown = posts.prefix(BoardQueries.pageSize)
        let slug = render.slug
        // The posts' forms bring the viewer back to this page of the board, not the first.
        let returnTo = HTMLFragment(escaping: "/city/\(slug)" + (render.before.map { "?before=\($0)" } ?? ""))
        var section = BoardSection(
            slug: slug, signInHref: render.signInHref, feedHref: "/city/\(slug)/feed.atom",
            canPost: render.reader.signedIn, composerText: composer?.text ?? "", composerError: composer?.error,
            posts: shown.map { post in
                let replies = rows.replies[post.id]
                return presenter.view(post, replies: replies?.shown ?? [], count: replies?.count ?? 0, returnTo: returnTo)
            }, livePosition: rows.livePosition)
        section.composerPhotoAlt = composer?.photoAlt.flatMap { $0.isEmpty ? nil : $0 }
        if posts.count > BoardQueries.pageSize, let last = shown.last { section.olderHref = "/city/\(slug)?before=\(last.id)#board" }
        if render.before != nil { section.newestHref = "/city/\(slug)#board" }
        if render.reader.signedIn {
            section.skyChoices = Observation.Sky.allCases.map {
                ObservationChoice(value: $0.rawValue, icon: $0.icon, label: pages.string("sky_\($0.rawValue)", language), checked: composer?.sky == $0.rawValue)
            }
            section.feelsChoices = Observation.Feels.allCases.map {
                ObservationChoice(value: $0.rawValue, label: pages.string("feels_\($0.rawValue)", language), checked: composer?.feels == $0.rawValue)
            }
            section.observing = !(composer?.sky ?? "").isEmpty || !(composer?.feels ?? "").isEmpty
        }
        section.changesAt = reading.changesAt
        return section
    }

    /// The link at the top of a city page down to its board, with how many posts this page of it
    /// shows ("20+" when there are older ones).
    func jumpLabel(_ rows: Rows, _ language: Language) -> String {
        let shown = min(rows.posts.count, BoardQueries.pageSize)
        switch shown {
        case 0: return pages.string("board_jump_none", language)
        case 1: return pages.string("board_jump_one", language)
        default:
            return pages.string(rows.posts.count > BoardQueries.pageSize ? "board_jump_more" : "board_jump_many", language, ["n": String(shown)])
        }
    }

    /// The line beside today's weather: what people in the city said it is like outside.
    func observations(_ tally: ObservationTally, _ language: Language) -> ObservationsView {
        let recent = { (n: Int) in n == 0 ? "" : pages.string("tally_last_hour", language, ["n": String(n)]) }
        return ObservationsView(
            skies: tally.skies.ranked.map { sky, count, lastHour in
                ObservationsView.Count(code: sky.rawValue, icon: sky.icon, word: pages.string("sky_\(sky.rawValue)", language), count: count,
                                       lastHour: lastHour, recent: recent(lastHour), text: "")
            },
            feels: tally.feels.ranked.map { feels, count, lastHour in
                ObservationsView.Count(code: feels.rawValue, word: "", count: count, lastHour: lastHour, recent: recent(lastHour),
                                       text: pages.string("tally_\(feels.rawValue)", language, ["n": String(count)]))
            })
    }

    /// "3 min ago" phrases of a language, prepared at start (notifications use them too).
    func relativeTimes(_ language: Language) -> PostPresenter.RelativeTimes {
        relativeTimes[language] ?? PostPresenter.RelativeTimes { pages.string($0, language) }
    }

    /// The presenter for a page that shows `context`'s reader everything of theirs as theirs, and
    /// the posts of the people in `muted` collapsed.
    func presenter(_ context: AppContext, muted: Set<Int64>) -> PostPresenter {
        presenter(Reader(context, owns: true, muted: muted), context.language)
    }

    func presenter(_ reader: Reader, _ language: Language, clock reading: ClockReading? = nil) -> PostPresenter {
        PostPresenter(reader: reader, language: language, clock: reading ?? ClockReading(clock()),
                      strings: { key, arguments in pages.string(key, language, arguments) },
                      reasonOptions: reader.signedIn ? reasonOptions[language] ?? HTMLFragment([]) : HTMLFragment([]),
                      replyPhrases: replyPhrases[language] ?? PostPresenter.ReplyPhrases { pages.string($0, language) })
    }
}

/// What people in a city said it is like outside in the last 3 hours (`data-observations`).
struct ObservationsView {
    struct Count {
        var code: String
        var icon = ""
        var word: String
        var count: Int
        /// Of `count`, those in the last hour (`data-last-hour`), and the words for them.
        var lastHour: Int
        var recent: String
        var text: String
    }

    var skies: [Count]
    var feels: [Count]
    var hasAny: Bool { !skies.isEmpty || !feels.isEmpty }
}
