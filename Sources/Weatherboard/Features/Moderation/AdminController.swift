import Foundation
import HTTPServer

/// The admin area: every route sits in one group behind `requireAdmin`, so a new route cannot
/// forget the check. Signed-out visitors are sent to sign in; signed-in non-admins get a 404
/// (the area is not advertised).
struct AdminController {
    let pages: Pages
    let store: ModerationStore
    let database: AppDatabase
    let clock: @Sendable () -> Date
    static let pageSize = 20
    /// Page numbers the admin lists accept: far past any real list, and small enough that no
    /// offset computed from them can overflow.
    static let pages = 1...100_000
    static let durations: [String: TimeInterval?] = ["1d": 86400, "7d": 7 * 86400, "30d": 30 * 86400, "permanent": nil]

    static func requireAdmin(_ request: Request, _ context: AppContext, _ next: Router<AppContext>.Handler) throws -> Response {
        let user = try context.requireUser()
        guard user.isAdmin else { throw HTTPError(.notFound) }
        return try next(request, context)
    }

    func addRoutes(to router: Router<AppContext>) {
        let admin = router.group("/admin", middleware: [Self.requireAdmin])
        admin.get("/", queue)
        admin.get("/log", log)
        admin.get("/users/{username}", lookUp)
        admin.post("/posts/{id}/restore", restore)
        admin.get("/posts/{id}/remove", confirmRemove)
        admin.post("/posts/{id}/remove", remove)
        admin.get("/users/{username}/ban", confirmBan)
        admin.post("/users/{username}/ban", ban)
        admin.post("/users/{username}/unban", unban)
        admin.get("/users/{username}/purge", confirmPurge)
        admin.post("/users/{username}/purge", purge)
    }

    // MARK: - Queue

    func queue(_ request: Request, _ context: AppContext) throws -> Response {
        let page = try request.queryNumber("page", default: 1, in: Self.pages)
        return try queuePage(context, page: page, problem: nil)
    }

    /// A refused action comes back to the queue with its message and the typed reason.
    struct Problem {
        let postID: Int64?
        let username: String?
        let message: String
        let reason: String
    }

    private func queuePage(_ context: AppContext, page: Int, problem: Problem?, status: HTTPStatus = .ok) throws -> Response {
        let language = context.language
        let queue = try store.queue(limit: Self.pageSize + 1, offset: (page - 1) * Self.pageSize, now: clock())
        let shown = queue.posts.prefix(Self.pageSize)
        let reports = queue.reports
        let groups = shown.map { row -> AdminQueuePage.Group in
                let id = row.id
                let pending = reports[id] ?? []
                var counts: [String: Int] = [:]
                for report in pending { counts[report.reason, default: 0] += 1 }
                // Most frequent reason first; ties in a fixed order.
                let reasons = counts.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.map {
                    AdminQueuePage.ReasonCount(reason: pages.string("reason_\($0.key)", language), count: $0.value)
                }
                let details = pending.map { report in
                    AdminQueuePage.Detail(reporter: report.username ?? pages.string("deleted_user", language),
                                          reason: pages.string("reason_\(report.reason)", language),
                                          detail: report.detail, at: Self.moment(report.createdAt, language))
                }
                var group = AdminQueuePage.Group(
                    id: id, body: row.body, isHidden: row.isHidden, author: row.username,
                    authorName: row.displayName ?? pages.string("deleted_user", language), citySlug: row.citySlug,
                    cityName: language == .ko ? (row.cityNameKo ?? row.cityNameEn) : row.cityNameEn,
                    reporters: row.reporters, firstReport: Self.moment(row.firstReport, language),
                    lastReport: Self.moment(row.lastReport, language), reasons: reasons, details: details)
                if let parentID = row.parentID { group.parent = AdminQueuePage.Parent(id: parentID, body: row.parentBody ?? "") }
                if let history = row.userID.flatMap({ queue.histories[$0] }) { group.history = authorHistory(history, language) }
                if let problem, problem.postID == id {
                    group.problem = problem.message
                    group.typedReason = problem.reason
                }
                return group
            }
        let signals = queue.signals.map { AdminQueuePage.Signal(username: $0.username, displayName: $0.displayName, count: $0.count) }
        var view = AdminQueuePage(layout: pages.layout(context, title: pages.string("admin_queue", language)), groups: groups,
                                  signals: signals, durations: Self.durationOptions(pages, language))
        view.formProof = Self.formProof(context)
        view.reasonPresets = Self.removalPresets(pages, language)
        if page > 1 { view.newerHref = "/admin?page=\(page - 1)" }
        if groups.count == Self.pageSize { view.olderHref = "/admin?page=\(page + 1)" }
        if let problem, problem.postID == nil { view.problem = problem.message }
        return pages.html(context, status: status) { Templates.admin_queue(view, &$0, $1) }
    }

