import Foundation
import HTTPServer

/// Moderation's data: the report queue, decisions and the append-only log that records each one.
/// Every decision and its log entry are written in one transaction.
struct ModerationStore: Sendable {
    let database: AppDatabase

    /// A reported post or reply in the queue, with its reporters counted (and, for a reply, the
    /// post it answers).
    struct QueuedPost {
        let id: Int64, body: String, isHidden: Bool, cityID: Int64, username: String?, displayName: String?
        let citySlug: String, cityNameEn: String, cityNameKo: String?, reporters: Int, firstReport: Double, lastReport: Double
        let parentID: Int64?, parentBody: String?
        let userID: Int64?
    }

    /// What the queue says of a reported author: how much they posted over how long, how many
    /// of their posts were reported, whether a ban is in force.
    struct AuthorHistory {
        let posts: Int, firstPost: Double, lastPost: Double, reported: Int, isBanned: Bool
    }

    /// One pending report of a post in the queue.
    struct PendingReport {
        let postID: Int64, username: String?, reason: String, detail: String, createdAt: Double
    }

    /// Someone many people blocked: a signal for moderators.
    struct BlockSignal {
        let username: String, displayName: String, count: Int
    }

    /// A page of the queue: posts with pending reports (most reporters first), their reports,
    /// and the most blocked people.
    func queue(limit: Int, offset: Int, now: Date)
        throws -> (posts: [QueuedPost], reports: [Int64: [PendingReport]], histories: [Int64: AuthorHistory], signals: [BlockSignal]) {
        try database.read { db in
            let posts = try db.all("""
                SELECT p.id, p.body, p.hidden_at, p.city_id, u.username, u.display_name, c.slug, c.name_en, c.name_ko,
                       count(*) AS reporters, min(r.created_at) AS first_report, max(r.created_at) AS last_report,
                       p.parent_id, parent.body, p.user_id
                FROM posts p
                JOIN reports r ON r.post_id = p.id AND r.outcome = 'pending'
                LEFT JOIN users u ON u.id = p.user_id
                JOIN cities c ON c.id = p.city_id
                LEFT JOIN posts parent ON parent.id = p.parent_id
                WHERE p.removed_at IS NULL
                GROUP BY p.id, u.username, u.display_name, c.slug, c.name_en, c.name_ko, parent.body, p.user_id
                ORDER BY reporters DESC, first_report ASC
                LIMIT ? OFFSET ?
                """, [limit, offset]) { row in
                QueuedPost(id: row.int64(0), body: row.string(1), isHidden: !row.isNull(2), cityID: row.int64(3),
                           username: row.optionalString(4), displayName: row.optionalString(5), citySlug: row.string(6),
                           cityNameEn: row.string(7), cityNameKo: row.optionalString(8), reporters: row.int(9),
                           firstReport: row.double(10), lastReport: row.double(11),
                           parentID: row.optionalInt64(12), parentBody: row.optionalString(13), userID: row.optionalInt64(14))
            }
            // The authors' histories, in one query for the page: "24 posts in 2 min · 23 reported · banned".
            var histories: [Int64: AuthorHistory] = [:]
            let authors = Array(Set(posts.compactMap(\.userID))).sorted()
            if !authors.isEmpty {
                // ?2 is the moment for the rule of which ban is in force; the authors are ?1, ?3, ?4…
                let marks = (["?1"] + (0..<(authors.count - 1)).map { "?\($0 + 3)" }).joined(separator: ", ")
                var arguments: [any SQLArgument] = [authors[0], now]
                arguments += authors.dropFirst().map { $0 as any SQLArgument }
                for (id, history) in try db.all("""
                    SELECT u.id, count(p.id), coalesce(min(p.created_at), 0), coalesce(max(p.created_at), 0),
                           (SELECT count(DISTINCT r.post_id) FROM reports r JOIN posts rp ON rp.id = r.post_id WHERE rp.user_id = u.id),
                           CASE WHEN EXISTS (\(Ban.activeIDSQL)) THEN 1 ELSE 0 END
                    FROM users u LEFT JOIN posts p ON p.user_id = u.id
                    WHERE u.id IN (\(marks)) GROUP BY u.id
                    """, arguments, { row in
                        (row.int64(0), AuthorHistory(posts: row.int(1), firstPost: row.double(2), lastPost: row.double(3),
                                                     reported: row.int(4), isBanned: row.int(5) != 0))
                    }) {
                    histories[id] = history
                }
            }
            // Every pending report of the page's posts in one query, grouped here (not two
            // queries per post).
            var reports: [Int64: [PendingReport]] = [:]
            if !posts.isEmpty {
                let marks = sqlMarks(posts.count)
                for report in try db.all("""
                    SELECT r.post_id, u.username, r.reason, r.detail, r.created_at FROM reports r LEFT JOIN users u ON u.id = r.reporter_id
                    WHERE r.post_id IN (\(marks)) AND r.outcome = 'pending' ORDER BY r.created_at
                    """, posts.map(\.id), { PendingReport(postID: $0.int64(0), username: $0.optionalString(1), reason: $0.string(2),
                                                          detail: $0.string(3), createdAt: $0.double(4)) }) {
                    reports[report.postID, default: []].append(report)
                }
            }
            let signals = try db.all("""
                SELECT u.username, u.display_name, count(*) AS n FROM blocks b JOIN users u ON u.id = b.blocked_id
                GROUP BY b.blocked_id, u.username, u.display_name HAVING count(*) >= 5 ORDER BY n DESC LIMIT 50
                """) { BlockSignal(username: $0.string(0), displayName: $0.string(1), count: $0.int(2)) }
            return (posts, reports, histories, signals)
        }
    }

