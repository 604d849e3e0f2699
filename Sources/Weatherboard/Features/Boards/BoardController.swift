import Foundation
import GRDB
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
    private let reasonOptions: [Language: HTMLFragment]

    init(database: AppDatabase, pages: Pages, clock: @escaping @Sendable () -> Date) {
        self.database = database
        self.pages = pages
        self.clock = clock
        var relativeTimes: [Language: PostPresenter.RelativeTimes] = [:]
        var reasonOptions: [Language: HTMLFragment] = [:]
        for language in Language.allCases {
            relativeTimes[language] = PostPresenter.RelativeTimes { pages.string($0, language) }
            let reasons = ReportReasons(options: ReportReason.allCases.map {
                SelectOption(value: $0.rawValue, label: pages.string("reason_\($0.rawValue)", language))
            })
            reasonOptions[language] = pages.renderer.fragment(language) { Templates.report_reasons(reasons, &$0, $1) }
        }
        self.relativeTimes = relativeTimes
        self.reasonOptions = reasonOptions
    }

    /// The rows of a board page for the viewer, one more than a page (to know whether there is
    /// an older page). Read inside the caller's read, with whatever else its page needs.
    func posts(city: City, context: AppContext, before: Int64?, _ db: Database) throws -> [PostRow] {
        try BoardQueries.board(cityID: city.id, viewer: context.user, before: before, limit: BoardQueries.pageSize + 1, db)
    }

    func section(city: City, context: AppContext, before: Int64?, composer: Composer?, posts: [PostRow]) -> BoardSection {
        let presenter = presenter(context)
        let shown = posts.prefix(BoardQueries.pageSize)
        let returnTo = HTMLFragment(escaping: "/city/\(city.slug)")
        var section = BoardSection(
            feedHref: "/city/\(city.slug)/feed.atom", canPost: context.user != nil, composerText: composer?.text ?? "",
            composerError: composer?.error,
            posts: shown.map { presenter.view($0, returnTo: returnTo) })
        if posts.count > BoardQueries.pageSize, let last = shown.last { section.olderHref = "/city/\(city.slug)?before=\(last.id)#board" }
        if before != nil { section.newestHref = "/city/\(city.slug)#board" }
        return section
    }

    func presenter(_ context: AppContext) -> PostPresenter {
        let language = context.language
        return PostPresenter(viewer: context.user, csrfToken: HTMLFragment(escaping: context.csrfToken), language: language, now: clock(),
                             strings: { key, arguments in pages.string(key, language, arguments) },
                             reasonOptions: context.user == nil ? HTMLFragment([]) : reasonOptions[language] ?? HTMLFragment([]),
                             relativeTimes: relativeTimes[language] ?? PostPresenter.RelativeTimes { pages.string($0, language) })
    }
}

/// Posting, editing and deleting posts, and the board's Atom feed.
struct BoardController {
    let pages: Pages
    let database: AppDatabase
    let cities: CitiesController
    let board: BoardView
    let limits: AppConfiguration.Limits
    let versions: PageVersions
    let clock: @Sendable () -> Date

    func addRoutes(to router: Router<AppContext>) {
        router.post("/city/{slug}/posts", create)
        router.get("/city/{slug}/feed.atom", feed)
        router.get("/posts/{id}/edit", showEdit)
        router.post("/posts/{id}/edit", edit)
        router.post("/posts/{id}/delete", delete)
    }

    /// The body as stored: trimmed, NFC; or the key of what is wrong with it.
    static func normalise(_ text: String?) -> Result<String, BodyProblem> {
        let body = (text ?? "").replacingOccurrences(of: "\r\n", with: "\n").trimmingCharacters(in: .whitespacesAndNewlines)
            .precomposedStringWithCanonicalMapping
        if body.isEmpty { return .failure(BodyProblem(key: "error_post_empty")) }
        if let problem = TextPolicy.post.problem(body) { return .failure(BodyProblem(key: problem.key(lengthKey: "error_post_long"))) }
        return .success(body)
    }

    struct BodyProblem: Error { let key: String }

    /// The longest text a refused form gives back (the limit is 500).
    static let echoLimit = 600

