import Foundation
import HTTPServer
import Logging

/// Posting, editing and deleting posts, and the board's Atom feed.
struct BoardController {
    let pages: Pages
    let store: BoardStore
    let index: CityIndex
    let rules: PostingRules
    /// Turns an attached photo into what the site keeps (nil: photos are not taken).
    let photos: PhotoProcessor
    let clock: @Sendable () -> Date
    /// `--public-url`: the feed's absolute links. Without it (development) the request's `Host`,
    /// if it is a plain host name, as the node cannot know the address people use.
    var publicURL: String? = nil
    /// Where a form given back on database trouble is logged with its cause.
    let logger: Logger
    /// The city page with the post form given back (the text as typed, why it was refused).
    /// The page is the city page's to compose (`CityPageController`); the application hands it here.
    let cityPageWithComposer: @Sendable (City, AppContext, Composer, HTTPStatus) throws -> Response

    func addRoutes(to router: Router<AppContext>) {
        router.post("/city/{slug}/posts", create)
        router.get("/city/{slug}/feed.atom", feed)
        router.get("/posts/{id}/edit", showEdit)
        router.post("/posts/{id}/edit", edit)
        router.get("/posts/{id}/delete", confirmDelete)
        router.post("/posts/{id}/delete", delete)
    }

    func create(_ request: Request, _ context: AppContext) throws -> Response {
        let city = try index.city(named: request)
        let user = try context.requireActiveUser()
        // What comes back in the box is at most a few times the limit: a refused megabyte is not echoed.
        let typed = TextPolicy.post.typed(context.form["body"])
        // At most a word each comes back (they are only ever one of the listed values).
        let (skyTyped, feelsTyped) = (context.form["sky"].map { String($0.prefix(16)) }, context.form["feels"].map { String($0.prefix(16)) })
        let altTyped = TextPolicy.photoAlt.typed(context.form["photo_alt"])
        func refuse(_ refusal: PostingRules.Refusal) throws -> Response {
            // Sent again (a double click, a retry after a timeout): it is saved; show it.
            if let existing = refusal.duplicateOf {
                context.nextFlash = Flash(.postAlreadySaved)
                return .redirect(to: "/city/\(city.slug)#post-\(existing)")
            }
            var response = try cityPageWithComposer(city, context, Composer(text: typed.text, error: pages.string(refusal.key, context.language, refusal.arguments),
                                                                            sky: skyTyped, feels: feelsTyped, photoAlt: altTyped.text),
                                                    refusal.status)
            if refusal.status == .serviceUnavailable { response.headers.set("Retry-After", "30") }
            return response
        }
        guard let observation = try? Observation(sky: skyTyped, feels: feelsTyped) else {
            return try refuse(PostingRules.Refusal(key: "error_observation"))
        }
        let body: String
        switch PostingRules.normalise(typed) {
        case .success(let text): body = text
        case .failure(let refusal): return try refuse(refusal)
        }
        var photo: NewPhoto?
        if let upload = context.files.named("photo") {
            let alt: String
            switch TextPolicy.photoAlt.normalise(altTyped) {
            case .success(let text): alt = text
            case .failure(let problem): return try refuse(PostingRules.Refusal(key: problem.key(lengthKey: "error_photo_alt_long")))
            }
            // Every cheap refusal before the decode (0.4-0.7 s of CPU for a large picture; issue 61
            // #2): the pace, the day, the same post sent again, the day's photos, then the day's decodes.
            let now = clock().timeIntervalSince1970
            if let refusal = try store.refusalBeforeWork(cityID: city.id, userID: user.id, body: body, now: now, rules: rules) {
                return try refuse(refusal)
            }
            if try store.database.readStatement({ try PhotoQueries.postedTheirDay(user.id, limits: rules.photoLimits, now: now, $0) }) {
                return try refuse(PhotoRefusal.dailyLimit.posting)
            }
            let decodes = RateLimit(limit: rules.photoLimits.perDay * 3, window: 86_400)
            do {
                try store.database.write(.subjects) { try decodes.hit("photo-decode:\(user.id)", now: clock(), $0) }
            } catch let limited as HTTPError where limited.status == .tooManyRequests {
                return try refuse(PhotoRefusal.tooManyTries.posting)
            }
            switch photos.process(upload.bytes, for: user.id) {
            case .success(let processed): photo = NewPhoto(photo: processed, alt: alt)
            case .failure(let refusal): return try refuse(refusal.posting)
            }
        }
        let now = clock().timeIntervalSince1970
        let saved: Int64
        do {
            switch try store.create(cityID: city.id, userID: user.id, body: body, observation: observation, photo: photo, now: now, rules: rules) {
            case .failure(let refusal): return try refuse(refusal)
            case .success(let id): saved = id
            }
        } catch let error as SQLError where error.isTemporary {
            // If the page can still be read (a full disk); else the error page says to come back.
            return try ErrorPages.formKept(after: error, request, logger: logger) { key, status in try refuse(PostingRules.Refusal(key: key, status: status)) }
        }
        // Said, and the page opens at the new post (board.js puts the message there and focuses it).
        context.nextFlash = Flash(.posted)
        return .redirect(to: "/city/\(city.slug)#post-\(saved)")
    }

    /// The author's own post, or 404 (others' posts are not theirs to touch, and saying so
    /// would tell them it exists).
    private func ownPost(_ request: Request, _ context: AppContext, changing: Bool = false) throws -> PostRow {
        let user = try changing ? context.requireActiveUser() : context.requireUser()
        let id = try request.idParameter()
        guard let post = try store.post(id: id, viewer: user),
              post.userID == user.id else { throw HTTPError(.notFound) }
        return post
    }

