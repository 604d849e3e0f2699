import Foundation
import HTTPServer
import Logging

/// The conversation under a post: its own page, replies and "agree" reactions.
struct ConversationController {
    let pages: Pages
    let store: BoardStore
    let board: BoardView
    let rules: PostingRules
    /// Reaction toggles one person may make (each one changes the board's kept page).
    let reactionLimit: RateLimit
    let clock: @Sendable () -> Date
    /// Where a form given back on database trouble is logged with its cause.
    let logger: Logger
    let sharedReplies: SharedReplies

    func addRoutes(to router: Router<AppContext>) {
        router.get("/posts/{id}", show)
        router.get("/posts/{id}/replies", newReplies)
        router.get("/shared/cities/{city}/replies/{id}", sharedReply)
        router.post("/posts/{id}/replies", reply)
        router.post("/posts/{id}/react", react)
    }

    /// `GET /posts/{id}`: the post, its replies oldest first (`?after=` pages on), the reply
    /// form. A reply's address leads to its place on its post's page.
    func show(_ request: Request, _ context: AppContext) throws -> Response {
        let after = try request.queryCursor("after")
        return try page(postID: try request.idParameter(), after: after, context, composer: nil)
    }

    /// `GET /posts/{id}/replies?after=`: the replies after one as a fragment, for an open page's
    /// live.js to put under the post (issue 46 #1). A render is a function of the rows as this
    /// reader may see them and of the reader as the presenter sees them: kept under exactly
    /// that (`SharedReplies`), so the thousands of readers with no part in a new reply share one.
    func newReplies(_ request: Request, _ context: AppContext) throws -> Response {
        let postID = try request.idParameter()
        let after = try request.queryCursor("after")
        guard let found = try store.conversation(postID: postID, viewer: context.user, after: after), found.post.parentID == nil
        else { throw HTTPError(.notFound) }
        let shown = Array(found.replies.prefix(BoardQueries.repliesPageSize))
        let user = context.user
        let muted = try user.map { try store.mutedIDs(by: $0.id, now: clock()) } ?? []
        let authors = Set(shown.compactMap(\.userID))
        let reader = Reader(context, owns: user.map { authors.contains($0.id) } ?? false, muted: muted.intersection(authors))
        let language = context.language
        let key = SharedReplies.Key(post: postID, rows: shown, reader: reader, language: language)
        let now = clock()
        let fragment = sharedReplies.fragment(key, now: now) {
            repliesFragment(shown, under: postID, as: reader, language, now: now)
        }
        return .html(fragment.bytes)
    }

    /// Replies as `reader` sees them, as the fragment live.js puts under their post, with the
    /// moment the clock alone would change them (`ClockReading`).
    private func repliesFragment(_ replies: [PostRow], under postID: Int64, as reader: Reader, _ language: Language,
                                 now: Date) -> (HTMLFragment, until: Date) {
        let reading = ClockReading(now)
        let presenter = board.presenter(reader, language, clock: reading)
        let returnTo = HTMLFragment(escaping: "/posts/\(postID)")
        let view = RepliesFragment(replies: replies.map { presenter.view($0, returnTo: returnTo) })
        return (pages.renderer.fragment(language, capacity: min(replies.count, 4) * 4 * 1024) { Templates.replies_fragment(view, &$0, $1) },
                until: reading.changesAt)
    }

    /// `GET /shared/cities/{city}/replies/{id}` (`?as=member`): one new reply as everyone with no
    /// part in it sees it, for an open page that heard of it (issue 46 #1: thousands of pages
    /// fetch each reply of a storm). The same for every guest, and for every member whose forms
    /// need no token and who neither wrote it nor moderates (live.js asks for their own form
    /// otherwise): so it reads no session, and is kept under the board's version, rendered once
    /// per language and kind of reader until the city's board changes.
    func sharedReply(_ request: Request, _ context: AppContext) throws -> Response {
        guard let raw = request.parameters["city"], let cityID = Int64(raw), String(cityID) == raw else { throw HTTPError(.notFound) }
        let replyID = try request.idParameter(), member = try request.queryItems()["as"] == "member"
        let language = context.language, now = clock()
        let key = SharedReplies.One(city: cityID, reply: replyID, member: member, language: language)
        let kept = try sharedReplies.one(key, now: now) {
            guard let reply = try store.sharedReply(replyID), reply.cityID == cityID, let postID = reply.parentID else { return nil }
            return repliesFragment([reply], under: postID, as: .bystander(signedIn: member), language, now: now)
        }
        guard let kept else { throw HTTPError(.notFound) }
        return kept.response(for: request)
    }