    /// A post as moderation acts on it.
    struct ModeratedPost {
        let id: Int64, cityID: Int64, userID: Int64?, username: String?
    }

    func post(id: Int64) throws -> ModeratedPost? {
        try database.readStatement { try Self.post(id: id, $0) }
    }

    /// The post `id` with its author's name; `removedOnly`: only while it is removed.
    private static func post(id: Int64, removedOnly: Bool = false, _ db: any SQLConnection) throws -> ModeratedPost? {
        try db.one("SELECT p.id, p.city_id, p.user_id, u.username FROM posts p LEFT JOIN users u ON u.id = p.user_id WHERE p.id = ?"
                   + (removedOnly ? " AND p.removed_at IS NOT NULL" : ""),
                   [id]) { ModeratedPost(id: $0.int64(0), cityID: $0.int64(1), userID: $0.optionalInt64(2), username: $0.optionalString(3)) }
    }

    func body(ofPost id: Int64) throws -> String? {
        try database.readStatement { try $0.one("SELECT body FROM posts WHERE id = ?", [id]) { $0.string(0) } }
    }

    /// The text of a post by `authorID` (a ban's confirmation quotes the post it is about, and
    /// only a post of the person banned).
    func body(ofPost id: Int64, by authorID: Int64) throws -> String? {
        try database.readStatement { try $0.one("SELECT body FROM posts WHERE id = ? AND user_id = ?", [id, authorID]) { $0.string(0) } }
    }

    private func log(_ db: any SQLConnection, admin: User, action: String, postID: Int64? = nil, userID: Int64? = nil,
                     username: String? = nil, cityID: Int64? = nil, reason: String, now: Date) throws {
        try db.execute("""
            INSERT INTO moderation_log (admin_id, admin_username, action, post_id, user_id, username, city_id, reason, created_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            """, admin.id, admin.username, action, postID, userID, username, cityID, reason, now)
    }

    /// A decision's target read again in its transaction: deleted since the page was shown, it
    /// is a 404, never a foreign-key failure (500) or a log entry about nothing.
    private static func requireExists(_ table: String, id: Int64, _ db: any SQLConnection) throws {
        guard try db.exists("SELECT 1 FROM \(table) WHERE id = ?", id) else { throw HTTPError(.notFound) }
    }

    /// Reports resolve as "no violation"; the post (hidden by reports, or removed) shows again.
    func restore(_ post: ModeratedPost, by admin: User, reason: String, now: Date) throws {
        try database.write(.cluster) { db, changes in  // a moderator's decision
            try Self.requireExists("posts", id: post.id, db)
            try applyRestore(post, by: admin, reason: reason, now: now, db, changes)
        }
    }