    func showEdit(_ request: Request, _ context: AppContext) throws -> Response {
        let post = try ownPost(request, context)
        return editPage(post, context, text: post.body, error: nil)
    }

    private func editPage(_ post: PostRow, _ context: AppContext, text: String, error: String?, status: HTTPStatus = .ok) -> Response {
        let now = clock()
        let open = PostingRules.canEdit(postedAt: post.createdAt, now: now)
        let view = EditPostPage(layout: pages.layout(context, title: pages.string("edit_post", context.language)), postID: post.id,
                                text: text, open: open,
                                timeLeft: pages.string("edit_time_left", context.language,
                                                       ["n": String(PostingRules.editMinutesLeft(postedAt: post.createdAt, now: now))]),
                                backHref: post.placeHref, error: error)
        return pages.html(context, status: status) { Templates.edit(view, &$0, $1) }
    }

    func edit(_ request: Request, _ context: AppContext) throws -> Response {
        let post = try ownPost(request, context, changing: true)
        let typed = TextPolicy.post.typed(context.form["body"])
        guard PostingRules.canEdit(postedAt: post.createdAt, now: clock()) else {
            return editPage(post, context, text: typed.text, error: pages.string("error_edit_window", context.language), status: .forbidden)
        }
        switch PostingRules.normalise(typed) {
        case .failure(let refusal):
            return editPage(post, context, text: typed.text, error: pages.string(refusal.key, context.language), status: refusal.status)
        case .success(let body):
            do {
                try store.edit(postID: post.id, authorID: post.userID, body: body, now: clock())
            } catch is BoardStore.UnderReview {
                return editPage(post, context, text: typed.text, error: pages.string("error_under_review", context.language), status: .forbidden)
            }
            context.nextFlash = Flash(.postEdited)
            return .redirect(to: post.placeHref)
        }
    }

    /// `GET /posts/{id}/delete`: asks first (the post's Delete leads here).
    func confirmDelete(_ request: Request, _ context: AppContext) throws -> Response {
        let post = try ownPost(request, context)
        let language = context.language
        // Replies go with the post they answer: say how many, everyone's.
        let replies = try store.replyCount(of: post.id)
        let view = ConfirmPage(layout: pages.layout(context, title: pages.string("confirm_heading", language)),
                               heading: pages.string("confirm_heading", language), quote: post.body,
                               details: replies == 0 ? [] : [.init(text: pages.string("confirm_delete_replies", language, ["n": String(replies)]))],
                               question: pages.string("confirm_delete_post", language), action: "/posts/\(post.id)/delete",
                               button: pages.string("delete", language), cancelHref: post.placeHref)
        return pages.html(context) { Templates.confirm(view, &$0, $1) }
    }

    func delete(_ request: Request, _ context: AppContext) throws -> Response {
        let post = try ownPost(request, context)
        do {
            try store.delete(postID: post.id, authorID: post.userID)
        } catch is BoardStore.UnderReview {
            throw HTTPError(.forbidden, message: pages.string("error_under_review", context.language))
        }
        context.nextFlash = Flash(.postDeleted)
        return .redirect(to: post.parentID.map { "/posts/\($0)#replies" } ?? "/city/\(post.citySlug)#board")
    }

    /// `GET /city/{slug}/feed.atom`: the board's visible posts for whoever asks (with their session).
    func feed(_ request: Request, _ context: AppContext) throws -> Response {
        let city = try index.city(named: request)
        let posts = try store.board(cityID: city.id, viewer: context.user, before: nil)
        let base: String
        if let publicURL, !publicURL.isEmpty {
            base = publicURL.hasSuffix("/") ? String(publicURL.dropLast()) : publicURL
        } else {
            let host = request.headers["Host"].flatMap { $0.allSatisfy { $0.isLetter || $0.isNumber || ".-:[]".contains($0) } ? $0 : nil } ?? "localhost"
            base = "http://\(host)"
        }
        let entries = posts.filter { $0.reportedByViewerAt == nil }.map { post in
            FeedView.Entry(id: "tag:weatherboard,2026:post/\(post.id)", title: String(post.body.prefix(60)),
                           author: post.displayName ?? pages.string("deleted_user", context.language),
                           published: DateFormatting.iso8601(post.createdAt), updated: DateFormatting.iso8601(post.editedAt ?? post.createdAt),
                           link: "\(base)/posts/\(post.id)", body: post.body)
        }
        // An empty board's feed is as new as the request (not 1970).
        let updated = posts.map { $0.editedAt ?? $0.createdAt }.max() ?? clock()
        let view = FeedView(id: "tag:weatherboard,2026:city/\(city.slug)",
                            title: pages.string("feed_title", context.language, ["city": city.name(context.language)]),
                            updated: DateFormatting.iso8601(updated), selfHref: "\(base)/city/\(city.slug)/feed.atom",
                            alternate: "\(base)/city/\(city.slug)", entries: entries)
        var feed = Response(headers: HTTPHeaders([("Content-Type", "application/atom+xml; charset=utf-8")]))
        feed.bodyParts = pages.renderer.page(context.language) { Templates.feed(view, &$0, $1) }.body
        return feed
    }
}

/// The page for editing one's post.
struct EditPostPage {
    var layout: LayoutView
    var postID: Int64
    var text: String
    var open: Bool
    /// "You can edit this post for 12 more minutes."
    var timeLeft: String
    /// Where the post is shown: its board, or, for a reply, its conversation.
    var backHref: String
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
