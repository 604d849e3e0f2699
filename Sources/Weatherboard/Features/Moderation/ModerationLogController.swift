import Foundation
import HTTPServer

/// The moderation log (`/admin/log`): every decision, newest first, filtered by admin and action.
struct ModerationLogController {
    let area: AdminArea
    var pages: Pages { area.pages }
    var store: ModerationStore { area.store }

    func addRoutes(to admin: RouteGroup<AppContext>) {
        admin.get("/log", log)
        admin.post("/log/{id}/undo", undo)
    }

    /// `POST /admin/log/{id}/undo` with `reason`: a removal, a ban, or "remove everything and
    /// ban" taken back from its log entry (issue 45 #6); the undo is logged with its reason.
    func undo(_ request: Request, _ context: AppContext) throws -> Response {
        let admin = try context.requireUser()
        let entryID = try request.idParameter()
        let reason = area.reason(context, required: true)
        if let key = reason.problem {
            throw HTTPError(.unprocessableContent, message: pages.string(key, context.language))
        }
        switch try store.undo(entryID: entryID, by: admin, reason: reason.text, now: area.clock()) {
        case .restored: context.nextFlash = Flash(.postRestored)
        case .lifted: context.nextFlash = Flash(.banUndone)
        case .nothing: context.nextFlash = Flash(.nothingToUndo)
        }
        return .redirect(to: "/admin/log")
    }

    /// `GET /admin/log?admin=&action=&page=`: every decision, newest first.
    func log(_ request: Request, _ context: AppContext) throws -> Response {
        let query = try request.queryItems()
        let adminFilter = query["admin"].flatMap { $0.isEmpty ? nil : $0 }
        let actionFilter = query["action"].flatMap { ["restore", "remove", "ban", "unban"].contains($0) ? $0 : nil }
        let page = try request.queryNumber("page", default: 1, in: AdminArea.pages)
        let size = 50
        let language = context.language
        let rows = try store.log(admin: adminFilter, action: actionFilter, limit: size + 1, offset: (page - 1) * size).map { entry in
            AdminLogPage.Entry(id: entry.id, undoable: entry.action == "remove" || entry.action == "ban", admin: entry.admin, action: entry.action, actionText: pages.string("action_\(entry.action)", language),
                               postID: entry.postID, username: entry.username, citySlug: entry.citySlug,
                               cityName: language == .ko ? (entry.cityNameKo ?? entry.cityNameEn) : entry.cityNameEn,
                               excerpt: entry.excerpt.map { $0.count < ModerationStore.excerptLength ? $0 : $0 + "…" }, reason: entry.reason,
                               at: AdminArea.moment(entry.createdAt, language))
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
}