    /// The form of a body the duplicate rule compares: case and runs of white space do not make
    /// two posts different.
    static func duplicateKey(_ body: String) -> String {
        body.lowercased().split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
    }

    func create(_ request: Request, _ context: AppContext) throws -> Response {
        guard let city = cities.index.city(slug: request.parameters["slug"] ?? "") else { throw HTTPError(.notFound) }
        let user = try context.requireActiveUser()
        // What comes back in the box is at most a little over the limit: a refused megabyte is not echoed.
        let typed = String((context.form["body"] ?? "").unicodeScalars.prefix(Self.echoLimit))
        func refuse(_ key: String, _ arguments: [String: String] = [:], status: HTTPStatus = .unprocessableContent) throws -> Response {
            try cities.page(city, context, before: nil, composer: Composer(text: typed, error: pages.string(key, context.language, arguments)),
                            status: status)
        }
        let body: String
        switch Self.normalise(typed) {
        case .success(let text): body = text
        case .failure(let problem): return try refuse(problem.key)
        }
        let now = clock().timeIntervalSince1970
        // The checks and the insert share one write transaction, so two quick posts cannot both pass.
        let refusal: (String, [String: String])? = try database.pool.write { db in
            let last = try Double.fetchOne(db, sql: "SELECT max(created_at) FROM posts WHERE user_id = ?", arguments: [user.id])
            if let last, now - last < Double(limits.secondsBetweenPosts) {
                return ("error_post_too_fast", ["n": String(Int((Double(limits.secondsBetweenPosts) - (now - last)).rounded(.up)))])
            }
            let today = try Int.fetchOne(db, sql: "SELECT count(*) FROM posts WHERE user_id = ? AND created_at > ?",
                                         arguments: [user.id, now - 86400]) ?? 0
            if today >= limits.postsPerDay { return ("error_post_daily", ["n": String(limits.postsPerDay)]) }
            let recent = try String.fetchAll(db, sql: "SELECT body FROM posts WHERE user_id = ? AND created_at > ?",
                                             arguments: [user.id, now - 300])
            let key = Self.duplicateKey(body)
            if recent.contains(where: { Self.duplicateKey($0) == key }) { return ("error_post_duplicate", [:]) }
            try db.execute(sql: "INSERT INTO posts (city_id, user_id, body, created_at) VALUES (?, ?, ?, ?)",
                           arguments: [city.id, user.id, body, now])
            return nil
        }
        if let (key, arguments) = refusal {
            return try refuse(key, arguments, status: key == "error_post_duplicate" ? .unprocessableContent : .tooManyRequests)
        }
        versions.changed(.city(city.id))
        return .redirect(to: "/city/\(city.slug)#board")
    }

    /// The author's own post, or 404 (others' posts are not theirs to touch, and saying so
    /// would tell them it exists).
    private func ownPost(_ request: Request, _ context: AppContext, changing: Bool = false) throws -> PostRow {
        let user = try changing ? context.requireActiveUser() : context.requireUser()
        guard let id = Int64(request.parameters["id"] ?? ""),
              let post = try database.pool.read({ try BoardQueries.post(id: id, viewer: user, $0) }),
              post.userID == user.id else { throw HTTPError(.notFound) }
        return post
    }

    func showEdit(_ request: Request, _ context: AppContext) throws -> Response {
        let post = try ownPost(request, context)
        return editPage(post, context, text: post.body, error: nil)
    }

    private func editPage(_ post: PostRow, _ context: AppContext, text: String, error: String?, status: HTTPStatus = .ok) -> Response {
        let open = clock().timeIntervalSince(post.createdAt) < PostPresenter.editWindow
        let view = EditPostPage(layout: pages.layout(context, title: pages.string("edit_post", context.language)), postID: post.id,
                                text: text, open: open, citySlug: post.citySlug, error: error)
        return pages.html(context, status: status) { Templates.edit(view, &$0, $1) }
    }

    /// Whether people's reports of the post wait for a moderator: the author may then neither
    /// change the reported text nor delete it (and its reports) before the decision.
    private func isUnderReview(_ post: PostRow) throws -> Bool {
        try database.pool.read { db in
            try Bool.fetchOne(db, sql: "SELECT 1 FROM reports WHERE post_id = ? AND outcome = 'pending' LIMIT 1", arguments: [post.id]) ?? false
        }
    }

