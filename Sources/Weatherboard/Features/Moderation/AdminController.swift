import Foundation
import HTTPServer

/// The admin area: every route sits in one group behind `requireAdmin`, so a new route cannot
/// forget the check. Signed-out visitors are sent to sign in; signed-in non-admins get a 404
/// (the area is not advertised).
struct AdminController {
    let pages: Pages
    let database: AppDatabase
    let versions: PageVersions
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

    /// A reported post in the queue, with its reporters counted.
    private struct QueueRow {
        let id: Int64, body: String, isHidden: Bool, cityID: Int64, username: String?, displayName: String?
        let citySlug: String, cityNameEn: String, cityNameKo: String?, reporters: Int, firstReport: Double, lastReport: Double

        init(row: any SQLRow) {
            id = row.int64(0); body = row.string(1); isHidden = !row.isNull(2); cityID = row.int64(3)
            username = row.optionalString(4); displayName = row.optionalString(5); citySlug = row.string(6)
            cityNameEn = row.string(7); cityNameKo = row.optionalString(8); reporters = row.int(9)
            firstReport = row.double(10); lastReport = row.double(11)
        }
    }

    /// One pending report of a post in the queue.
    private struct PendingReport {
        let postID: Int64, username: String?, reason: String, detail: String, createdAt: Double
    }

