import Foundation
import HTTPServer

/// People (`/admin/users/{username}`): an admin's look at one, and banning, unbanning, or
/// removing everything of theirs and banning them.
struct AdminPeopleController {
    let area: AdminArea
    /// Where a refused ban from a queue card comes back to.
    let queue: ModerationQueueController
    var pages: Pages { area.pages }
    var store: ModerationStore { area.store }
    var database: AppDatabase { area.database }
    var clock: @Sendable () -> Date { area.clock }

    func addRoutes(to admin: RouteGroup<AppContext>) {
        admin.get("/users/{username}", lookUp)
        admin.get("/users/{username}/ban", confirmBan)
        admin.post("/users/{username}/ban", ban)
        admin.post("/users/{username}/unban", unban)
        admin.post("/users/{username}/level", setLevel)
        admin.get("/users/{username}/purge", confirmPurge)
        admin.post("/users/{username}/purge", purge)
    }

    /// What a ban (alone, or with a purge) takes from its form: the reason as typed and the end,
    /// or the catalog key of what is wrong (oneself, an admin, an unlisted duration, no reason).
    private func banTerms(of target: User, by admin: User, _ context: AppContext) -> (reason: AdminArea.TypedReason, until: Date?, problem: String?) {
        let reason = area.reason(context, required: true)
        let now = clock()
        let duration = AdminArea.durations[context.form["duration"] ?? ""]
        let problem = target.id == admin.id ? "error_ban_self"
            : target.isAdmin ? "error_ban_admin"
            : duration == nil ? "error_ban_duration"
            : reason.problem
        return (reason, duration.flatMap { $0.map { now.addingTimeInterval($0) } }, problem)
    }

    /// `GET /admin/users/{username}/ban?duration=&reason=&post_id=&return_to=`: asks first.
    func confirmBan(_ request: Request, _ context: AppContext) throws -> Response {
        let target = try User.named(request, in: database)
        let query = try request.queryItems()
        let language = context.language
        let duration = query["duration"] ?? ""
        let reason = AdminArea.linkedReason(query)
        let fields = ["duration", "post_id", "return_to"].compactMap { name in query[name].map { ConfirmPage.Field(name: name, value: $0) } }
            + [ConfirmPage.Field(name: "reason", value: reason)]
        // The post the ban is about, quoted, so that a ban is never confirmed blind.
        let quote = try Int64(query["post_id"] ?? "").flatMap { try store.body(ofPost: $0, by: target.id) }
        let view = ConfirmPage(layout: pages.layout(context, title: pages.string("confirm_heading", language)),
                               heading: pages.string("admin_ban", language),
                               warning: AdminArea.isFromOwnForm(query, context) ? nil : pages.string("confirm_prefilled_by_link", language),
                               quote: quote,
                               details: AdminArea.banDetails(duration: duration, reason: reason, pages, language),
                               question: pages.string("confirm_ban", language, ["user": target.displayName]),
                               action: "/admin/users/\(target.username)/ban", fields: fields, button: pages.string("admin_ban", language),
                               cancelHref: safeReturnPath(query["return_to"] ?? "/admin"))
        return pages.html(context) { Templates.confirm(view, &$0, $1) }
    }

    func ban(_ request: Request, _ context: AppContext) throws -> Response {
        let admin = try context.requireUser()
        let target = try User.named(request, in: database)
        let postID = Int64(context.form["post_id"] ?? "")
        let terms = banTerms(of: target, by: admin, context)
        if let key = terms.problem {
            return try queue.queuePage(context, page: 1, problem: ModerationQueueController.Problem(postID: postID, username: target.username,
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
        let reason = AdminArea.linkedReason(query)
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
        details += AdminArea.banDetails(duration: duration, reason: reason, pages, language)
        let view = ConfirmPage(layout: pages.layout(context, title: pages.string("confirm_heading", language)),
                               heading: pages.string("admin_purge", language),
                               warning: AdminArea.isFromOwnForm(query, context) ? nil : pages.string("confirm_prefilled_by_link", language),
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
        let reason = area.reason(context, required: true)
        if let key = reason.problem {
            return try lookUpPage(target, context, problem: pages.string(key, context.language), status: .unprocessableContent)
        }
        try store.unban(target, by: admin, reason: reason.text, now: clock())
        context.nextFlash = Flash(.unbanned, username: target.username)
        return .redirect(to: "/admin/users/\(target.username)")
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
        AdminUserPage.BanEntry(reason: ban.reason, from: AdminArea.moment(ban.createdAt, language).text,
                               until: ban.until.map { AdminArea.moment($0, language).text } ?? pages.string("duration_permanent", language),
                               lifted: ban.liftedAt.map { AdminArea.moment($0, language).text })
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
                                 canBan: !person.isAdmin && person.id != context.user?.id, durations: AdminArea.durationOptions(pages, language),
                                 bans: bans, posts: record.posts, made: made, received: received)
        view.problem = problem
        view.formProof = AdminArea.formProof(context)
        view.reasonPresets = AdminArea.removalPresets(pages, language)
        let standing = try database.readStatement { try Standing.stored(id, $0) }
        view.level = standing.level
        view.levelText = pages.string("profile_level", language, ["n": String(standing.level), "name": pages.string("level_\(standing.level)", language)])
            + " · " + pages.string(standing.set == nil ? "admin_level_earned" : "admin_level_set", language)
        if !person.isAdmin {
            view.levelChoices = [SelectOption(value: "earned", label: pages.string("admin_level_as_earned", language), selected: standing.set == nil)]
                + (0...2).map { SelectOption(value: String($0), label: pages.string("level_\($0)", language), selected: standing.set == $0) }
        }
        return pages.html(context, status: status) { Templates.admin_user(view, &$0, $1) }
    }

    /// `POST /admin/users/{username}/level` (`level`: 0, 1, 2 or `earned`; `reason`): a level set
    /// by hand holds until a moderator gives it back to what is earned; logged.
    func setLevel(_ request: Request, _ context: AppContext) throws -> Response {
        let admin = try context.requireUser()
        let target = try User.named(request, in: database)
        let typed = context.form["level"] ?? ""
        let level = Int(typed).flatMap { (0...2).contains($0) ? $0 : nil }
        let reason = area.reason(context, required: true)
        let problem = target.isAdmin ? "error_level_admin" : (level == nil && typed != "earned") ? "error_level_choice" : reason.problem
        if let problem {
            return try lookUpPage(target, context, problem: pages.string(problem, context.language), status: .unprocessableContent)
        }
        try store.setLevel(of: target, to: level, by: admin, reason: reason.text, now: clock())
        context.nextFlash = Flash(.levelSet, username: target.username)
        return .redirect(to: "/admin/users/\(target.username)")
    }
}