    func edit(_ request: Request, _ context: AppContext) throws -> Response {
        let post = try ownPost(request, context, changing: true)
        let typed = String((context.form["body"] ?? "").unicodeScalars.prefix(Self.echoLimit))
        guard clock().timeIntervalSince(post.createdAt) < PostPresenter.editWindow else {
            return editPage(post, context, text: typed, error: pages.string("error_edit_window", context.language), status: .forbidden)
        }
        guard try !isUnderReview(post) else {
            return editPage(post, context, text: typed, error: pages.string("error_under_review", context.language), status: .forbidden)
        }
        switch Self.normalise(typed) {
        case .failure(let problem):
            return editPage(post, context, text: typed, error: pages.string(problem.key, context.language), status: .unprocessableContent)
        case .success(let body):
            try database.pool.write { db in
                try db.execute(sql: "UPDATE posts SET body = ?, edited_at = ? WHERE id = ? AND user_id = ?",
                               arguments: [body, clock().timeIntervalSince1970, post.id, post.userID])
            }
            versions.changed(.city(post.cityID))
            return .redirect(to: "/city/\(post.citySlug)#post-\(post.id)")
        }
    }

    func delete(_ request: Request, _ context: AppContext) throws -> Response {
        let post = try ownPost(request, context)
        guard try !isUnderReview(post) else {
            throw HTTPError(.forbidden, message: pages.string("error_under_review", context.language))
        }
        try database.pool.write { db in
            try db.execute(sql: "DELETE FROM posts WHERE id = ? AND user_id = ?", arguments: [post.id, post.userID])
        }
        versions.changed(.city(post.cityID))
        return .redirect(to: "/city/\(post.citySlug)#board")
    }

    /// `GET /city/{slug}/feed.atom`: the board's visible posts for whoever asks (with their session).
    func feed(_ request: Request, _ context: AppContext) throws -> Response {
        guard let city = cities.index.city(slug: request.parameters["slug"] ?? "") else { throw HTTPError(.notFound) }
        let posts = try database.pool.read { db in try BoardQueries.board(cityID: city.id, viewer: context.user, before: nil, db) }
        let host = request.headers["Host"].flatMap { $0.allSatisfy { $0.isLetter || $0.isNumber || ".-:[]".contains($0) } ? $0 : nil } ?? "localhost"
        let base = "http://\(host)"
        let entries = posts.filter { $0.reportedByViewerAt == nil }.map { post in
            FeedView.Entry(id: "tag:weatherboard,2026:post/\(post.id)", title: String(post.body.prefix(60)),
                           author: post.displayName ?? pages.string("deleted_user", context.language),
                           published: DateFormatting.iso8601(post.createdAt), updated: DateFormatting.iso8601(post.editedAt ?? post.createdAt),
                           link: "\(base)/city/\(city.slug)#post-\(post.id)", body: post.body)
        }
        let updated = posts.map { $0.editedAt ?? $0.createdAt }.max() ?? Date(timeIntervalSince1970: 0)
        let view = FeedView(id: "tag:weatherboard,2026:city/\(city.slug)",
                            title: pages.string("feed_title", context.language, ["city": city.name(context.language)]),
                            updated: DateFormatting.iso8601(updated), selfHref: "\(base)/city/\(city.slug)/feed.atom",
                            alternate: "\(base)/city/\(city.slug)", entries: entries)
        let bytes = pages.renderer.page(context.language) { Templates.feed(view, &$0, $1) }
        return Response(headers: HTTPHeaders([("Content-Type", "application/atom+xml; charset=utf-8")]), body: bytes)
    }
}

/// The page for editing one's post.
struct EditPostPage {
    var layout: LayoutView
    var postID: Int64
    var text: String
    var open: Bool
    var citySlug: String
    var error: String?
}

/// A board's Atom feed.
struct FeedView {
    struct Entry {
        var id: String
        var title: String
        var author: String
        var published: String
        var updated: String
        var link: String
        var body: String
    }

    var id: String
    var title: String
    var updated: String
    var selfHref: String
    var alternate: String
    var entries: [Entry]
}
