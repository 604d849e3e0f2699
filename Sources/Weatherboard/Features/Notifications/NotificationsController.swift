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
        Response(status: .ok, headers: HTTPHeaders([("Content-Type", "application/json"), ("Cache-Control", "no-store")]),
                 body: Array(#"{"unread":\#(context.user == nil ? 0 : context.unreadNotices)}"#.utf8))
    }

    func list(_ request: Request, _ context: AppContext) throws -> Response {
        let user = try context.requireUser()
        let before = try request.queryCursor("before")
        let language = context.language
        let now = clock()
        let notices = try store.open(userID: user.id, before: before, now: now)
        let shown = notices.prefix(NotificationStore.pageSize)
        var layout = pages.layout(context, title: pages.string("notifications", language))
        layout.currentUser?.unread = 0 // read now
        let relativeTimes = board.relativeTimes(language)
        var page = NotificationsPage(layout: layout, items: shown.map { notice in
            let city = language == .ko ? (notice.cityNameKo ?? notice.cityNameEn) : notice.cityNameEn
            let who = notice.actorDisplayName ?? pages.string("deleted_user", language)
            let text: String = switch notice.kind {
            case .reply: pages.string("notice_reply", language, ["user": who, "city": city])
            case .mention: pages.string("notice_mention", language, ["user": who, "city": city])
            case .reaction: notice.people == 1 ? pages.string("notice_reaction_one", language, ["city": city])
                : pages.string("notice_reaction_many", language, ["n": String(notice.people), "city": city])
            case .reportDecided: pages.string("notice_report_decided", language, ["city": city])
            case .removed: pages.string("notice_removed", language, ["city": city])
            case .restored: pages.string("notice_restored", language, ["city": city])
            }
            return NotificationsPage.Item(id: notice.id, kind: notice.kind.rawValue, text: text, excerpt: notice.excerpt, href: notice.href,
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
