import Foundation

/// Standing that is earned (issue 45 #2): levels 0–2 from what a member does, kept on the
/// account (`users.level`) and computed again where what they count is written (a post, an
/// agreement received, a removal or restore, a day's first visit, a report made), so that
/// boards read it with the author like their name. A moderator may set a level by hand
/// (`users.level_set`, logged), which holds until they give it back to what is earned.
///
/// The thresholds and what each level may do are here and in docs/standing.md, nowhere else.
enum Standing {
    /// Level 1, the default once a member has been here a day and has a post that was kept.
    static let memberAfter: TimeInterval = 86_400
    static let memberPosts = 1
    /// Level 2: weeks of good standing.
    static let trustedAfter: TimeInterval = 21 * 86_400
    static let trustedPosts = 10
    static let trustedAgreements = 10
    static let trustedVisitDays = 7
    /// No post of theirs removed by a moderator within this long.
    static let trustedCleanFor: TimeInterval = 30 * 86_400

    /// What a level counts for.
    struct Level: Equatable {
        let value: Int
        /// Links in posts and replies. (Photos are taken from every level; a new member's wait,
        /// blurred, for a moderator or members with standing: `PhotoState`.)
        var mayPostLinks: Bool { value >= 1 }
        /// The pause between posts is this many times the site's.
        var paceFactor: Int { value == 0 ? 3 : 1 }
        /// Reports a day, of the site's `--reports-per-day`.
        func reportsPerDay(_ site: Int) -> Int { value == 0 ? max(1, site / 3) : site }
        /// A report's weight towards hiding a post, in halves of a member's: the threshold
        /// (`--report-threshold`) counts level 1 reports; a new member's weighs half, a trusted one's half again more.
        var reportWeight: Int { [1, 2, 3][value] }
    }

    /// `userID`'s level at `now`, earned or set, written back to the account when it changed;
    /// a change is announced for the boards their posts are on, so that kept pages showing it follow.
    @discardableResult
    static func refresh(_ userID: Int64, now: Date, _ db: any SQLConnection, _ changes: ChangeLog?) throws -> Level {
        // Counted and kept under the member's lock: two writes at once keep the level of the later counts.
        try db.lock(.member(userID))
        let now = now.timeIntervalSince1970
        // Posts and agreements are counted up to what a level asks (this runs on every post: a
        // member with thousands costs no more than one with ten).
        guard let person = try db.one("""
            SELECT u.level, u.level_set, u.created_at, u.visit_days, u.role,
                   (SELECT count(*) FROM (SELECT 1 FROM posts p WHERE p.user_id = u.id AND p.removed_at IS NULL AND p.hidden_at IS NULL
                                          LIMIT ?2) counted),
                   (SELECT count(*) FROM (SELECT 1 FROM reactions x JOIN posts p ON p.id = x.post_id WHERE p.user_id = u.id
                                          LIMIT ?3) counted),
                   (SELECT max(p.removed_at) FROM posts p WHERE p.user_id = u.id AND p.removed_at IS NOT NULL)
            FROM users u WHERE u.id = ?1
            """, [userID, max(trustedPosts, memberPosts), trustedAgreements], { row in
            (stored: row.int(0), set: row.isNull(1) ? nil : row.int(1), joined: row.double(2), visits: row.int(3),
             admin: row.string(4) == "admin", posts: row.int(5), agreements: row.int(6), lastRemoval: row.optionalDouble(7))
        }) else { return Level(value: 0) }
        let earned: Int
        if person.admin {
            earned = 2
        } else if now - person.joined >= trustedAfter && person.posts >= trustedPosts && person.agreements >= trustedAgreements
                    && person.visits >= trustedVisitDays && (person.lastRemoval.map { now - $0 >= trustedCleanFor } ?? true) {
            earned = 2
        } else if now - person.joined >= memberAfter && person.posts >= memberPosts {
            earned = 1
        } else {
            earned = 0
        }
        let level = person.set ?? earned
        if level != person.stored {
            try db.execute("UPDATE users SET level = ? WHERE id = ?", level, userID)
            try changes?.emitBoards(showingPostsOf: userID)
        }
        return Level(value: level)
    }

    /// A member's first sign-in or request of a (UTC) day counts a visit; with `changes`, their
    /// level is looked at again (a sign-in's is, at their next request).
    static func visited(_ userID: Int64, now: Date, _ db: any SQLConnection, _ changes: ChangeLog?) throws {
        try db.lock(.member(userID)) // before the row, as every other write on the member takes them
        let day = Int64(Int(clampedSeconds: now.timeIntervalSince1970) / 86_400)
        if try db.execute("""
            UPDATE users SET visit_days = visit_days + 1, last_visit_day = ? WHERE id = ? AND (last_visit_day IS NULL OR last_visit_day < ?)
            """, day, userID, day) > 0, let changes {
            try refresh(userID, now: now, db, changes)
        }
    }

    /// Whether `a` and `b` fall on different UTC days (a session is touched at a day's first request).
    static func differentDays(_ a: Double, _ b: Double) -> Bool {
        Int(clampedSeconds: a) / 86_400 != Int(clampedSeconds: b) / 86_400
    }

    /// `userID`'s level as kept, and the one a moderator set (nil: as earned).
    static func stored(_ userID: Int64, _ db: any SQLConnection) throws -> (level: Int, set: Int?) {
        try db.one("SELECT level, level_set FROM users WHERE id = ?", [userID]) { ($0.int(0), $0.isNull(1) ? nil : $0.int(1)) } ?? (0, nil)
    }

    /// A moderator's level for `userID` (nil: back to what is earned), written with its log entry by the caller.
    static func set(_ userID: Int64, to level: Int?, now: Date, _ db: any SQLConnection, _ changes: ChangeLog) throws {
        try db.execute("UPDATE users SET level_set = ? WHERE id = ?", level, userID)
        try refresh(userID, now: now, db, changes)
    }
}