    private func queuePage(_ context: AppContext, page: Int, problem: Problem?, status: HTTPStatus = .ok) throws -> Response {
        let language = context.language
        let (groups, signals) = try database.read { db -> ([AdminQueuePage.Group], [AdminQueuePage.Signal]) in
            let rows = try db.all("""
                SELECT p.id, p.body, p.hidden_at, p.city_id, u.username, u.display_name, c.slug, c.name_en, c.name_ko,
                       count(*) AS reporters, min(r.created_at) AS first_report, max(r.created_at) AS last_report
                FROM posts p
                JOIN reports r ON r.post_id = p.id AND r.outcome = 'pending'
                LEFT JOIN users u ON u.id = p.user_id
                JOIN cities c ON c.id = p.city_id
                WHERE p.removed_at IS NULL
                GROUP BY p.id, u.username, u.display_name, c.slug, c.name_en, c.name_ko
                ORDER BY reporters DESC, first_report ASC
                LIMIT ? OFFSET ?
                """, [Self.pageSize + 1, (page - 1) * Self.pageSize]) { QueueRow(row: $0) }
            // Every pending report of the page's posts in one query, grouped here (not two
            // queries per post).
            let shown = Array(rows.prefix(Self.pageSize))
            let ids = shown.map(\.id)
            var reports: [Int64: [PendingReport]] = [:]
            if !ids.isEmpty {
                let marks = Array(repeating: "?", count: ids.count).joined(separator: ", ")
                for report in try db.all("""
                    SELECT r.post_id, u.username, r.reason, r.detail, r.created_at FROM reports r LEFT JOIN users u ON u.id = r.reporter_id
                    WHERE r.post_id IN (\(marks)) AND r.outcome = 'pending' ORDER BY r.created_at
                    """, ids, { PendingReport(postID: $0.int64(0), username: $0.optionalString(1), reason: $0.string(2),
                                              detail: $0.string(3), createdAt: $0.double(4)) }) {
                    reports[report.postID, default: []].append(report)
                }
            }
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
                if let problem, problem.postID == id {
                    group.problem = problem.message
                    group.typedReason = problem.reason
                }
                return group
            }
            let signals = try db.all("""
                SELECT u.username, u.display_name, count(*) AS n FROM blocks b JOIN users u ON u.id = b.blocked_id
                GROUP BY b.blocked_id, u.username, u.display_name HAVING count(*) >= 5 ORDER BY n DESC LIMIT 50
                """) { AdminQueuePage.Signal(username: $0.string(0), displayName: $0.string(1), count: $0.int(2)) }
            return (groups, signals)
        }
        var view = AdminQueuePage(layout: pages.layout(context, title: pages.string("admin_queue", language)), groups: groups,
                                  signals: signals, durations: Self.durationOptions(pages, language))
        if page > 1 { view.newerHref = "/admin?page=\(page - 1)" }
        if groups.count == Self.pageSize { view.olderHref = "/admin?page=\(page + 1)" }
        if let problem, problem.postID == nil { view.problem = problem.message }
        return pages.html(context, status: status) { Templates.admin_queue(view, &$0, $1) }
    }

    static func durationOptions(_ pages: Pages, _ language: Language) -> [SelectOption] {
        ["1d", "7d", "30d", "permanent"].map { SelectOption(value: $0, label: pages.string("duration_\($0)", language)) }
    }

    /// A stored instant as moderation pages show it: readable, and machine-readable beside it.
    static func moment(_ seconds: Double?, _ language: Language) -> Moment {
        guard let seconds else { return Moment(iso: "", text: "") }
        let date = Date(timeIntervalSince1970: seconds)
        return Moment(iso: DateFormatting.iso8601(date), text: DateFormatting.utcMinute(date, language: language))
    }

    // MARK: - Actions

    private func reason(_ context: AppContext) -> String {
        (context.form["reason"] ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The catalog key of what is wrong with a typed reason (the text policy), or nil.
    private func reasonProblem(_ reason: String) -> String? {
        TextPolicy.moderationReason.problem(reason).map { $0.key(lengthKey: "error_reason_long") }
    }

    private func post(_ request: Request) throws -> (id: Int64, cityID: Int64, userID: Int64?, username: String?) {
        let id = try request.idParameter()
        guard let post = try database.readStatement({ try $0.one("""
                  SELECT p.id, p.city_id, p.user_id, u.username FROM posts p LEFT JOIN users u ON u.id = p.user_id WHERE p.id = ?
                  """, [id]) { (id: $0.int64(0), cityID: $0.int64(1), userID: $0.optionalInt64(2), username: $0.optionalString(3)) } })
        else { throw HTTPError(.notFound) }
        return post
    }

    private func writeLog(_ db: any SQLConnection, admin: User, action: String, postID: Int64? = nil, userID: Int64? = nil,
                          username: String? = nil, cityID: Int64? = nil, reason: String) throws {
        try db.execute("""
            INSERT INTO moderation_log (admin_id, admin_username, action, post_id, user_id, username, city_id, reason, created_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            """, admin.id, admin.username, action, postID, userID, username, cityID, reason, clock())
    }

    /// Reports resolve as "no violation"; the post shows again, and the same reporters cannot
    /// hide it again (only pending reports count towards the threshold).
    func restore(_ request: Request, _ context: AppContext) throws -> Response {
        let admin = try context.requireUser()
        let post = try post(request)
        if let key = reasonProblem(reason(context)) {
            return try queuePage(context, page: 1, problem: Problem(postID: post.id, username: nil, message: pages.string(key, context.language),
                                                                   reason: ""), status: .unprocessableContent)
        }
        let now = clock().timeIntervalSince1970
        try database.write { db in
            try db.execute("UPDATE reports SET outcome = 'no_violation', resolved_at = ? WHERE post_id = ? AND outcome = 'pending'",
                           now, post.id)
            try db.execute("UPDATE posts SET hidden_at = NULL WHERE id = ?", post.id)
            try writeLog(db, admin: admin, action: "restore", postID: post.id, userID: post.userID, username: post.username,
                         cityID: post.cityID, reason: reason(context))
        }
        versions.changed(.city(post.cityID))
        context.nextFlash = Flash(.postRestored)
        return .redirect(to: "/admin")
    }

    /// `GET /admin/posts/{id}/remove?reason=`: asks first, with the reason as typed.
    func confirmRemove(_ request: Request, _ context: AppContext) throws -> Response {
        let post = try post(request)
        let query = try request.queryItems()
        let language = context.language
        let reason = query["reason"] ?? ""
        let body = try database.readStatement { try $0.one("SELECT body FROM posts WHERE id = ?", [post.id]) { $0.string(0) } }
        let view = ConfirmPage(layout: pages.layout(context, title: pages.string("confirm_heading", language)),
                               heading: pages.string("admin_remove", language), quote: body,
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
        let fields = ["duration", "reason", "post_id", "return_to"].compactMap { name in query[name].map { ConfirmPage.Field(name: name, value: $0) } }
        let view = ConfirmPage(layout: pages.layout(context, title: pages.string("confirm_heading", language)),
                               heading: pages.string("admin_ban", language),
                               details: [.init(text: pages.string("confirm_duration", language,
                                                                  ["duration": Self.durations.keys.contains(duration) ? pages.string("duration_\(duration)", language) : "–"])),
                                         .init(text: pages.string("confirm_reason", language, ["reason": query["reason"] ?? ""]))],
                               question: pages.string("confirm_ban", language, ["user": target.displayName]),
                               action: "/admin/users/\(target.username)/ban", fields: fields, button: pages.string("admin_ban", language),
                               cancelHref: safeReturnPath(query["return_to"] ?? "/admin"))
        return pages.html(context) { Templates.confirm(view, &$0, $1) }
    }

    func remove(_ request: Request, _ context: AppContext) throws -> Response {
        let admin = try context.requireUser()
        let post = try post(request)
        let reason = reason(context)
        if let key = reason.isEmpty ? "error_reason_required" : reasonProblem(reason) {
            return try queuePage(context, page: 1, problem: Problem(postID: post.id, username: nil,
                                                                   message: pages.string(key, context.language),
                                                                   reason: String(reason.unicodeScalars.prefix(500))),
                                 status: .unprocessableContent)
        }
        let now = clock().timeIntervalSince1970
        try database.write { db in
            try db.execute("UPDATE posts SET removed_at = ?, removed_reason = ? WHERE id = ?", now, reason, post.id)
            try db.execute("UPDATE reports SET outcome = 'removed', resolved_at = ? WHERE post_id = ? AND outcome = 'pending'", now, post.id)
            try writeLog(db, admin: admin, action: "remove", postID: post.id, userID: post.userID, username: post.username,
                         cityID: post.cityID, reason: reason)
        }
        versions.changed(.city(post.cityID))
        context.nextFlash = Flash(.postRemoved)
        return .redirect(to: "/admin")
    }

    func ban(_ request: Request, _ context: AppContext) throws -> Response {
        let admin = try context.requireUser()
        let target = try User.named(request, in: database)
        let language = context.language
        let reason = reason(context)
        let postID = Int64(context.form["post_id"] ?? "")
        func refuse(_ key: String) throws -> Response {
            try queuePage(context, page: 1, problem: Problem(postID: postID, username: target.username,
                                                            message: pages.string(key, language), reason: reason),
                          status: .unprocessableContent)
        }
        guard target.id != admin.id else { return try refuse("error_ban_self") }
        guard !target.isAdmin else { return try refuse("error_ban_admin") }
        guard let duration = Self.durations[context.form["duration"] ?? ""] else { return try refuse("error_ban_duration") }
        guard !reason.isEmpty else { return try refuse("error_reason_required") }
        if let key = reasonProblem(reason) { return try refuse(key) }
        let now = clock().timeIntervalSince1970
        try database.write { db in
            let cityID = try postID.flatMap { id in try db.one("SELECT city_id FROM posts WHERE id = ?", [id]) { $0.int64(0) } }
            try db.execute("INSERT INTO bans (user_id, admin_id, reason, created_at, until) VALUES (?, ?, ?, ?, ?)",
                           target.id, admin.id, reason, now, duration.map { now + $0 })
            try SessionStore.revokeAll(userID: target.id, db)
            try writeLog(db, admin: admin, action: "ban", postID: postID, userID: target.id, username: target.username,
                         cityID: cityID, reason: reason)
        }
        versions.changed(.everything)
        context.nextFlash = Flash(.banned, username: target.username)
        return .redirect(to: context.returnPath(or: "/admin"))
    }

    func unban(_ request: Request, _ context: AppContext) throws -> Response {
        let admin = try context.requireUser()
        let target = try User.named(request, in: database)
        let reason = reason(context)
        if let key = reason.isEmpty ? "error_reason_required" : reasonProblem(reason) {
            return try lookUpPage(target, context, problem: pages.string(key, context.language), status: .unprocessableContent)
        }
        try database.write { db in
            try db.execute("UPDATE bans SET lifted_at = ? WHERE user_id = ? AND lifted_at IS NULL", clock(), target.id)
            try writeLog(db, admin: admin, action: "unban", userID: target.id, username: target.username, reason: reason)
        }
        versions.changed(.everything)
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
        let rows = try database.readStatement { db in
            try db.all("""
                SELECT l.admin_username, l.action, l.post_id, l.username, c.slug, l.reason, l.created_at
                FROM moderation_log l LEFT JOIN cities c ON c.id = l.city_id
                WHERE (CAST(?1 AS TEXT) IS NULL OR l.admin_username = ?1) AND (CAST(?2 AS TEXT) IS NULL OR l.action = ?2)
                ORDER BY l.id DESC LIMIT ?3 OFFSET ?4
                """, [adminFilter, actionFilter, size + 1, (page - 1) * size]) { row in
                AdminLogPage.Entry(admin: row.string(0), action: row.string(1), actionText: pages.string("action_\(row.string(1))", language),
                                   postID: row.optionalInt64(2), username: row.optionalString(3), citySlug: row.optionalString(4),
                                   reason: row.string(5), at: Self.moment(row.double(6), language))
            }
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

    /// A row of `reason, created_at, until, lifted_at` (a ban, or a deleted account's kept ban) as shown.
    private func banEntry(_ row: any SQLRow, _ language: Language) -> AdminUserPage.BanEntry {
        AdminUserPage.BanEntry(reason: row.string(0), from: Self.moment(row.double(1), language).text,
                               until: row.optionalDouble(2).map { Self.moment($0, language).text } ?? pages.string("duration_permanent", language),
                               lifted: row.optionalDouble(3).map { Self.moment($0, language).text })
    }

    /// A deleted account's name: reserved, with the bans it had (kept when it was deleted).
    private func retiredPage(_ username: String, _ context: AppContext) throws -> Response? {
        let language = context.language
        let key = username.lowercased()
        let bans = try database.read { db -> [AdminUserPage.BanEntry]? in
            guard try db.exists("SELECT 1 FROM retired_usernames WHERE username_key = ?", key) else { return nil }
            return try db.all("SELECT reason, created_at, until, lifted_at FROM retired_bans WHERE username_key = ? ORDER BY id DESC",
                              [key]) { banEntry($0, language) }
        }
        guard let bans else { return nil }
        let name = pages.string("deleted_user", language)
        let view = AdminUserPage(layout: pages.layout(context, title: name), username: key, displayName: name, blocksReceived: 0,
                                 isBanned: false, canBan: false, durations: [], bans: bans, posts: [], made: [], received: [])
        return pages.html(context) { Templates.admin_user(view, &$0, $1) }
    }

    private func lookUpPage(_ person: User, _ context: AppContext, problem: String?, status: HTTPStatus = .ok) throws -> Response {
        let language = context.language
        let id = person.id
        var view = try database.read { db -> AdminUserPage in
            let posts = try db.all("""
                SELECT p.id, p.body, p.hidden_at, p.removed_at, p.removed_reason, c.slug FROM posts p JOIN cities c ON c.id = p.city_id
                WHERE p.user_id = ? ORDER BY p.id DESC LIMIT 100
                """, [id]) { row in
                    AdminUserPage.Post(id: row.int64(0), body: row.string(1), citySlug: row.string(5), isHidden: !row.isNull(2),
                                       isRemoved: !row.isNull(3), removedReason: row.optionalString(4))
                }
            func reports(_ sql: String) throws -> [AdminUserPage.Report] {
                try db.all(sql, [id]) { row in
                    AdminUserPage.Report(postID: row.int64(0), other: row.string(3), reason: pages.string("reason_\(row.string(1))", language),
                                         outcome: pages.string("outcome_\(row.string(2))", language))
                }
            }
            let made = try reports("""
                SELECT r.post_id, r.reason, r.outcome, coalesce(u.username, '') AS other FROM reports r
                JOIN posts p ON p.id = r.post_id LEFT JOIN users u ON u.id = p.user_id WHERE r.reporter_id = ? ORDER BY r.id DESC LIMIT 100
                """)
            let received = try reports("""
                SELECT r.post_id, r.reason, r.outcome, coalesce(u.username, '') AS other FROM reports r
                JOIN posts p ON p.id = r.post_id LEFT JOIN users u ON u.id = r.reporter_id WHERE p.user_id = ? ORDER BY r.id DESC LIMIT 100
                """)
            let blocks = try db.integer("SELECT count(*) FROM blocks WHERE blocked_id = ?", id)
            let bans = try db.all("SELECT reason, created_at, until, lifted_at FROM bans WHERE user_id = ? ORDER BY id DESC", [id]) {
                banEntry($0, language)
            }
            let active = try Ban.active(userID: id, now: clock(), db)
            return AdminUserPage(layout: pages.layout(context, title: person.displayName), username: person.username,
                                 displayName: person.displayName, blocksReceived: blocks, isBanned: active != nil,
                                 banStatus: active.map { ban in
                                     ban.until.map {
                                         pages.string("admin_banned_until", language,
                                                      ["until": DateFormatting.utcMinute($0, language: language), "reason": ban.reason])
                                     } ?? pages.string("admin_banned_permanent", language, ["reason": ban.reason])
                                 },
                                 canBan: !person.isAdmin && person.id != context.user?.id, durations: Self.durationOptions(pages, language),
                                 bans: bans, posts: posts, made: made, received: received)
        }
        view.problem = problem
        return pages.html(context, status: status) { Templates.admin_user(view, &$0, $1) }
    }
}