    /// The restore itself, in the caller's transaction (a restore from the queue, an undone
    /// removal): the post shown again, whether it was hidden by reports or removed; its author
    /// and pending reporters told; its reports decided; logged.
    private func applyRestore(_ post: ModeratedPost, by admin: User, reason: String, now: Date, _ db: any SQLConnection,
                              _ changes: ChangeLog) throws {
        try changes.emit(.post(try Self.event(.shown, post, db)))
        try Self.tellDecision(.restored, post, now: now, db, changes)
        try db.execute("UPDATE reports SET outcome = 'no_violation', resolved_at = ? WHERE post_id = ? AND outcome = 'pending'", now, post.id)
        try PhotoQueries.forgetLikeness(ofPost: post.id, db)
        try db.execute("UPDATE posts SET hidden_at = NULL, removed_at = NULL, removed_reason = NULL WHERE id = ?", post.id)
        if let author = post.userID { try Standing.refresh(author, now: now, db, changes) }
        try log(db, admin: admin, action: "restore", postID: post.id, userID: post.userID, username: post.username,
                cityID: post.cityID, reason: reason, now: now)
    }

    func remove(_ post: ModeratedPost, by admin: User, reason: String, now: Date) throws {
        try database.write(.cluster) { db, changes in  // a moderator's decision
            try Self.requireExists("posts", id: post.id, db)
            try changes.emit(.post(try Self.event(.gone, post, db)))
            try Self.tellDecision(.removed, post, now: now, db, changes)
            try db.execute("UPDATE posts SET removed_at = ?, removed_reason = ? WHERE id = ?", now, reason, post.id)
            try PhotoQueries.rememberLikeness(ofPost: post.id, removedAt: now, db)
            try db.execute("UPDATE reports SET outcome = 'removed', resolved_at = ? WHERE post_id = ? AND outcome = 'pending'", now, post.id)
            if let author = post.userID { try Standing.refresh(author, now: now, db, changes) }
            try log(db, admin: admin, action: "remove", postID: post.id, userID: post.userID, username: post.username,
                    cityID: post.cityID, reason: reason, now: now)
        }
    }

    /// A moderator approves a post's photo: shown unblurred to everyone (until a new report), logged.
    func approvePhoto(_ post: ModeratedPost, by admin: User, now: Date) throws {
        try database.write(.cluster) { db, changes in  // a moderator's decision
            guard try PhotoQueries.setState(post.id, .approved, only: [.waiting, .reported, .shown], db, changes) else { throw HTTPError(.notFound) }
            try log(db, admin: admin, action: "photo_approve", postID: post.id, userID: post.userID, username: post.username,
                    cityID: post.cityID, reason: "", now: now)
        }
    }

    /// A moderator removes a post's photo (the post stays): the picture is refused from then on,
    /// logged. The photo's hash, for this node's kept files.
    func removePhoto(_ post: ModeratedPost, by admin: User, now: Date) throws -> String {
        try database.write(.cluster) { db, changes in  // a moderator's decision
            guard let hash = try db.one("SELECT photo_hash FROM posts WHERE id = ? AND photo_hash IS NOT NULL", [post.id], { $0.string(0) }) else {
                throw HTTPError(.notFound)
            }
            try PhotoQueries.remove(hash: hash, now: now.timeIntervalSince1970, db, changes)
            try log(db, admin: admin, action: "photo_remove", postID: post.id, userID: post.userID, username: post.username,
                    cityID: post.cityID, reason: "", now: now)
            return hash
        }
    }

    /// Photos waiting for a moderator (new members', reported ones), oldest first.
    func photosWaiting() throws -> [PhotoQueries.Waiting] {
        try database.readStatement { try PhotoQueries.waiting($0) }
    }

    /// A moderator sets `target`'s level by hand (nil: back to what they earn), logged with the
    /// reason; the level holds until a moderator changes it again.
    func setLevel(of target: User, to level: Int?, by admin: User, reason: String, now: Date) throws {
        try database.write(.cluster) { db, changes in  // a moderator's decision
            try Standing.set(target.id, to: level, now: now, db, changes)
            try log(db, admin: admin, action: level.map { "level_\($0)" } ?? "level_earned", userID: target.id, username: target.username,
                    reason: reason, now: now)
        }
    }

