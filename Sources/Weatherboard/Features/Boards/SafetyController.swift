import Foundation
import HTTPServer

/// Profiles, blocking and reporting: the tools people use to shape what they read.
struct SafetyController {
    let pages: Pages
    let store: BoardStore
    let database: AppDatabase
    let board: BoardView
    let limits: SiteLimits
    let clock: @Sendable () -> Date

    func addRoutes(to router: Router<AppContext>) {
        router.get("/users/{username}", profile)
        router.post("/users/{username}/block", block)
        router.post("/users/{username}/unblock", unblock)
        router.post("/users/{username}/mute", mute)
        router.post("/users/{username}/unmute", unmute)
        router.get("/posts/{id}/report", showReport)
        router.post("/posts/{id}/report", report)
        router.post("/posts/{id}/report/withdraw", withdraw)
        router.get("/settings/reports", myReports)
    }

    /// `GET /users/{username}`: display name, join date, recent posts as the viewer may see them.
    func profile(_ request: Request, _ context: AppContext) throws -> Response {
        let person = try User.named(request, in: database)
        let viewer = context.user
        let (posts, blockedByMe, mute, level) = try store.profile(of: person.id, viewer: viewer, now: clock())
        let presenter = board.presenter(context, muted: mute == nil ? [] : [person.id])
        let isMe = viewer?.id == person.id
        let returnTo = HTMLFragment(escaping: "/users/\(person.username)")
        let language = context.language
        var view = ProfilePage(
            layout: pages.layout(context, title: person.displayName), username: person.username, displayName: person.displayName,
            joined: DateFormatting.string(person.createdAt, style: .long, language: language), blockedByMe: blockedByMe,
            canBlock: viewer != nil && !isMe && !person.isAdmin && !person.isSite && !blockedByMe,
            posts: blockedByMe ? [] : posts.map { presenter.view($0, returnTo: returnTo) })
        view.level = level
        // The site's own account earns no standing: it says what it is instead.
        view.isSite = person.isSite
        view.levelText = person.isSite ? pages.string("profile_site_account", language)
            : pages.string("profile_level", language, ["n": String(level), "name": pages.string("level_\(level)", language)])
        if let mute {
            view.mutedNotice = mute.until.map {
                pages.string("you_muted_until", language, ["date": DateFormatting.string($0, style: .long, language: language)])
            } ?? pages.string("you_muted", language)
        } else if viewer != nil && !isMe && !person.isAdmin && !person.isSite && !blockedByMe {
            view.muteDurations = MuteDuration.allCases.map {
                SelectOption(value: $0.rawValue, label: pages.string("mute_for_\($0.rawValue)", language))
            }
        }
        return pages.html(context) { Templates.profile(view, &$0, $1) }
    }

    /// `POST /users/{username}/mute` (`duration`: `day`, `week`, `always`): their posts and
    /// replies come collapsed to the reader, who hears nothing from them, for that long.
    func mute(_ request: Request, _ context: AppContext) throws -> Response {
        let user = try context.requireActiveUser()
        let target = try User.named(request, in: database)
        guard target.id != user.id else { throw HTTPError(.badRequest, message: "You cannot mute yourself.") }
        guard !target.isAdmin else { throw HTTPError(.forbidden, message: "Moderators cannot be muted.") }
        guard !target.isSite else { throw HTTPError(.forbidden, message: "The site's own posts cannot be muted.") }
        guard let duration = MuteDuration(rawValue: context.form["duration"] ?? "") else {
            throw HTTPError(.unprocessableContent, message: "Choose how long: a day, a week, or until you unmute.")
        }
        try store.mute(target.id, by: user.id, for: duration, now: clock())
        context.nextFlash = Flash(.muted, username: target.username)
        return .redirect(to: context.returnPath(or: "/users/\(target.username)"))
    }

    func unmute(_ request: Request, _ context: AppContext) throws -> Response {
        let user = try context.requireUser()
        let target = try User.named(request, in: database)
        try store.unmute(target.id, by: user.id)
        context.nextFlash = Flash(.unmuted, username: target.username)
        return .redirect(to: context.returnPath(or: "/users/\(target.username)"))
    }

    func block(_ request: Request, _ context: AppContext) throws -> Response {
        let user = try context.requireActiveUser()
        let target = try User.named(request, in: database)
        guard target.id != user.id else { throw HTTPError(.badRequest, message: "You cannot block yourself.") }
        guard !target.isAdmin else { throw HTTPError(.forbidden, message: "Moderators cannot be blocked.") }
        guard !target.isSite else { throw HTTPError(.forbidden, message: "The site's own posts cannot be blocked.") }
        try store.block(target.id, by: user.id, now: clock())
        context.nextFlash = Flash(.blocked, username: target.username)
        return .redirect(to: context.returnPath(or: "/users/\(target.username)"))
    }

    func unblock(_ request: Request, _ context: AppContext) throws -> Response {
        let user = try context.requireUser()
        let target = try User.named(request, in: database)
        try store.unblock(target.id, by: user.id)
        context.nextFlash = Flash(.unblocked, username: target.username)
        return .redirect(to: context.returnPath(or: "/users/\(target.username)"))
    }

