import Foundation
import HTTPServer

/// `GET /notifications`: what a member was told, newest first; opening it reads them.
struct NotificationsController {
    let pages: Pages
    let store: NotificationStore
    let board: BoardView
    let clock: @Sendable () -> Date

    func addRoutes(to router: Router<AppContext>) {
        router.get("/notifications", list)
        router.get("/notifications/unread", unread)
    }

    /// The unread count as JSON, for an open page told by its event stream that it changed.
    func unread(_ request: Request, _ context: AppContext) throws -> Response {
        .json(["unread": context.user == nil ? 0 : context.unreadNotices])
    }

    func list(_ request: Request, _ context: AppContext) throws -> Response {
        let user = try context.requireUser()
        let before = try request.queryCursor("before")
        let language = context.language
        let now = clock()
        // Opened from another site (a link there, `Sec-Fetch-Site: cross-site` or `same-site`):
        // shown, but nothing is marked read, as a GET from elsewhere changes nothing.
        let fromElsewhere = ["cross-site", "same-site"].contains(request.headers["Sec-Fetch-Site"] ?? "")
        let notices = try store.open(userID: user.id, before: before, now: now, marksRead: !fromElsewhere)
        let shown = notices.prefix(NotificationStore.pageSize)
        var layout = pages.layout(context, title: pages.string("notifications", language))
        if !fromElsewhere { layout.currentUser?.unread = 0 } // read now
        let relativeTimes = board.relativeTimes(language)
        var page = NotificationsPage(layout: layout, items: shown.map { notice in
            NotificationsPage.Item(id: notice.id, kind: notice.kind.rawValue, text: notice.text(pages, language), excerpt: notice.excerpt, href: notice.href,
                                          unread: notice.unread, datetime: DateFormatting.iso8601(Date(timeIntervalSince1970: notice.createdAt)),
                                          when: PostPresenter.relativeTime(Date(timeIntervalSince1970: notice.createdAt), now: now, relativeTimes))
        })
        if notices.count > NotificationStore.pageSize, let last = shown.last { page.olderHref = "/notifications?before=\(last.id)" }
        if before != nil { page.newestHref = "/notifications" }
        return pages.html(context) { Templates.notifications(page, &$0, $1) }
    }
}

/// A member's notifications.
struct NotificationsPage {
    struct Item {
        var id: Int64
        var kind: String
        var text: String
        var excerpt: String
        var href: String
        var unread: Bool
        var datetime: String
        var when: String
    }

    var layout: LayoutView
    var items: [Item]
    var hasItems: Bool { !items.isEmpty }
    var olderHref: String?
    var newestHref: String?
}