    /// What the moderation pages' GET forms (remove, ban) carry so that their confirmation can
    /// tell them from a link someone else made: derived from the admin's CSRF secret (a digest,
    /// so the URL it travels in never holds the secret itself). A link without it still opens the
    /// confirmation, with a warning first and the post the action is about.
    static func formProof(_ context: AppContext) -> String {
        String(Tokens.digest("moderation-form|" + context.csrfSecret).prefix(32))
    }

    private static func isFromOwnForm(_ query: URLEncodedForm, _ context: AppContext) -> Bool {
        constantTimeEquals(Array((query["from"] ?? "").utf8), Array(formProof(context).utf8))
    }

    /// The reasons offered for removing (an admin may type another).
    static func removalPresets(_ pages: Pages, _ language: Language) -> [String] {
        [ReportReason.spam, .harassment, .off_topic].map { pages.string("reason_\($0.rawValue)", language) }
    }

    static func durationOptions(_ pages: Pages, _ language: Language) -> [SelectOption] {
        ["1d", "7d", "30d", "permanent"].map { SelectOption(value: $0, label: pages.string("duration_\($0)", language)) }
    }

    /// A stored instant as moderation pages show it: readable, and machine-readable beside it.
    /// "24 posts in 2 min · 23 reported · banned now".
    func authorHistory(_ history: ModerationStore.AuthorHistory, _ language: Language) -> String {
        // Clamped before the conversions: stored times far apart (or not numbers) cannot trap.
        let span = min(1e12, max(0, history.lastPost - history.firstPost))
        let spanText = span < 3600 ? pages.string("span_minutes", language, ["n": String(max(1, Int(span / 60)))])
            : span < 172_800 ? pages.string("span_hours", language, ["n": String(Int(span / 3600))])
            : pages.string("span_days", language, ["n": String(Int(span / 86_400))])
        var text = pages.string("admin_history", language, ["posts": String(history.posts), "span": spanText, "reported": String(history.reported)])
        if history.isBanned { text += " · " + pages.string("admin_history_banned", language) }
        return text
    }

    static func moment(_ seconds: Double?, _ language: Language) -> Moment {
        guard let seconds else { return Moment(iso: "", text: "") }
        return Moment(Date(timeIntervalSince1970: seconds), language)
    }

    // MARK: - Actions

    /// A moderator's reason: as it will be stored, or as typed (at most the limit) with the
    /// catalog key of what is wrong with it.
    private struct TypedReason {
        var text: String
        var problem: String?
    }

    /// What a ban (alone, or with a purge) takes from its form: the reason as typed and the end,
    /// or the catalog key of what is wrong (oneself, an admin, an unlisted duration, no reason).
    private func banTerms(of target: User, by admin: User, _ context: AppContext) -> (reason: TypedReason, until: Date?, problem: String?) {
        let reason = reason(context, required: true)
        let now = clock()
        let duration = Self.durations[context.form["duration"] ?? ""]
        let problem = target.id == admin.id ? "error_ban_self"
            : target.isAdmin ? "error_ban_admin"
            : duration == nil ? "error_ban_duration"
            : reason.problem
        return (reason, duration.flatMap { $0.map { now.addingTimeInterval($0) } }, problem)
    }

    /// A ban's confirm page lines: how long, and why.
    private static func banDetails(duration: String, reason: String, _ pages: Pages, _ language: Language) -> [ConfirmPage.Detail] {
        [.init(text: pages.string("confirm_duration", language,
                                  ["duration": durations.keys.contains(duration) ? pages.string("duration_\(duration)", language) : "–"])),
         .init(text: pages.string("confirm_reason", language, ["reason": reason]))]
    }

    private func reason(_ context: AppContext, required: Bool) -> TypedReason {
        let policy = TextPolicy.moderationReason
        let typed = policy.typed(context.form["reason"])
        switch policy.normalise(typed) {
        case .success(let text):
            return TypedReason(text: text, problem: required && text.isEmpty ? "error_reason_required" : nil)
        case .failure(let problem):
            return TypedReason(text: typed.text, problem: problem.key(lengthKey: "error_reason_long"))
        }
    }

