import Foundation
import HTTPServer

/// The report queue (`/admin`), and removing or restoring the posts in it.
struct ModerationQueueController {
    let area: AdminArea
    var pages: Pages { area.pages }
    var store: ModerationStore { area.store }
    var clock: @Sendable () -> Date { area.clock }

    func addRoutes(to admin: RouteGroup<AppContext>) {
        admin.get("/", queue)
        admin.post("/posts/{id}/restore", restore)
        admin.get("/posts/{id}/remove", confirmRemove)
        admin.post("/posts/{id}/remove", remove)
        admin.post("/posts/{id}/pin", pin)
        admin.post("/posts/{id}/unpin", unpin)
        admin.post("/posts/{id}/photo/approve", approvePhoto)
        admin.post("/posts/{id}/photo/remove", removePhoto)
    }

    /// `POST /admin/posts/{id}/photo/approve`: the photo is shown to everyone.
    func approvePhoto(_ request: Request, _ context: AppContext) throws -> Response {
        let admin = try context.requireUser()
        try store.approvePhoto(try area.post(request), by: admin, now: clock())
        context.nextFlash = Flash(.photoApproved)
        return .redirect(to: context.returnPath(or: "/admin"))
    }

    /// `POST /admin/posts/{id}/photo/remove`: the photo goes (the post stays), and the same picture is refused again.
    func removePhoto(_ request: Request, _ context: AppContext) throws -> Response {
        let admin = try context.requireUser()
        let hash = try store.removePhoto(try area.post(request), by: admin, now: clock())
        area.forgetPhoto(hash)
        context.nextFlash = Flash(.photoRemoved)
        return .redirect(to: context.returnPath(or: "/admin"))
    }

    /// `POST /admin/posts/{id}/pin` with `duration` (1d, 7d, 30d, permanent): the post leads its
    /// board for everyone until then (issue 45 #4).
    func pin(_ request: Request, _ context: AppContext) throws -> Response {
        let post = try area.post(request)
        guard let duration = AdminArea.durations[context.form["duration"] ?? ""] else {
            throw HTTPError(.unprocessableContent, message: "duration must be 1d, 7d, 30d or permanent")
        }
        let now = clock()
        // "Permanently": until unpinned (a date no clock reaches, kept as a number both engines store).
        try store.pin(post, until: duration.map { now.addingTimeInterval($0) } ?? Date(timeIntervalSince1970: 1e12), now: now)
        return .redirect(to: context.returnPath(or: "/posts/\(post.id)"))
    }

    func unpin(_ request: Request, _ context: AppContext) throws -> Response {
        let post = try area.post(request)
        try store.unpin(post)
        return .redirect(to: context.returnPath(or: "/posts/\(post.id)"))
    }

    func queue(_ request: Request, _ context: AppContext) throws -> Response {
        let page = try request.queryNumber("page", default: 1, in: AdminArea.pages)
        return try queuePage(context, page: page, problem: nil)
    }

    /// A refused action comes back to the queue with its message and the typed reason.
    struct Problem {
        let postID: Int64?
        let username: String?
        let message: String
        let reason: String
    }

    func queuePage(_ context: AppContext, page: Int, problem: Problem?, status: HTTPStatus = .ok) throws -> Response {
        let language = context.language
        let queue = try store.queue(limit: AdminArea.pageSize + 1, offset: (page - 1) * AdminArea.pageSize, now: clock())
        let shown = queue.posts.prefix(AdminArea.pageSize)
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
                                          detail: report.detail, at: AdminArea.moment(report.createdAt, language))
                }
                var group = AdminQueuePage.Group(
                    id: id, body: row.body, isHidden: row.isHidden, author: row.username,
                    authorName: row.displayName ?? pages.string("deleted_user", language), citySlug: row.citySlug,
                    cityName: language == .ko ? (row.cityNameKo ?? row.cityNameEn) : row.cityNameEn,
                    reporters: row.reporters, firstReport: AdminArea.moment(row.firstReport, language),
                    lastReport: AdminArea.moment(row.lastReport, language), reasons: reasons, details: details)
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
                                  signals: signals, durations: AdminArea.durationOptions(pages, language))
        view.formProof = AdminArea.formProof(context)
        view.reasonPresets = AdminArea.removalPresets(pages, language)
        if page > 1 { view.newerHref = "/admin?page=\(page - 1)" }
        if groups.count == AdminArea.pageSize { view.olderHref = "/admin?page=\(page + 1)" }
        if let problem, problem.postID == nil { view.problem = problem.message }
        view.photos = try store.photosWaiting().map { waiting in
            AdminQueuePage.WaitingPhoto(postID: waiting.postID, hash: waiting.hash, src: PhotoVariant.small.path(waiting.hash),
                                        alt: waiting.alt.isEmpty ? pages.string("photo_alt_default", language, ["name": waiting.author ?? "", "time": ""]) : waiting.alt,
                                        why: pages.string(waiting.state == .reported ? "queue_photo_reported" : "queue_photo_new_member", language),
                                        author: waiting.author, citySlug: waiting.citySlug, body: waiting.body)
        }
        return pages.html(context, status: status) { Templates.admin_queue(view, &$0, $1) }
    }

    /// A stored instant as moderation pages show it: readable, and machine-readable beside it.
    /// "24 posts in 2 min · 23 reported · banned now".
    func authorHistory(_ history: ModerationStore.AuthorHistory, _ language: Language) -> String {
        let spanText = pages.span(history.lastPost - history.firstPost, language)
        var text = pages.string("admin_history", language, ["posts": String(history.posts), "span": spanText, "reported": String(history.reported)])
        if history.isBanned { text += " · " + pages.string("admin_history_banned", language) }
        return text
    }

    /// Reports resolve as "no violation"; the post shows again, and the same reporters cannot
    /// hide it again (only pending reports count towards the threshold).
    func restore(_ request: Request, _ context: AppContext) throws -> Response {
        let admin = try context.requireUser()
        let post = try area.post(request)
        let reason = area.reason(context, required: false)
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
        let post = try area.post(request)
        let query = try request.queryItems()
        let language = context.language
        let reason = AdminArea.linkedReason(query)
        let body = try store.body(ofPost: post.id)
        let view = ConfirmPage(layout: pages.layout(context, title: pages.string("confirm_heading", language)),
                               heading: pages.string("admin_remove", language),
                               warning: AdminArea.isFromOwnForm(query, context) ? nil : pages.string("confirm_prefilled_by_link", language),
                               quote: body,
                               details: [.init(text: pages.string("confirm_reason", language, ["reason": reason]))],
                               question: pages.string("confirm_remove_post", language), action: "/admin/posts/\(post.id)/remove",
                               fields: [.init(name: "reason", value: reason)], button: pages.string("admin_remove", language),
                               cancelHref: "/admin")
        return pages.html(context) { Templates.confirm(view, &$0, $1) }
    }

    func remove(_ request: Request, _ context: AppContext) throws -> Response {
        let admin = try context.requireUser()
        let post = try area.post(request)
        let reason = area.reason(context, required: true)
        if let key = reason.problem {
            return try queuePage(context, page: 1, problem: Problem(postID: post.id, username: nil,
                                                                   message: pages.string(key, context.language), reason: reason.text),
                                 status: .unprocessableContent)
        }
        try store.remove(post, by: admin, reason: reason.text, now: clock())
        context.nextFlash = Flash(.postRemoved)
        return .redirect(to: "/admin")
    }
}