    /// What a decision does to a post, for live pages (read in the deciding transaction).
    private static func event(_ kind: PostEvent.Kind, _ post: ModeratedPost, _ db: any SQLConnection) throws -> PostEvent {
        var event = try db.one("SELECT id, city_id, parent_id, user_id FROM posts WHERE id = ?", [post.id], PostEvent.read)
            ?? PostEvent(kind, id: post.id, city: post.cityID)
        event.kind = kind
        return event
    }

    /// Tells the post's author what became of it (`kind`; nil: not them, as in a purge), and the
    /// people whose reports of it were pending that their report was decided (before the reports
    /// are marked).
    private static func tellDecision(_ kind: NoticeKind?, _ post: ModeratedPost, now: Date, _ db: any SQLConnection,
                                     _ changes: ChangeLog) throws {
        let seconds = now.timeIntervalSince1970
        if let kind { try Notices.tell(post.userID, kind, post: post.id, actor: nil, now: seconds, db, changes) }
        for reporter in try db.all("SELECT reporter_id FROM reports WHERE post_id = ? AND outcome = 'pending'", [post.id], { $0.int64(0) }) {
            try Notices.tell(reporter, .reportDecided, post: post.id, actor: nil, now: seconds, db, changes)
        }
    }

    /// Bans `target` until `until` (nil: permanently) and ends their sessions. Every page may
    /// show the person, so every page changes.
    func ban(_ target: User, by admin: User, reason: String, until: Date?, postID: Int64?, now: Date) throws {
        try database.write(.cluster) { db, changes in  // a ban: every write of the person waits for it
            try Self.requireExists("users", id: target.id, db)
            try changes.emit(.everything)
            // The post it is about, if it is still there (its author may have deleted it meanwhile).
            let post = try postID.flatMap { id in try db.one("SELECT id, city_id FROM posts WHERE id = ?", [id]) { (id: $0.int64(0), cityID: $0.int64(1)) } }
            try applyBan(target, by: admin, reason: reason, until: until, post: post, now: now, db)
        }
    }

    /// The ban, the end of the person's sessions and the log entry.
    private func applyBan(_ target: User, by admin: User, reason: String, until: Date?, post: (id: Int64, cityID: Int64)?, now: Date,
                          _ db: any SQLConnection) throws {
        try db.execute("INSERT INTO bans (user_id, admin_id, reason, created_at, until) VALUES (?, ?, ?, ?, ?)",
                       target.id, admin.id, reason, now, until)
        try SessionStore.revokeAll(userID: target.id, db)
        try log(db, admin: admin, action: "ban", postID: post?.id, userID: target.id, username: target.username,
                cityID: post?.cityID, reason: reason, now: now)
    }

    /// What "remove everything and ban" would remove: the person's posts and replies not removed
    /// yet, counted per city (most first).
    struct PurgePlan {
        struct City {
            let slug: String, nameEn: String, nameKo: String?, posts: Int
        }
        let posts: Int, replies: Int, cities: [City]
    }

    func purgePlan(of target: User) throws -> PurgePlan {
        try database.read { db in
            let counts = try db.one("""
                SELECT count(*) FILTER (WHERE parent_id IS NULL), count(*) FILTER (WHERE parent_id IS NOT NULL)
                FROM posts WHERE user_id = ? AND removed_at IS NULL
                """, [target.id]) { (posts: $0.int(0), replies: $0.int(1)) } ?? (posts: 0, replies: 0)
            let cities = try db.all("""
                SELECT c.slug, c.name_en, c.name_ko, count(*) AS n FROM posts p JOIN cities c ON c.id = p.city_id
                WHERE p.user_id = ? AND p.removed_at IS NULL GROUP BY c.slug, c.name_en, c.name_ko ORDER BY n DESC, c.slug LIMIT 50
                """, [target.id]) { PurgePlan.City(slug: $0.string(0), nameEn: $0.string(1), nameKo: $0.optionalString(2), posts: $0.int(3)) }
            return PurgePlan(posts: counts.posts, replies: counts.replies, cities: cities)
        }
    }

