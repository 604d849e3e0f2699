import Foundation
import GRDB
import HTTPServer

/// The admin area: every route sits in one group behind `requireAdmin`, so a new route cannot
/// forget the check. Signed-out visitors are sent to sign in; signed-in non-admins get a 404
/// (the area is not advertised).
struct AdminController {
    let pages: Pages
    let database: AppDatabase
    let clock: @Sendable () -> Date
    static let pageSize = 20
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
        admin.post("/posts/{id}/remove", remove)
        admin.post("/users/{username}/ban", ban)
        admin.post("/users/{username}/unban", unban)
    }

    // MARK: - Queue

    func queue(_ request: Request, _ context: AppContext) throws -> Response {
        let page = max(1, Int(try request.queryItems()["page"] ?? "1") ?? 1)
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
        let (groups, signals) = try database.pool.read { db -> ([[String: Any]], [[String: Any]]) in
            let rows = try Row.fetchAll(db, sql: """
                SELECT p.id, p.body, p.hidden_at, p.city_id, u.username, u.display_name, c.slug, c.name_en, c.name_ko,
                       count(DISTINCT r.reporter_id) AS reporters, min(r.created_at) AS first_report, max(r.created_at) AS last_report
                FROM posts p
                JOIN reports r ON r.post_id = p.id AND r.outcome = 'pending'
                LEFT JOIN users u ON u.id = p.user_id
                JOIN cities c ON c.id = p.city_id
                WHERE p.removed_at IS NULL
                GROUP BY p.id
                ORDER BY reporters DESC, first_report ASC
                LIMIT ? OFFSET ?
                """, arguments: [Self.pageSize + 1, (page - 1) * Self.pageSize])
            let groups = try rows.prefix(Self.pageSize).map { row -> [String: Any] in
                let id: Int64 = row["id"]
                let reasons = try Row.fetchAll(db, sql: """
                    SELECT reason, count(*) AS n FROM reports WHERE post_id = ? AND outcome = 'pending' GROUP BY reason ORDER BY n DESC
                    """, arguments: [id]).map { ["reason": pages.string("reason_\($0["reason"] as String)", language), "count": $0["n"] as Int] }
                let details = try Row.fetchAll(db, sql: """
                    SELECT u.username, r.reason, r.detail, r.created_at FROM reports r JOIN users u ON u.id = r.reporter_id
                    WHERE r.post_id = ? AND r.outcome = 'pending' ORDER BY r.created_at
                    """, arguments: [id]).map { report -> [String: Any] in
                        ["reporter": report["username"] as String, "reason": pages.string("reason_\(report["reason"] as String)", language),
                         "detail": report["detail"] as String, "at": Self.timestamp(report["created_at"])]
                    }
                var group: [String: Any] = [
                    "id": id, "body": row["body"] as String, "isHidden": row["hidden_at"] != nil,
                    "author": (row["username"] as String?) as Any, "authorName": (row["display_name"] as String?) ?? pages.string("deleted_user", language),
                    "citySlug": row["slug"] as String, "cityName": language == .ko ? ((row["name_ko"] as String?) ?? row["name_en"]) : row["name_en"] as String,
                    "reporters": row["reporters"] as Int, "firstReport": Self.timestamp(row["first_report"]),
                    "lastReport": Self.timestamp(row["last_report"]), "reasons": reasons, "details": details,
                    "csrfToken": context.csrfToken, "durations": Self.durationOptions(pages, language),
                ]
                if let problem, problem.postID == id {
                    group["problem"] = problem.message
                    group["typedReason"] = problem.reason
                }
                return group
            }
            let signals = try Row.fetchAll(db, sql: """
                SELECT u.username, u.display_name, count(*) AS n FROM blocks b JOIN users u ON u.id = b.blocked_id
                GROUP BY b.blocked_id HAVING n >= 5 ORDER BY n DESC LIMIT 50
                """).map { ["username": $0["username"] as String, "displayName": $0["display_name"] as String, "count": $0["n"] as Int] }
            return (groups, signals)
        }
        var data: [String: Any] = ["groups": groups, "hasGroups": !groups.isEmpty, "signals": signals, "hasSignals": !signals.isEmpty]
        if page > 1 { data["newerHref"] = "/admin?page=\(page - 1)" }
        if groups.count == Self.pageSize { data["olderHref"] = "/admin?page=\(page + 1)" }
        if let problem, problem.postID == nil { data["problem"] = problem.message }
        return pages.page("admin_queue", context, title: pages.string("admin_queue", language), status: status, data)
    }

    static func durationOptions(_ pages: Pages, _ language: Language) -> [[String: String]] {
        ["1d", "7d", "30d", "permanent"].map { ["value": $0, "label": pages.string("duration_\($0)", language)] }
    }

    static func timestamp(_ seconds: Double?) -> String {
        guard let seconds else { return "" }
        return DateFormatting.iso8601(Date(timeIntervalSince1970: seconds))
    }

    // MARK: - Actions

    private func reason(_ context: AppContext) -> String {
        (context.form["reason"] ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private func post(_ request: Request) throws -> (id: Int64, cityID: Int64, userID: Int64?, username: String?) {
        guard let id = Int64(request.parameters["id"] ?? ""),
              let row = try database.pool.read({ try Row.fetchOne($0, sql: """
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
        let now = clock().timeIntervalSince1970
        try database.pool.write { db in
            try db.execute(sql: "UPDATE reports SET outcome = 'no_violation', resolved_at = ? WHERE post_id = ? AND outcome = 'pending'",
                           arguments: [now, post.id])
            try db.execute(sql: "UPDATE posts SET hidden_at = NULL WHERE id = ?", arguments: [post.id])
            try writeLog(db, admin: admin, action: "restore", postID: post.id, userID: post.userID, username: post.username,
                         cityID: post.cityID, reason: reason(context))
        }
        return .redirect(to: "/admin")
    }

    func remove(_ request: Request, _ context: AppContext) throws -> Response {
        let admin = try context.requireUser()
        let post = try post(request)
        let reason = reason(context)
        guard !reason.isEmpty else {
            return try queuePage(context, page: 1, problem: Problem(postID: post.id, username: nil,
                                                                   message: pages.string("error_reason_required", context.language), reason: reason),
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
        let now = clock().timeIntervalSince1970
        try database.pool.write { db in
            let cityID = try postID.flatMap { try Int64.fetchOne(db, sql: "SELECT city_id FROM posts WHERE id = ?", arguments: [$0]) }
            try db.execute(sql: "INSERT INTO bans (user_id, admin_id, reason, created_at, until) VALUES (?, ?, ?, ?, ?)",
                           arguments: [target.id, admin.id, reason, now, duration.map { now + $0 }])
            try SessionStore.revokeAll(userID: target.id!, db)
            try writeLog(db, admin: admin, action: "ban", postID: postID, userID: target.id, username: target.username,
                         cityID: cityID, reason: reason)
        }
        return .redirect(to: safeReturnPath(context.form["return_to"] ?? "/admin"))
    }

    func unban(_ request: Request, _ context: AppContext) throws -> Response {
        let admin = try context.requireUser()
        let target = try User.named(request, in: database)
        let reason = reason(context)
        guard !reason.isEmpty else {
            return try lookUpPage(target, context, problem: pages.string("error_reason_required", context.language), status: .unprocessableContent)
        }
        try database.pool.write { db in
            try db.execute(sql: "UPDATE bans SET lifted_at = ? WHERE user_id = ? AND lifted_at IS NULL",
                           arguments: [clock().timeIntervalSince1970, target.id])
            try writeLog(db, admin: admin, action: "unban", userID: target.id, username: target.username, reason: reason)
        }
        return .redirect(to: "/admin/users/\(target.username)")
    }

    // MARK: - Log and look-up

    /// `GET /admin/log?admin=&action=&page=`: every decision, newest first.
    func log(_ request: Request, _ context: AppContext) throws -> Response {
        let query = try request.queryItems()
        let adminFilter = query["admin"].flatMap { $0.isEmpty ? nil : $0 }
        let actionFilter = query["action"].flatMap { ["restore", "remove", "ban", "unban"].contains($0) ? $0 : nil }
        let page = max(1, Int(query["page"] ?? "1") ?? 1)
        let size = 50
        let rows = try database.pool.read { db in
            try Row.fetchAll(db, sql: """
                SELECT l.*, c.slug FROM moderation_log l LEFT JOIN cities c ON c.id = l.city_id
                WHERE (:admin IS NULL OR l.admin_username = :admin) AND (:action IS NULL OR l.action = :action)
                ORDER BY l.id DESC LIMIT :limit OFFSET :offset
                """, arguments: ["admin": adminFilter, "action": actionFilter, "limit": size + 1, "offset": (page - 1) * size])
        }
        let language = context.language
        let entries = rows.prefix(size).map { row -> [String: Any] in
            ["id": row["id"] as Int64, "admin": row["admin_username"] as String, "action": row["action"] as String,
             "actionText": pages.string("action_\(row["action"] as String)", language),
             "postID": (row["post_id"] as Int64?) as Any, "username": (row["username"] as String?) as Any,
             "citySlug": (row["slug"] as String?) as Any, "reason": row["reason"] as String, "at": Self.timestamp(row["created_at"])]
        }
        func href(_ page: Int) -> String {
            var items = ["page=\(page)"]
            if let adminFilter { items.append("admin=\(percentEncode(adminFilter))") }
            if let actionFilter { items.append("action=\(actionFilter)") }
            return "/admin/log?" + items.joined(separator: "&")
        }
        var data: [String: Any] = [
            "entries": entries, "hasEntries": !entries.isEmpty, "adminFilter": adminFilter ?? "",
            "actions": ["restore", "remove", "ban", "unban"].map { ["value": $0, "label": pages.string("action_\($0)", language), "selected": $0 == actionFilter] },
        ]
        if rows.count > size { data["olderHref"] = href(page + 1) }
        if page > 1 { data["newerHref"] = href(page - 1) }
        return pages.page("admin_log", context, title: pages.string("admin_log", language), data)
    }

    func lookUp(_ request: Request, _ context: AppContext) throws -> Response {
        try lookUpPage(try User.named(request, in: database), context, problem: nil)
    }

    private func lookUpPage(_ person: User, _ context: AppContext, problem: String?, status: HTTPStatus = .ok) throws -> Response {
        let language = context.language
        let id = person.id!
        let data = try database.pool.read { db -> [String: Any] in
            let posts = try Row.fetchAll(db, sql: """
                SELECT p.id, p.body, p.hidden_at, p.removed_at, p.removed_reason, c.slug FROM posts p JOIN cities c ON c.id = p.city_id
                WHERE p.user_id = ? ORDER BY p.id DESC LIMIT 100
                """, arguments: [id]).map { row -> [String: Any] in
                    ["id": row["id"] as Int64, "body": row["body"] as String, "citySlug": row["slug"] as String,
                     "isHidden": row["hidden_at"] != nil, "isRemoved": row["removed_at"] != nil,
                     "removedReason": (row["removed_reason"] as String?) as Any]
                }
            func reports(_ sql: String) throws -> [[String: Any]] {
                try Row.fetchAll(db, sql: sql, arguments: [id]).map { row in
                    ["postID": row["post_id"] as Int64, "other": row["other"] as String,
                     "reason": pages.string("reason_\(row["reason"] as String)", language), "outcome": row["outcome"] as String]
                }
            }
            let made = try reports("""
                SELECT r.post_id, r.reason, r.outcome, coalesce(u.username, '') AS other FROM reports r
                JOIN posts p ON p.id = r.post_id LEFT JOIN users u ON u.id = p.user_id WHERE r.reporter_id = ? ORDER BY r.id DESC LIMIT 100
                """)
            let received = try reports("""
                SELECT r.post_id, r.reason, r.outcome, u.username AS other FROM reports r
                JOIN posts p ON p.id = r.post_id JOIN users u ON u.id = r.reporter_id WHERE p.user_id = ? ORDER BY r.id DESC LIMIT 100
                """)
            let blocks = try Int.fetchOne(db, sql: "SELECT count(*) FROM blocks WHERE blocked_id = ?", arguments: [id]) ?? 0
            let bans = try Row.fetchAll(db, sql: "SELECT reason, created_at, until, lifted_at FROM bans WHERE user_id = ? ORDER BY id DESC",
                                        arguments: [id]).map { row -> [String: Any] in
                ["reason": row["reason"] as String, "from": Self.timestamp(row["created_at"]),
                 "until": (row["until"] as Double?).map { Self.timestamp($0) } ?? pages.string("duration_permanent", language),
                 "lifted": (row["lifted_at"] as Double?).map { Self.timestamp($0) } as Any]
            }
            let active = try Ban.active(userID: id, now: clock(), db)
            return ["posts": posts, "made": made, "received": received, "blocksReceived": blocks, "bans": bans,
                    "isBanned": active != nil, "canBan": !person.isAdmin && person.id != context.user?.id]
        }
        var view = data
        view["username"] = person.username
        view["displayName"] = person.displayName
        view["durations"] = Self.durationOptions(pages, language)
        if let problem { view["problem"] = problem }
        return pages.page("admin_user", context, title: person.displayName, status: status, view)
    }
}

/// `GET /city/{slug}/moderation`: what moderators did on a city's board, in public: who was
/// removed or banned and why, never who reported it or what the removed text said.
struct TransparencyController {
    let pages: Pages
    let database: AppDatabase
    let index: CityIndex

    func addRoutes(to router: Router<AppContext>) {
        router.get("/city/{slug}/moderation", show)
    }

    func show(_ request: Request, _ context: AppContext) throws -> Response {
        guard let city = index.city(slug: request.parameters["slug"] ?? "") else { throw HTTPError(.notFound) }
        let language = context.language
        let rows = try database.pool.read { db in
            try Row.fetchAll(db, sql: """
                SELECT action, username, reason, created_at FROM moderation_log
                WHERE city_id = ? AND action IN ('remove', 'ban') ORDER BY id DESC LIMIT 100
                """, arguments: [city.id])
        }
        let entries = rows.map { row -> [String: Any] in
            let user = (row["username"] as String?) ?? pages.string("deleted_user", language)
            let key = row["action"] == "remove" ? "public_removed" : "public_banned"
            return ["action": row["action"] as String,
                    "text": pages.string(key, language, ["user": user, "reason": row["reason"] as String,
                                                         "date": DateFormatting.string(Date(timeIntervalSince1970: row["created_at"]), style: .medium,
                                                                                       language: language, timeZone: city.timeZone)])]
        }
        return pages.page("moderation", context, title: pages.string("moderation_title", language, ["city": city.name(language)]), [
            "cityName": city.name(language), "slug": city.slug, "entries": entries, "hasEntries": !entries.isEmpty,
        ])
    }
}