    /// A reason a link filled in (the confirmation pages), cut like a typed one.
    private static func linkedReason(_ query: URLEncodedForm) -> String {
        TextPolicy.moderationReason.typed(query["reason"]).text
    }

    private func post(_ request: Request) throws -> ModerationStore.ModeratedPost {
        guard let post = try store.post(id: try request.idParameter()) else { throw HTTPError(.notFound) }
        return post
    }

    /// Reports resolve as "no violation"; the post shows again, and the same reporters cannot
    /// hide it again (only pending reports count towards the threshold).
    func restore(_ request: Request, _ context: AppContext) throws -> Response {
        let admin = try context.requireUser()
        let post = try post(request)
        let reason = reason(context, required: false)
        if let key = reason.problem {
            return try queuePage(context, page: 1, problem: Problem(postID: post.id, username: nil, message: pages.string(key, context.language),
                                                                   reason: ""), status: .unprocessableContent)
        }
        try store.restore(post, by: admin, reason: reason.text, now: clock())
        context.nextFlash = Flash(.postRestored)
        return .redirect(to: "/admin")
    }

    /// `GET /admin/posts/{id}/remove?reason=`: asks first, with the reason as typed.
    func confirmRemove(_ request: Request, _ context: AppContext) throws -> Response {
        let post = try post(request)
        let query = try request.queryItems()
        let language = context.language
        let reason = Self.linkedReason(query)
        let body = try store.body(ofPost: post.id)
        let view = ConfirmPage(layout: pages.layout(context, title: pages.string("confirm_heading", language)),
                               heading: pages.string("admin_remove", language),
                               warning: Self.isFromOwnForm(query, context) ? nil : pages.string("confirm_prefilled_by_link", language),
                               quote: body,
                               details: [.init(text: pages.string("confirm_reason", language, ["reason": reason]))],
                               question: pages.string("confirm_remove_post", language), action: "/admin/posts/\(post.id)/remove",
                               fields: [.init(name: "reason", value: reason)], button: pages.string("admin_remove", language),
                               cancelHref: "/admin")
        return pages.html(context) { Templates.confirm(view, &$0, $1) }
    }

    /// `GET /admin/users/{username}/ban?duration=&reason=&post_id=&return_to=`: asks first.
    func confirmBan(_ request: Request, _ context: AppContext) throws -> Response {
        let target = try User.named(request, in: database)
        let query = try request.queryItems()
        let language = context.language
        let duration = query["duration"] ?? ""
        let reason = Self.linkedReason(query)
        let fields = ["duration", "post_id", "return_to"].compactMap { name in query[name].map { ConfirmPage.Field(name: name, value: $0) } }
            + [ConfirmPage.Field(name: "reason", value: reason)]
        // The post the ban is about, quoted, so that a ban is never confirmed blind.
        let quote = try Int64(query["post_id"] ?? "").flatMap { try store.body(ofPost: $0, by: target.id) }
        let view = ConfirmPage(layout: pages.layout(context, title: pages.string("confirm_heading", language)),
                               heading: pages.string("admin_ban", language),
                               warning: Self.isFromOwnForm(query, context) ? nil : pages.string("confirm_prefilled_by_link", language),
                               quote: quote,
                               details: Self.banDetails(duration: duration, reason: reason, pages, language),
                               question: pages.string("confirm_ban", language, ["user": target.displayName]),
                               action: "/admin/users/\(target.username)/ban", fields: fields, button: pages.string("admin_ban", language),
                               cancelHref: safeReturnPath(query["return_to"] ?? "/admin"))
        return pages.html(context) { Templates.confirm(view, &$0, $1) }
    }

    func remove(_ request: Request, _ context: AppContext) throws -> Response {
        let admin = try context.requireUser()
        let post = try post(request)
        let reason = reason(context, required: true)
        if let key = reason.problem {
            return try queuePage(context, page: 1, problem: Problem(postID: post.id, username: nil,
                                                                   message: pages.string(key, context.language), reason: reason.text),
                                 status: .unprocessableContent)
        }
        try store.remove(post, by: admin, reason: reason.text, now: clock())
        context.nextFlash = Flash(.postRemoved)
        return .redirect(to: "/admin")
    }