    /// A post hidden only because the reader blocked its author: said, with the way to unblock
    /// (which comes back here), rather than "page not found".
    private func hiddenByBlock(postID: Int64, author: (username: String, displayName: String), _ context: AppContext) -> Response {
        let language = context.language
        let heading = pages.string("post_hidden_blocked", language, ["user": author.displayName])
        let view = ConfirmPage(layout: pages.layout(context, title: heading), heading: heading,
                               details: [.init(text: pages.string("post_hidden_blocked_help", language))],
                               question: "", action: "/users/\(author.username)/unblock",
                               fields: [.init(name: "return_to", value: "/posts/\(postID)")],
                               button: pages.string("unblock", language), buttonClass: "secondary", cancelHref: "/")
        return pages.html(context) { Templates.confirm(view, &$0, $1) }
    }

    /// The post's page, with the reply form given back (the text as typed, why it was refused).
    private func page(postID: Int64, after: Int64?, _ context: AppContext, composer: Composer?, status: HTTPStatus = .ok) throws -> Response {
        let position = board.livePosition(.conversation(postID))
        guard let found = try store.conversation(postID: postID, viewer: context.user, after: after) else {
            if let viewer = context.user, let author = try store.blockedAuthor(ofPost: postID, viewer: viewer.id) {
                return hiddenByBlock(postID: postID, author: author, context)
            }
            throw HTTPError(.notFound)
        }
        if found.post.parentID != nil { return .redirect(to: found.post.href, status: .found) }
        let post = found.post
        let language = context.language
        let presenter = board.presenter(context, muted: try store.mutedIDs(by: context.user?.id, now: clock()))
        let returnTo = HTMLFragment(escaping: "/posts/\(postID)" + (after.map { "?after=\($0)" } ?? ""))
        let shown = found.replies.prefix(BoardQueries.repliesPageSize)
        let view = presenter.view(post, replies: [], count: found.count, returnTo: returnTo)
        view.canReply = false // the page's own form below
        view.repliesText = presenter.replyPhrases.summary(found.count, shown: found.count) // all of them are here
        let cityName = language == .ko ? (post.cityNameKo ?? post.cityNameEn) : post.cityNameEn
        // Removed, or hidden by reports (its author still sees it): closed but to a moderator.
        let open = post.removedAt == nil && (post.hiddenAt == nil || context.user?.isAdmin == true)
        let blocked = try context.user.map { $0.isAdmin ? false : try store.isBlocked($0.id, by: post.userID) } ?? false
        let replies = shown.map { presenter.view($0, returnTo: returnTo) }
        if !open { for reply in replies { reply.canReact = false } }
        var page = PostPage(
            layout: pages.layout(context, title: pages.string("post_page_title", language, ["city": cityName])),
            cityName: cityName, cityHref: "/city/\(post.citySlug)#post-\(post.id)", post: view,
            replies: replies, repliesHeading: view.repliesText ?? "",
            isOpen: open && !blocked,
            closedText: pages.string(blocked ? "error_replies_blocked" : post.removedAt != nil ? "error_replies_closed" : "error_replies_hidden", language),
            canReply: open && !blocked && context.user != nil, composerText: composer?.text ?? "", composerError: composer?.error,
            isGuest: context.user == nil, livePosition: position)
        if found.replies.count > BoardQueries.repliesPageSize, let last = shown.last { page.laterHref = "/posts/\(postID)?after=\(last.id)#replies" }
        if after != nil { page.firstHref = "/posts/\(postID)#replies" }
        return pages.html(context, status: status) { Templates.post_page(page, &$0, $1) }
    }

