import Foundation
import GRDB
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

    private func queuePage(_ context: AppContext, page: Int, problem: Problem?, status: HTTPStatus = .ok) throws -> Response {
        let language = context.language
        let (groups, signals) = try database.pool.read { db -> ([AdminQueuePage.Group], [AdminQueuePage.Signal]) in
            let rows = try Row.fetchAll(db, sql: """
                SELECT p.id, p.body, p.hidden_at, p.city_id, u.username, u.display_name, c.slug, c.name_en, c.name_ko,
                       count(*) AS reporters, min(r.created_at) AS first_report, max(r.created_at) AS last_report
                FROM posts p
                JOIN reports r ON r.post_id = p.id AND r.outcome = 'pending'
                LEFT JOIN users u ON u.id = p.user_id
                JOIN cities c ON c.id = p.city_id
                WHERE p.removed_at IS NULL
                GROUP BY p.id
                ORDER BY reporters DESC, first_report ASC
                LIMIT ? OFFSET ?
                """, arguments: [Self.pageSize + 1, (page - 1) * Self.pageSize])
            // Every pending report of the page's posts in one query, grouped here (not two
            // queries per post).
            let shown = Array(rows.prefix(Self.pageSize))
            let ids = shown.map { $0["id"] as Int64 }
            var reports: [Int64: [Row]] = [:]
            if !ids.isEmpty {
                for report in try Row.fetchAll(db, sql: """
                    SELECT r.post_id, u.username, r.reason, r.detail, r.created_at FROM reports r LEFT JOIN users u ON u.id = r.reporter_id
                    WHERE r.post_id IN (\(databaseQuestionMarks(count: ids.count))) AND r.outcome = 'pending' ORDER BY r.created_at
                    """, arguments: StatementArguments(ids)) {
                    reports[report["post_id"], default: []].append(report)
                }
            }
            let groups = shown.map { row -> AdminQueuePage.Group in
                let id: Int64 = row["id"]
                let pending = reports[id] ?? []
                var counts: [String: Int] = [:]
                for report in pending { counts[report["reason"], default: 0] += 1 }
                // Most frequent reason first; ties in a fixed order.
                let reasons = counts.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.map {
                    AdminQueuePage.ReasonCount(reason: pages.string("reason_\($0.key)", language), count: $0.value)
                }
                let details = pending.map { report in
                    AdminQueuePage.Detail(reporter: (report["username"] as String?) ?? pages.string("deleted_user", language),
                                          reason: pages.string("reason_\(report["reason"] as String)", language),
                                          detail: report["detail"], at: Self.moment(report["created_at"], language))
                }
                var group = AdminQueuePage.Group(
                    id: id, body: row["body"], isHidden: row["hidden_at"] != nil, author: row["username"],
                    authorName: (row["display_name"] as String?) ?? pages.string("deleted_user", language), citySlug: row["slug"],
                    cityName: language == .ko ? ((row["name_ko"] as String?) ?? row["name_en"]) : row["name_en"],
                    reporters: row["reporters"], firstReport: Self.moment(row["first_report"], language),
                    lastReport: Self.moment(row["last_report"], language), reasons: reasons, details: details)
                if let problem, problem.postID == id {
                    group.problem = problem.message
                    group.typedReason = problem.reason
                }
                return group
            }
            let signals = try Row.fetchAll(db, sql: """
                SELECT u.username, u.display_name, count(*) AS n FROM blocks b JOIN users u ON u.id = b.blocked_id
                GROUP BY b.blocked_id HAVING n >= 5 ORDER BY n DESC LIMIT 50
                """).map { AdminQueuePage.Signal(username: $0["username"], displayName: $0["display_name"], count: $0["n"]) }
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
        guard let row = try database.pool.read({ try Row.fetchOne($0, sql: """
                  SELECT p.id, p.city_id, p.user_id, u.username FROM posts p LEFT JOIN users u ON u.id = p.user_id WHERE p.id = ?
                  """, arguments: [id]) })
        else { throw HTTPError(.notFound) }
        return (row["id"], row["city_id"], row["user_id"], row["username"])
    }

    private func writeLog(_ db: Database, admin: User, action: String, postID: Int64? = nil, userID: Int64? = nil,
                          username: String? = nil, cityID: Int64? = nil, reason: String) throws {
        try db.execute(sql: """
            INSERT INTO moderation_log (admin_id, admin_username, action, post_id, user_id, username, city_id, reason, created_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            """, arguments: [admin.id, admin.username, action, postID, userID, username, cityID, reason, clock().timeIntervalSince1970])
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
        try database.pool.write { db in
            try db.execute(sql: "UPDATE reports SET outcome = 'no_violation', resolved_at = ? WHERE post_id = ? AND outcome = 'pending'",
                           arguments: [now, post.id])
            try db.execute(sql: "UPDATE posts SET hidden_at = NULL WHERE id = ?", arguments: [post.id])
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
        let body = try database.pool.read { try String.fetchOne($0, sql: "SELECT body FROM posts WHERE id = ?", arguments: [post.id]) }
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
        try database.pool.write { db in
            try db.execute(sql: "UPDATE posts SET removed_at = ?, removed_reason = ? WHERE id = ?", arguments: [now, reason, post.id])
            try db.execute(sql: "UPDATE reports SET outcome = 'removed', resolved_at = ? WHERE post_id = ? AND outcome = 'pending'",
                           arguments: [now, post.id])
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
        try database.pool.write { db in
            let cityID = try postID.flatMap { try Int64.fetchOne(db, sql: "SELECT city_id FROM posts WHERE id = ?", arguments: [$0]) }
            try db.execute(sql: "INSERT INTO bans (user_id, admin_id, reason, created_at, until) VALUES (?, ?, ?, ?, ?)",
                           arguments: [target.id, admin.id, reason, now, duration.map { now + $0 }])
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
        try database.pool.write { db in
            try db.execute(sql: "UPDATE bans SET lifted_at = ? WHERE user_id = ? AND lifted_at IS NULL",
                           arguments: [clock().timeIntervalSince1970, target.id])
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
        let rows = try database.pool.read { db in
            try Row.fetchAll(db, sql: """
                SELECT l.*, c.slug FROM moderation_log l LEFT JOIN cities c ON c.id = l.city_id
                WHERE (:admin IS NULL OR l.admin_username = :admin) AND (:action IS NULL OR l.action = :action)
                ORDER BY l.id DESC LIMIT :limit OFFSET :offset
                """, arguments: ["admin": adminFilter, "action": actionFilter, "limit": size + 1, "offset": (page - 1) * size])
        }
        let language = context.language
        let entries = rows.prefix(size).map { row in
            AdminLogPage.Entry(admin: row["admin_username"], action: row["action"],
                               actionText: pages.string("action_\(row["action"] as String)", language), postID: row["post_id"],
                               username: row["username"], citySlug: row["slug"], reason: row["reason"], at: Self.moment(row["created_at"], language))
        }
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
    private func banEntry(_ row: Row, _ language: Language) -> AdminUserPage.BanEntry {
        AdminUserPage.BanEntry(reason: row["reason"], from: Self.moment(row["created_at"], language).text,
                               until: (row["until"] as Double?).map { Self.moment($0, language).text } ?? pages.string("duration_permanent", language),
                               lifted: (row["lifted_at"] as Double?).map { Self.moment($0, language).text })
    }

    /// A deleted account's name: reserved, with the bans it had (kept when it was deleted).
    private func retiredPage(_ username: String, _ context: AppContext) throws -> Response? {
        let language = context.language
        let key = username.lowercased()
        let bans = try database.pool.read { db -> [AdminUserPage.BanEntry]? in
            guard try Bool.fetchOne(db, sql: "SELECT 1 FROM retired_usernames WHERE username_key = ?", arguments: [key]).isTrue else { return nil }
            return try Row.fetchAll(db, sql: "SELECT reason, created_at, until, lifted_at FROM retired_bans WHERE username_key = ? ORDER BY id DESC",
                                    arguments: [key]).map { banEntry($0, language) }
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
        var view = try database.pool.read { db -> AdminUserPage in
            let posts = try Row.fetchAll(db, sql: """
                SELECT p.id, p.body, p.hidden_at, p.removed_at, p.removed_reason, c.slug FROM posts p JOIN cities c ON c.id = p.city_id
                WHERE p.user_id = ? ORDER BY p.id DESC LIMIT 100
                """, arguments: [id]).map { row in
                    AdminUserPage.Post(id: row["id"], body: row["body"], citySlug: row["slug"], isHidden: row["hidden_at"] != nil,
                                       isRemoved: row["removed_at"] != nil, removedReason: row["removed_reason"])
                }
            func reports(_ sql: String) throws -> [AdminUserPage.Report] {
                try Row.fetchAll(db, sql: sql, arguments: [id]).map { row in
                    AdminUserPage.Report(postID: row["post_id"], other: row["other"],
                                         reason: pages.string("reason_\(row["reason"] as String)", language), outcome: pages.string("outcome_\(row["outcome"] as String)", language))
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
            let blocks = try Int.fetchOne(db, sql: "SELECT count(*) FROM blocks WHERE blocked_id = ?", arguments: [id]) ?? 0
            let bans = try Row.fetchAll(db, sql: "SELECT reason, created_at, until, lifted_at FROM bans WHERE user_id = ? ORDER BY id DESC",
                                        arguments: [id]).map { banEntry($0, language) }
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