    /// Removes every post and reply of `target` not removed yet (each in the log, with one
    /// reason), decides the pending reports of them (their reporters are told), and bans them
    /// unless a ban is in force: one transaction. A second run finds nothing left and a ban in
    /// force, and changes nothing. Returns how many posts and replies went.
    @discardableResult
    func purge(_ target: User, by admin: User, reason: String, until: Date?, now: Date) throws -> Int {
        try database.write(.cluster) { db, changes in  // a ban and every post of the person
            try Self.requireExists("users", id: target.id, db)
            let posts = try db.all("SELECT id, city_id FROM posts WHERE user_id = ? AND removed_at IS NULL ORDER BY id", [target.id]) {
                ModeratedPost(id: $0.int64(0), cityID: $0.int64(1), userID: target.id, username: target.username)
            }
            for post in posts {
                try changes.emit(.post(try Self.event(.gone, post, db)))
                try Self.tellDecision(nil, post, now: now, db, changes)
                try db.execute("UPDATE posts SET removed_at = ?, removed_reason = ? WHERE id = ?", now, reason, post.id)
                try PhotoQueries.rememberLikeness(ofPost: post.id, removedAt: now, db)
                try db.execute("UPDATE reports SET outcome = 'removed', resolved_at = ? WHERE post_id = ? AND outcome = 'pending'", now, post.id)
                try log(db, admin: admin, action: "remove", postID: post.id, userID: target.id, username: target.username,
                        cityID: post.cityID, reason: reason, now: now)
            }
            if try Ban.active(userID: target.id, now: now, db) == nil {
                try changes.emit(.everything)
                try applyBan(target, by: admin, reason: reason, until: until, post: nil, now: now, db)
            }
            return posts.count
        }
    }

    func unban(_ target: User, by admin: User, reason: String, now: Date) throws {
        try database.write(.cluster) { db, changes in  // a moderator's decision
            try Self.requireExists("users", id: target.id, db)
            try changes.emit(.everything)
            try db.execute("UPDATE bans SET lifted_at = ? WHERE user_id = ? AND lifted_at IS NULL", now, target.id)
            try log(db, admin: admin, action: "unban", userID: target.id, username: target.username, reason: reason, now: now)
        }
    }

    /// Pins a post at the top of its board until `until` (issue 45 #4): a post, not a reply,
    /// neither removed nor hidden; at most `BoardQueries.pinsPerBoard` a board at once (409).
    func pin(_ post: ModeratedPost, until: Date, now: Date) throws {
        try database.write(.cluster) { db, changes in  // counts a board's pins
            guard let row = try db.one("SELECT parent_id IS NULL, removed_at IS NULL AND hidden_at IS NULL FROM posts WHERE id = ?", [post.id], {
                (isPost: $0.int(0) != 0, shown: $0.int(1) != 0)
            }) else { throw HTTPError(.notFound) }
            guard row.isPost, row.shown else { throw HTTPError(.unprocessableContent, message: "Only a post that everyone sees can be pinned.") }
            // A moderator's pins come first: warnings' threads (`WarningThreads`) make room.
            let others = try db.integer("SELECT count(*) FROM posts WHERE city_id = ? AND pinned_until > ? AND id <> ? AND warning_id IS NULL",
                                        post.cityID, now, post.id)
            guard others < BoardQueries.pinsPerBoard else {
                throw HTTPError(.conflict, message: "This board has \(BoardQueries.pinsPerBoard) pinned posts already: unpin one first.")
            }
            try db.execute("UPDATE posts SET pinned_until = ? WHERE id = ?", until, post.id)
            let threads = try db.all("""
                SELECT id FROM posts WHERE city_id = ? AND warning_id IS NOT NULL AND pinned_until > ? AND id <> ? ORDER BY pinned_until DESC, id
                """, [post.cityID, now, post.id]) { $0.int64(0) }
            for id in threads.dropFirst(max(0, BoardQueries.pinsPerBoard - others - 1)) {
                try db.execute("UPDATE posts SET pinned_until = NULL WHERE id = ?", id)
            }
            try changes.emit(.city(post.cityID))
        }
    }

    func unpin(_ post: ModeratedPost) throws {
        try database.write(.cluster) { db, changes in  // a moderator's decision
            try db.execute("UPDATE posts SET pinned_until = NULL WHERE id = ?", post.id)
            try changes.emit(.city(post.cityID))
        }
    }