    func ban(_ request: Request, _ context: AppContext) throws -> Response {
        let admin = try context.requireUser()
        let target = try User.named(request, in: database)
        let postID = Int64(context.form["post_id"] ?? "")
        let terms = banTerms(of: target, by: admin, context)
        if let key = terms.problem {
            return try queuePage(context, page: 1, problem: Problem(postID: postID, username: target.username,
                                                                   message: pages.string(key, context.language), reason: terms.reason.text),
                                 status: .unprocessableContent)
        }
        try store.ban(target, by: admin, reason: terms.reason.text, until: terms.until, postID: postID, now: clock())
        context.nextFlash = Flash(.banned, username: target.username)
        return .redirect(to: context.returnPath(or: "/admin"))
    }

    /// `GET /admin/users/{username}/purge?duration=&reason=&return_to=`: "remove everything and
    /// ban" asks first, saying how many posts and replies will go, and from which boards.
    func confirmPurge(_ request: Request, _ context: AppContext) throws -> Response {
        let target = try User.named(request, in: database)
        let query = try request.queryItems()
        let language = context.language
        let duration = query["duration"] ?? ""
        let reason = Self.linkedReason(query)
        let plan = try store.purgePlan(of: target)
        let fields = ["duration", "return_to"].compactMap { name in query[name].map { ConfirmPage.Field(name: name, value: $0) } }
            + [ConfirmPage.Field(name: "reason", value: reason)]
        let places = plan.cities.map { city in
            (language == .ko ? (city.nameKo ?? city.nameEn) : city.nameEn) + " (\(city.posts))"
        }.joined(separator: ", ")
        var details: [ConfirmPage.Detail] = [
            .init(text: pages.string("confirm_purge_count", language, ["posts": String(plan.posts), "replies": String(plan.replies)])),
        ]
        if !places.isEmpty { details.append(.init(text: pages.string("confirm_purge_where", language, ["cities": places]))) }
        details += Self.banDetails(duration: duration, reason: reason, pages, language)
        let view = ConfirmPage(layout: pages.layout(context, title: pages.string("confirm_heading", language)),
                               heading: pages.string("admin_purge", language),
                               warning: Self.isFromOwnForm(query, context) ? nil : pages.string("confirm_prefilled_by_link", language),
                               details: details,
                               question: pages.string("confirm_purge", language, ["user": target.displayName]),
                               action: "/admin/users/\(target.username)/purge", fields: fields, button: pages.string("admin_purge", language),
                               cancelHref: safeReturnPath(query["return_to"] ?? "/admin/users/\(target.username)"))
        return pages.html(context) { Templates.confirm(view, &$0, $1) }
    }

    /// `POST /admin/users/{username}/purge`: every post and reply of theirs removed, their reports
    /// decided, and the ban, in one transaction.
    func purge(_ request: Request, _ context: AppContext) throws -> Response {
        let admin = try context.requireUser()
        let target = try User.named(request, in: database)
        let terms = banTerms(of: target, by: admin, context)
        if let key = terms.problem {
            return try lookUpPage(target, context, problem: pages.string(key, context.language), status: .unprocessableContent)
        }
        try store.purge(target, by: admin, reason: terms.reason.text, until: terms.until, now: clock())
        context.nextFlash = Flash(.purged, username: target.username)
        return .redirect(to: context.returnPath(or: "/admin/users/\(target.username)"))
    }

    func unban(_ request: Request, _ context: AppContext) throws -> Response {
        let admin = try context.requireUser()
        let target = try User.named(request, in: database)
        let reason = reason(context, required: true)
        if let key = reason.problem {
            return try lookUpPage(target, context, problem: pages.string(key, context.language), status: .unprocessableContent)
        }
        try store.unban(target, by: admin, reason: reason.text, now: clock())
        context.nextFlash = Flash(.unbanned, username: target.username)
        return .redirect(to: "/admin/users/\(target.username)")
    }

    // MARK: - Log and look-up