    /// `POST /posts/{id}/replies` (field `body`): a reply to the post, from its page or from the
    /// small form under it on a board. Refused replies come back on the post's page with the text.
    func reply(_ request: Request, _ context: AppContext) throws -> Response {
        let user = try context.requireActiveUser()
        let id = try request.idParameter()
        // The post as the replier sees it: one they cannot see takes no reply from them.
        guard let post = try store.post(id: id, viewer: user, removed: .all) else { throw HTTPError(.notFound) }
        let parentID = post.parentID ?? post.id
        let typed = TextPolicy.post.typed(context.form["body"])
        func refuse(_ key: String, _ status: HTTPStatus, _ arguments: [String: String] = [:]) throws -> Response {
            try page(postID: parentID, after: nil, context,
                     composer: Composer(text: typed.text, error: pages.string(key, context.language, arguments)), status: status)
        }
        if post.removedAt != nil { return try refuse("error_replies_closed", .conflict) }
        let body: String
        switch PostingRules.normalise(typed) {
        case .success(let text): body = text
        case .failure(let refusal): return try refuse(refusal.key, refusal.status, refusal.arguments)
        }
        do {
            switch try store.reply(to: id, userID: user.id, moderator: user.isAdmin, body: body, now: clock().timeIntervalSince1970,
                                   rules: rules) {
            case .success(let saved):
                return .redirect(to: context.returnPath(or: "/posts/\(saved.parentID)") + "#post-\(saved.id)")
            case .failure(let refusal):
                if let existing = refusal.duplicateOf {
                    context.nextFlash = Flash(.postAlreadySaved)
                    return .redirect(to: PostRow.href(id: existing, parentID: parentID))
                }
                return try refuse(refusal.key, refusal.status, refusal.arguments)
            }
        } catch let closed as BoardStore.RepliesClosed {
            return try refuse(closed.hidden ? "error_replies_hidden" : "error_replies_closed", .conflict)
        } catch is BoardStore.BlockedByAuthor {
            return try refuse("error_replies_blocked", .forbidden)
        } catch let error as SQLError where error.isTemporary {
            return try ErrorPages.formKept(after: error, request, logger: logger) { key, status in try refuse(key, status) }
        }
    }

    /// `POST /posts/{id}/react`: agrees with a post or reply, or takes it back.
    func react(_ request: Request, _ context: AppContext) throws -> Response {
        let user = try context.requireActiveUser()
        let id = try request.idParameter()
        guard let post = try store.post(id: id, viewer: user) else { throw HTTPError(.notFound) }
        let outcome: (agrees: Bool, count: Int)
        do {
            outcome = try store.toggleReaction(postID: id, userID: user.id, moderator: user.isAdmin, now: clock(), limit: reactionLimit)
        } catch is BoardStore.OwnPost {
            throw HTTPError(.forbidden, message: pages.string("error_own_reaction", context.language))
        }
        // board.js changes the button in place: no reload, the reader's place kept.
        if request.asksForJSON { return .json(["agreed": outcome.agrees, "count": outcome.count]) }
        return .redirect(to: context.returnPath(or: post.parentID.map { "/posts/\($0)" } ?? "/posts/\(id)") + "#post-\(id)")
    }
}

/// New replies, as a fragment (`replies_fragment.mustache`).
struct RepliesFragment {
    var replies: [PostView]
}

/// A post's own page.
struct PostPage {
    var layout: LayoutView
    var cityName: String
    var cityHref: String
    var post: PostView
    var replies: [PostView]
    var hasReplies: Bool { !replies.isEmpty }
    var repliesHeading: String
    /// Not removed: it takes replies.
    var isOpen: Bool
    /// Why it takes no replies, when it does not (removed, or hidden by reports).
    var closedText: String
    var canReply: Bool
    var composerText: String
    /// What was typed, when the form is not there to give it back in (the conversation closed
    /// or the author blocked the replier): shown to copy, so that nothing typed is lost.
    var keptText: String? { composerText.isEmpty ? nil : composerText }
    var composerError: String?
    var isGuest: Bool
    /// The live stream's position taken before the conversation was read (`data-live-position`).
    var livePosition: String
    var laterHref: String?
    var firstHref: String?
}