    /// What undoing a log entry did (issue 45 #6).
    enum Undone: Equatable {
        /// The removed post shows again.
        case restored
        /// The ban is lifted, and the posts removed with it ("remove everything and ban") show
        /// again: how many.
        case lifted(posts: Int)
        /// Nothing to undo: already undone, the post deleted since, or an entry that undoes
        /// nothing (a restore, an unban).
        case nothing
    }

    /// Undoes the decision logged as `entryID`, with `reason` (logged as the undo's own entries):
    /// a removal's post is restored; a ban is lifted, with every post its "remove everything"
    /// removed in the same decision (same admin, person and moment). One transaction.
    func undo(entryID: Int64, by admin: User, reason: String, now: Date) throws -> Undone {
        try database.write(.cluster) { db, changes in  // undoes a decision of any kind
            guard let entry = try db.one("SELECT action, post_id, user_id, admin_id, created_at FROM moderation_log WHERE id = ?", [entryID], {
                (action: $0.string(0), postID: $0.optionalInt64(1), userID: $0.optionalInt64(2), adminID: $0.optionalInt64(3), at: $0.double(4))
            }) else { throw HTTPError(.notFound) }
            /// Shows a post again if it is still removed; false when it is not (or is gone).
            func restore(_ postID: Int64) throws -> Bool {
                guard let post = try Self.post(id: postID, removedOnly: true, db) else { return false }
                try applyRestore(post, by: admin, reason: reason, now: now, db, changes)
                return true
            }
            switch entry.action {
            case "remove":
                guard let postID = entry.postID else { return .nothing }
                return try restore(postID) ? .restored : .nothing
            case "ban":
                guard let userID = entry.userID, let user = try User.find(id: userID, db),
                      try db.execute("UPDATE bans SET lifted_at = ? WHERE user_id = ? AND created_at = ? AND lifted_at IS NULL",
                                     now, userID, entry.at) > 0
                else { return .nothing }
                try changes.emit(.everything)
                try log(db, admin: admin, action: "unban", userID: userID, username: user.username, reason: reason, now: now)
                let removedWith = try db.all("""
                    SELECT post_id FROM moderation_log WHERE action = 'remove' AND user_id = ? AND created_at = ?
                      AND admin_id IS NOT DISTINCT FROM ? AND post_id IS NOT NULL ORDER BY id
                    """, [userID, entry.at, entry.adminID]) { $0.int64(0) }
                var restored = 0
                for postID in removedWith where try restore(postID) { restored += 1 }
                return .lifted(posts: restored)
            default:
                return .nothing
            }
        }
    }

    /// An entry of the log.
    struct LogEntry {
        let id: Int64
        let admin: String, action: String, postID: Int64?, username: String?, citySlug: String?, reason: String, createdAt: Double
        /// The city's names and the start of the post's text (nil once the post is deleted).
        let cityNameEn: String?, cityNameKo: String?, excerpt: String?
    }

    /// How much of a post the log quotes.
    static let excerptLength = 80

    /// The log, newest first, optionally of one admin and one action.
    func log(admin: String?, action: String?, limit: Int, offset: Int) throws -> [LogEntry] {
        try database.readStatement { db in
            try db.all("""
                SELECT l.admin_username, l.action, l.post_id, l.username, c.slug, l.reason, l.created_at, c.name_en, c.name_ko,
                       substr(p.body, 1, ?5), l.id
                FROM moderation_log l LEFT JOIN cities c ON c.id = l.city_id LEFT JOIN posts p ON p.id = l.post_id
                WHERE (CAST(?1 AS TEXT) IS NULL OR l.admin_username = ?1) AND (CAST(?2 AS TEXT) IS NULL OR l.action = ?2)
                ORDER BY l.id DESC LIMIT ?3 OFFSET ?4
                """, [admin, action, limit, offset, Self.excerptLength]) { row in
                LogEntry(id: row.int64(10), admin: row.string(0), action: row.string(1), postID: row.optionalInt64(2), username: row.optionalString(3),
                         citySlug: row.optionalString(4), reason: row.string(5), createdAt: row.double(6),
                         cityNameEn: row.optionalString(7), cityNameKo: row.optionalString(8), excerpt: row.optionalString(9))
            }
        }
    }