    /// `GET /admin/log?admin=&action=&page=`: every decision, newest first.
    func log(_ request: Request, _ context: AppContext) throws -> Response {
        let query = try request.queryItems()
        let adminFilter = query["admin"].flatMap { $0.isEmpty ? nil : $0 }
        let actionFilter = query["action"].flatMap { ["restore", "remove", "ban", "unban"].contains($0) ? $0 : nil }
        let page = try request.queryNumber("page", default: 1, in: Self.pages)
        let size = 50
        let language = context.language
        let rows = try store.log(admin: adminFilter, action: actionFilter, limit: size + 1, offset: (page - 1) * size).map { entry in
            AdminLogPage.Entry(admin: entry.admin, action: entry.action, actionText: pages.string("action_\(entry.action)", language),
                               postID: entry.postID, username: entry.username, citySlug: entry.citySlug,
                               cityName: language == .ko ? (entry.cityNameKo ?? entry.cityNameEn) : entry.cityNameEn,
                               excerpt: entry.excerpt.map { $0.count < ModerationStore.excerptLength ? $0 : $0 + "…" }, reason: entry.reason,
                               at: Self.moment(entry.createdAt, language))
        }
        let entries = rows.prefix(size)
        func href(_ page: Int) -> String {
            var items = ["page=\(page)"]
            if let adminFilter { items.append("admin=\(percentEncode(adminFilter))") }
            if let actionFilter { items.append("action=\(actionFilter)") }
            return "/admin/log?" + items.joined(separator: "&")
        }
        var view = AdminLogPage(
            layout: pages.layout(context, title: pages.string("admin_log", language)), adminFilter: adminFilter ?? "",
            actions: ["restore", "remove", "ban", "unban"].map {
                SelectOption(value: $0, label: pages.string("action_\($0)", language), selected: $0 == actionFilter)
            },
            entries: Array(entries))
        if rows.count > size { view.olderHref = href(page + 1) }
        if page > 1 { view.newerHref = href(page - 1) }
        return pages.html(context) { Templates.admin_log(view, &$0, $1) }
    }

    func lookUp(_ request: Request, _ context: AppContext) throws -> Response {
        do {
            return try lookUpPage(try User.named(request, in: database), context, problem: nil)
        } catch let error as HTTPError where error.status == .notFound {
            return try retiredPage(request.parameters["username"] ?? "", context) ?? { throw error }()
        }
    }

    /// A ban, or a deleted account's kept ban, as shown.
    private func banEntry(_ ban: ModerationStore.BanRecord, _ language: Language) -> AdminUserPage.BanEntry {
        AdminUserPage.BanEntry(reason: ban.reason, from: Self.moment(ban.createdAt, language).text,
                               until: ban.until.map { Self.moment($0, language).text } ?? pages.string("duration_permanent", language),
                               lifted: ban.liftedAt.map { Self.moment($0, language).text })
    }

    /// A deleted account's name: reserved, with the bans it had (kept when it was deleted).
    private func retiredPage(_ username: String, _ context: AppContext) throws -> Response? {
        let language = context.language
        let key = username.lowercased()
        let bans = try store.retiredBans(usernameKey: key)?.map { banEntry($0, language) }
        guard let bans else { return nil }
        let name = pages.string("deleted_user", language)
        let view = AdminUserPage(layout: pages.layout(context, title: name), username: key, displayName: name, blocksReceived: 0,
                                 isBanned: false, canBan: false, durations: [], bans: bans, posts: [], made: [], received: [])
        return pages.html(context) { Templates.admin_user(view, &$0, $1) }
    }

    private func lookUpPage(_ person: User, _ context: AppContext, problem: String?, status: HTTPStatus = .ok) throws -> Response {
        let language = context.language
        let id = person.id
        let record = try store.person(id, now: clock())
        let posts = record.posts.map {
            AdminUserPage.Post(id: $0.id, body: $0.body, citySlug: $0.citySlug, isHidden: $0.isHidden, isRemoved: $0.isRemoved,
                               removedReason: $0.removedReason)
        }
        func reports(_ list: [ModerationStore.Person.Report]) -> [AdminUserPage.Report] {
            list.map { AdminUserPage.Report(postID: $0.postID, other: $0.other, reason: pages.string("reason_\($0.reason)", language),
                                            outcome: pages.string("outcome_\($0.outcome)", language)) }
        }
        let made = reports(record.made), received = reports(record.received)
        let blocks = record.blocksReceived
        let bans = record.bans.map { banEntry($0, language) }
        let active = record.activeBan
        var view = AdminUserPage(layout: pages.layout(context, title: person.displayName), username: person.username,
                                 displayName: person.displayName, blocksReceived: blocks, isBanned: active != nil,
                                 banStatus: active.map { ban in
                                     ban.until.map {
                                         pages.string("admin_banned_until", language,
                                                      ["until": DateFormatting.utcMinute($0, language: language), "reason": ban.reason])
                                     } ?? pages.string("admin_banned_permanent", language, ["reason": ban.reason])
                                 },
                                 canBan: !person.isAdmin && person.id != context.user?.id, durations: Self.durationOptions(pages, language),
                                 bans: bans, posts: posts, made: made, received: received)
        view.problem = problem
        view.formProof = Self.formProof(context)
        view.reasonPresets = Self.removalPresets(pages, language)
        return pages.html(context, status: status) { Templates.admin_user(view, &$0, $1) }
    }
}
