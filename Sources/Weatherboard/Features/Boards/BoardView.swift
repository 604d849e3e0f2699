import Foundation
import HTTPServer

/// What the post form shows when it comes back: the text as typed and why it was refused.
struct Composer {
    var text: String
    var error: String
}

/// A city's board on its page: one page of posts and the form to post.
struct BoardSection {
    var feedHref: String
    var canPost: Bool
    var composerText: String
    var composerError: String?
    var posts: [PostView]
    var hasPosts: Bool { !posts.isEmpty }
    var newestHref: String?
    var olderHref: String?
}

/// Builds a city's board section for a viewer.
struct BoardView {
    let database: AppDatabase
    let pages: Pages
    let clock: @Sendable () -> Date
    /// What every page in a language shares, prepared once: the relative-time phrases and the
    /// report form's reasons.
    private let relativeTimes: [Language: PostPresenter.RelativeTimes]
    private let replyPhrases: [Language: PostPresenter.ReplyPhrases]
    private let reasonOptions: [Language: HTMLFragment]

    init(database: AppDatabase, pages: Pages, clock: @escaping @Sendable () -> Date) {
        self.database = database
        self.pages = pages
        self.clock = clock
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
    }

    /// The rows of a board page for the viewer, in two statements however many posts and
    /// replies there are. Read inside the caller's read, with whatever else its page needs.
    func posts(city: City, context: AppContext, before: Int64?, _ db: any SQLConnection) throws -> Rows {
        let posts = try BoardQueries.board(cityID: city.id, viewer: context.user, before: before, limit: BoardQueries.pageSize + 1, db)
        let shown = posts.prefix(BoardQueries.pageSize)
        guard let newest = shown.first?.id, let oldest = shown.last?.id else { return Rows(posts: posts, replies: [:]) }
        return Rows(posts: posts, replies: try BoardQueries.newestReplies(cityID: city.id, posts: oldest, newest, viewer: context.user, db))
    }

    func section(city: City, context: AppContext, before: Int64?, composer: Composer?, posts rows: Rows) -> BoardSection {
        let presenter = presenter(context)
        let posts = rows.posts
        let shown = posts.prefix(BoardQueries.pageSize)
        // The posts' forms bring the viewer back to this page of the board, not the first.
        let returnTo = HTMLFragment(escaping: "/city/\(city.slug)" + (before.map { "?before=\($0)" } ?? ""))
        var section = BoardSection(
            feedHref: "/city/\(city.slug)/feed.atom", canPost: context.user != nil, composerText: composer?.text ?? "",
            composerError: composer?.error,
            posts: shown.map { post in
                let replies = rows.replies[post.id]
                return presenter.view(post, replies: replies?.shown ?? [], count: replies?.count ?? 0, returnTo: returnTo)
            })
        if posts.count > BoardQueries.pageSize, let last = shown.last { section.olderHref = "/city/\(city.slug)?before=\(last.id)#board" }
        if before != nil { section.newestHref = "/city/\(city.slug)#board" }
        return section
    }

    func presenter(_ context: AppContext) -> PostPresenter {
        let language = context.language
        return PostPresenter(viewer: context.user, csrfToken: HTMLFragment(escaping: context.csrfToken), language: language, now: clock(),
                             strings: { key, arguments in pages.string(key, language, arguments) },
                             reasonOptions: context.user == nil ? HTMLFragment([]) : reasonOptions[language] ?? HTMLFragment([]),
                             relativeTimes: relativeTimes[language] ?? PostPresenter.RelativeTimes { pages.string($0, language) },
                             replyPhrases: replyPhrases[language] ?? PostPresenter.ReplyPhrases { pages.string($0, language) })
    }
}