    /// A ban, current or past, as the look-up page lists it.
    struct BanRecord {
        let reason: String, createdAt: Double, until: Double?, liftedAt: Double?
    }

    private static func banRecord(_ row: any SQLRow) -> BanRecord {
        BanRecord(reason: row.string(0), createdAt: row.double(1), until: row.optionalDouble(2), liftedAt: row.optionalDouble(3))
    }

    /// A deleted account's name: nil if it is not a retired name; else the bans it had.
    func retiredBans(usernameKey key: String) throws -> [BanRecord]? {
        try database.read { db in
            guard try db.exists("SELECT 1 FROM retired_usernames WHERE username_key = ?", key) else { return nil }
            return try db.all("SELECT reason, created_at, until, lifted_at FROM retired_bans WHERE username_key = ? ORDER BY id DESC",
                              [key], Self.banRecord)
        }
    }

    /// What moderators see of a person.
    struct Person {
        struct Post { let id: Int64, body: String, citySlug: String, isHidden: Bool, isRemoved: Bool, removedReason: String? }
        /// A report made or received: the post, the other person (reported or reporting), reason, outcome.
        struct Report { let postID: Int64, reason: String, outcome: String, other: String }
        let posts: [Post], made: [Report], received: [Report], blocksReceived: Int, bans: [BanRecord], activeBan: Ban?
    }

    func person(_ id: Int64, now: Date) throws -> Person {
        try database.read { db in
            let posts = try db.all("""
                SELECT p.id, p.body, p.hidden_at, p.removed_at, p.removed_reason, c.slug FROM posts p JOIN cities c ON c.id = p.city_id
                WHERE p.user_id = ? ORDER BY p.id DESC LIMIT 100
                """, [id]) { row in
                Person.Post(id: row.int64(0), body: row.string(1), citySlug: row.string(5), isHidden: !row.isNull(2),
                            isRemoved: !row.isNull(3), removedReason: row.optionalString(4))
            }
            func reports(_ sql: String) throws -> [Person.Report] {
                try db.all(sql, [id]) { Person.Report(postID: $0.int64(0), reason: $0.string(1), outcome: $0.string(2), other: $0.string(3)) }
            }
            let made = try reports("""
                SELECT r.post_id, r.reason, r.outcome, coalesce(u.username, '') AS other FROM reports r
                JOIN posts p ON p.id = r.post_id LEFT JOIN users u ON u.id = p.user_id WHERE r.reporter_id = ? ORDER BY r.id DESC LIMIT 100
                """)
            let received = try reports("""
                SELECT r.post_id, r.reason, r.outcome, coalesce(u.username, '') AS other FROM reports r
                JOIN posts p ON p.id = r.post_id LEFT JOIN users u ON u.id = r.reporter_id WHERE p.user_id = ? ORDER BY r.id DESC LIMIT 100
                """)
            return Person(posts: posts, made: made, received: received,
                          blocksReceived: try db.integer("SELECT count(*) FROM blocks WHERE blocked_id = ?", id),
                          bans: try db.all("SELECT reason, created_at, until, lifted_at FROM bans WHERE user_id = ? ORDER BY id DESC",
                                           [id], Self.banRecord),
                          activeBan: try Ban.active(userID: id, now: now, db))
        }
    }

    /// A city's public record: removals and bans, newest first, without reporters.
    struct PublicEntry {
        let action: String, username: String?, reason: String, createdAt: Date
        /// The name boards show, while the account exists.
        var displayName: String?
    }

    func publicRecord(cityID: Int64) throws -> [PublicEntry] {
        try database.readStatement { db in
            try db.all("""
                SELECT l.action, l.username, l.reason, l.created_at, u.display_name FROM moderation_log l LEFT JOIN users u ON u.id = l.user_id
                WHERE l.city_id = ? AND l.action IN ('remove', 'ban') ORDER BY l.id DESC LIMIT 100
                """, [cityID]) {
                PublicEntry(action: $0.string(0), username: $0.optionalString(1), reason: $0.string(2), createdAt: $0.date(3),
                            displayName: $0.optionalString(4))
            }
        }
    }
}
