import Foundation

/// Sessions: a random token in a cookie, only its digest in the database, expiring after
/// `idleLimit` without use, with the CSRF secret of the session.
struct SessionStore: Sendable {
    let database: AppDatabase
    var idleLimit: TimeInterval = SessionStore.defaultIdleLimit
    static let defaultIdleLimit: TimeInterval = 30 * 24 * 3600
    static let keeping = Keeping("sessions", "last_seen_at", for: defaultIdleLimit)
    static let cookieName = "session"

    struct Session {
        let tokenHash: String
        let user: User
        let csrfSecret: String
        /// The ban in force for the user, read in the same transaction.
        let ban: Ban?
        /// Notices the user has not read (every page's header shows the count).
        let unread: Int
        /// For an admin, the posts whose reports wait for a decision (0 for anyone else).
        let reportsWaiting: Int
    }

    /// Starts a session for `userID`; returns the cookie token. Any previous session token the
    /// browser had is revoked by the caller (rotation at sign-in).
    func create(userID: Int64, now: Date, _ db: any SQLConnection) throws -> String {
        let token = Tokens.random()
        try db.execute("INSERT INTO sessions (token_hash, user_id, csrf_secret, created_at, last_seen_at) VALUES (?, ?, ?, ?, ?)",
                       Tokens.digest(token), userID, Tokens.random(), now, now)
        try Standing.visited(userID, now: now, db, nil)
        return token
    }

    /// The SELECT list `find` reads, in order (`s` the session, `u` its person, `b` the ban in
    /// force): the list and the reader come from this one enum, so a column added or moved
    /// cannot be read from the wrong place.
    enum Column: Int, CaseIterable {
        case csrfSecret, lastSeenAt, userID, username, usernameKey, displayName, role, createdAt
        case banReason, banUntil, banID, unread, reportsWaiting, timeZoneSource

        var sql: String {
            switch self {
            case .csrfSecret: "s.csrf_secret"
            case .lastSeenAt: "s.last_seen_at"
            case .userID: "u.id"
            case .username: "u.username"
            case .usernameKey: "u.username_key"
            case .displayName: "u.display_name"
            case .role: "u.role"
            case .createdAt: "u.created_at"
            case .banReason: "b.reason"
            case .banUntil: "b.until"
            case .banID: "b.id"
            case .unread: "(SELECT count(*) FROM notifications n WHERE n.user_id = u.id AND n.read_at IS NULL)"
            case .timeZoneSource: "u.time_zone_source"
            // Posts with reports waiting and photos waiting for a look (issue 65 #5), each post once.
            case .reportsWaiting: "(CASE WHEN u.role = 'admin' THEN (SELECT count(*) FROM (SELECT r.post_id FROM reports r WHERE r.outcome = 'pending' "
                + "UNION SELECT w.id FROM posts w WHERE w.photo_state IN ('waiting', 'reported') AND w.removed_at IS NULL) waiting) ELSE 0 END)"
            }
        }
    }

    /// Session, person, ban in force and unread notices in one cached statement, read by column
    /// position (`Column`): this runs before every signed-in request.
    private static let findSQL = """
        SELECT \(Column.allCases.map(\.sql).joined(separator: ", "))
        FROM sessions s JOIN users u ON u.id = s.user_id
        LEFT JOIN bans b ON b.id = (\(Ban.activeIDSQL))
        WHERE s.token_hash = ?1
        """

    /// The live session for a cookie token; touches it at most once an hour.
    func find(token: String, now: Date) throws -> Session? {
        let hash = Tokens.digest(token)
        let found = try database.readStatement { db -> (User, String, Double, Ban?, Int, Int)? in
            try db.one(Self.findSQL, [hash, now]) { row in
                typealias C = Column
                var user = User(id: row.int64(C.userID.rawValue), username: row.string(C.username.rawValue),
                                usernameKey: row.string(C.usernameKey.rawValue), displayName: row.string(C.displayName.rawValue),
                                role: row.string(C.role.rawValue),
                                createdAt: row.date(C.createdAt.rawValue))
                user.timeZoneUnset = row.int(C.timeZoneSource.rawValue) == MemberTimeZone.Source.unset.rawValue
                let ban = row.isNull(C.banID.rawValue) ? nil : Ban(reason: row.string(C.banReason.rawValue), until: row.optionalDate(C.banUntil.rawValue))
                return (user, row.string(C.csrfSecret.rawValue), row.double(C.lastSeenAt.rawValue), ban, row.int(C.unread.rawValue),
                        row.int(C.reportsWaiting.rawValue))
            }
        }
        guard let (user, csrf, lastSeen, ban, unread, reportsWaiting) = found else { return nil }
        if now.timeIntervalSince1970 - lastSeen > idleLimit {
            try revoke(tokenHash: hash)
            return nil
        }
        if now.timeIntervalSince1970 - lastSeen > 3600 || Standing.differentDays(now.timeIntervalSince1970, lastSeen) {
            do {
                try database.write(.subjects) { db, changes in
                    try db.lock(.member(user.id)) // before the session's row, as sign-in takes them
                    try db.execute("UPDATE sessions SET last_seen_at = ? WHERE token_hash = ?", now, hash)
                    try Standing.visited(user.id, now: now, db, changes)
                }
            } catch let error as SQLError where error.isTemporary {
                // The touch can wait an hour (a full disk, a busy database): reading goes on.
            }
        }
        return Session(tokenHash: hash, user: user, csrfSecret: csrf, ban: ban, unread: unread, reportsWaiting: reportsWaiting)
    }

    func revoke(tokenHash: String) throws {
        try database.write(.subjects) { db in try db.execute("DELETE FROM sessions WHERE token_hash = ?", tokenHash) }  // one session's row
    }

    /// Ends every session of the person, and their browsers' standing (`KnownDevices`): after a
    /// ban, a reset or a recovery, whoever used the account before is a stranger to it.
    static func revokeAll(userID: Int64, _ db: any SQLConnection) throws {
        try db.execute("DELETE FROM sessions WHERE user_id = ?", userID)
        try KnownDevices.forgetAll(userID: userID, db)
    }
}