    /// `POST /posts/{id}/report`: one report per person per post; the threshold-crossing report
    /// hides the post for everyone but its author and admins, in the same transaction.
    func report(_ request: Request, _ context: AppContext) throws -> Response {
        let user = try context.requireActiveUser()
        let id = try request.idParameter()
        let (post, alreadyReported) = try store.postToReport(id: id, reporter: user)
        if alreadyReported { // a second report is a friendly no-op, even once the post is hidden
            return .redirect(to: context.returnPath(or: "/") + "#post-\(id)")
        }
        guard let post else { throw HTTPError(.notFound) }
        let returnTo = context.returnPath(or: "/city/\(post.citySlug)")
        guard post.userID != user.id else { throw HTTPError(.badRequest, message: "You cannot report your own post.") }
        let typedReason = context.form["reason"] ?? ""
        let typedDetail = TextPolicy.reportDetail.typed(context.form["detail"])
        // A refused report comes back as its form, with the message and what was chosen and typed.
        func refuse(_ key: String) -> Response {
            reportPage(post, context, returnTo: returnTo, reason: typedReason, detail: typedDetail.text,
                       error: pages.string(key, context.language), status: .unprocessableContent)
        }
        guard let reason = ReportReason(rawValue: typedReason) else { return refuse("error_report_reason") }
        let detail: String
        switch TextPolicy.reportDetail.normalise(typedDetail) {
        case .success(let text): detail = text
        case .failure(let problem): return refuse(problem.key(lengthKey: "error_report_detail_long"))
        }
        guard reason != .other || !detail.isEmpty else { return refuse("error_report_other_detail") }
        let now = clock().timeIntervalSince1970
        do {
            try store.report(post, by: user.id, reason: reason.rawValue, detail: detail, now: now,
                             perDay: limits.reportsPerDay, threshold: limits.reportThreshold)
        } catch let refused as BoardStore.TooManyReports {
            throw HTTPError(.tooManyRequests, message: "At most \(refused.perDay) reports a day.",
                            headers: HTTPHeaders([("Retry-After", "3600")]))
        }
        context.nextFlash = Flash(.reported)
        return .redirect(to: returnTo + "#post-\(post.id)")
    }

    /// `GET /posts/{id}/report`: the report form on a page of its own (for a browser without the
    /// post's menu, and where a refused report comes back).
    func showReport(_ request: Request, _ context: AppContext) throws -> Response {
        let user = try context.requireActiveUser()
        let id = try request.idParameter()
        guard let post = try store.post(id: id, viewer: user), post.userID != user.id
        else { throw HTTPError(.notFound) }
        let returnTo = safeReturnPath((try request.queryItems())["return_to"] ?? "/city/\(post.citySlug)")
        return reportPage(post, context, returnTo: returnTo, reason: "", detail: "", error: nil)
    }

    private func reportPage(_ post: PostRow, _ context: AppContext, returnTo: String, reason: String, detail: String,
                            error: String?, status: HTTPStatus = .ok) -> Response {
        let language = context.language
        let view = ReportPage(
            layout: pages.layout(context, title: pages.string("report", language)), postID: post.id, body: post.body,
            returnTo: returnTo, detail: detail, error: error,
            reasons: ReportReason.allCases.map {
                SelectOption(value: $0.rawValue, label: pages.string("reason_\($0.rawValue)", language), selected: $0.rawValue == reason)
            })
        return pages.html(context, status: status) { Templates.report(view, &$0, $1) }
    }

    func withdraw(_ request: Request, _ context: AppContext) throws -> Response {
        let user = try context.requireUser()
        let id = try request.idParameter()
        let now = clock().timeIntervalSince1970
        let city: (id: Int64, slug: String)?
        do {
            city = try store.withdraw(postID: id, reporterID: user.id, now: now, threshold: limits.reportThreshold)
        } catch is BoardStore.WithdrawalClosed {
            throw HTTPError(.forbidden, message: "Reports can be withdrawn for 10 minutes.")
        }
        guard let city else { throw HTTPError(.notFound) }
        context.nextFlash = Flash(.reportWithdrawn)
        return .redirect(to: context.returnPath(or: "/city/\(city.slug)") + "#post-\(id)")
    }

    /// `GET /settings/reports`: what I reported and what became of it.
    func myReports(_ request: Request, _ context: AppContext) throws -> Response {
        let user = try context.requireUser()
        let language = context.language
        let reports = try store.reports(by: user.id).map { report in
            MyReportsPage.Report(postID: report.postID, reason: pages.string("reason_\(report.reason)", language),
                                 outcome: report.outcome, outcomeText: pages.string("outcome_\(report.outcome)", language),
                                 excerpt: String(report.body.prefix(80)), citySlug: report.citySlug)
        }
        let view = MyReportsPage(layout: pages.layout(context, title: pages.string("my_reports", language)), reports: reports)
        return pages.html(context) { Templates.my_reports(view, &$0, $1) }
    }
}

/// A person's profile.
/// The report form on its own page.
struct ReportPage {
    var layout: LayoutView
    var postID: Int64
    var body: String
    var returnTo: String
    var detail: String
    var error: String?
    var reasons: [SelectOption]
    /// No reason chosen yet: the placeholder is selected (none is chosen for the reporter).
    var noneChosen: Bool { !reasons.contains { $0.selected } }
}

struct ProfilePage {
    var layout: LayoutView
    var username: String
    var displayName: String
    var joined: String
    var blockedByMe: Bool
    var canBlock: Bool
    var posts: [PostView]
    var hasPosts: Bool { !posts.isEmpty }
    /// Their standing (`Standing`): `data-level`, and "Level 1 · Member".
    var level = 0
    var levelText = ""
    /// The site's own account (`data-site`): no level shown.
    var isSite = false
    /// "You muted them until 3 December" (with Unmute), or the durations to mute them for.
    var mutedNotice: String?
    var muteDurations: [SelectOption] = []
    var canMute: Bool { !muteDurations.isEmpty }
}

/// What the signed-in person reported, and what became of it.
struct MyReportsPage {
    struct Report {
        var postID: Int64
        var reason: String
        var outcome: String
        var outcomeText: String
        var excerpt: String
        var citySlug: String
    }

    var layout: LayoutView
    var reports: [Report]
    var hasReports: Bool { !reports.isEmpty }
}
