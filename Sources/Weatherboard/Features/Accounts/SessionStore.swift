import Foundation
import GRDB

/// Sessions: a random token in a cookie, only its digest in the database, expiring after
/// `idleLimit` without use, with the CSRF secret of the session.
struct SessionStore: Sendable {
    let database: AppDatabase
    var idleLimit: TimeInterval = SessionStore.defaultIdleLimit
    static let defaultIdleLimit: TimeInterval = 30 * 24 * 3600
    static let cookieName = "session"

    struct Session {
        let tokenHash: String
        let user: User
        let csrfSecret: String
        /// The ban in force for the user, read in the same transaction.
        let ban: Ban?
    }

    /// Starts a session for `userID`; returns the cookie token. Any previous session token the
    /// browser had is revoked by the caller (rotation at sign-in).
    func create(userID: Int64, now: Date, _ db: Database) throws -> String {
        let token = Tokens.random()
        try db.execute(sql: "INSERT INTO sessions (token_hash, user_id, csrf_secret, created_at, last_seen_at) VALUES (?, ?, ?, ?, ?)",
                       arguments: [Tokens.digest(token), userID, Tokens.random(), now.timeIntervalSince1970, now.timeIntervalSince1970])
        return token
    }

    /// Session, person and ban in force in one cached statement, read by column position: this
    /// runs before every signed-in request.
    private static let findSQL = """
        SELECT s.csrf_secret, s.last_seen_at, u.id, u.username, u.username_key, u.display_name, u.password_hash, u.role,
               u.created_at, b.reason, b.until, b.id
        FROM sessions s JOIN users u ON u.id = s.user_id
        LEFT JOIN bans b ON b.id = (\(Ban.activeIDSQL))
        WHERE s.token_hash = :hash
        """

    /// The live session for a cookie token; touches it at most once an hour.
    func find(token: String, now: Date) throws -> Session? {
        let hash = Tokens.digest(token)
        // Session, person and ban in force in one cached statement, read by column position:
        // this runs before every signed-in request.
        let found = try database.pool.unsafeRead { db -> (User, String, Double, Ban?)? in
            // A cursor's row reads the statement in place (`fetchOne` copies every column first);
            // the cursor must outlive the reads, since ending it resets the statement.
            let rows = try Row.fetchCursor(db.cachedStatement(sql: Self.findSQL), arguments: ["hash": hash, "now": now.timeIntervalSince1970])
            guard let row = try rows.next() else { return nil }
            defer { withExtendedLifetime(rows) {} }
            let user = User(id: row[2], username: row[3], usernameKey: row[4], displayName: row[5], passwordHash: row[6], role: row[7],
                            createdAt: Date(timeIntervalSince1970: row[8]))
            let ban = (row[11] as Int64?) == nil ? nil : Ban(reason: row[9], until: (row[10] as Double?).map(Date.init(timeIntervalSince1970:)))
            return (user, row[0], row[1], ban)
        }
        guard let (user, csrf, lastSeen, ban) = found else { return nil }
        if now.timeIntervalSince1970 - lastSeen > idleLimit {
            try revoke(tokenHash: hash)
            return nil
        }
        if now.timeIntervalSince1970 - lastSeen > 3600 {
            try database.pool.write { db in
                try db.execute(sql: "UPDATE sessions SET last_seen_at = ? WHERE token_hash = ?", arguments: [now.timeIntervalSince1970, hash])
            }
        }
        return Session(tokenHash: hash, user: user, csrfSecret: csrf, ban: ban)
    }

    func revoke(tokenHash: String) throws {
        try database.pool.write { db in try db.execute(sql: "DELETE FROM sessions WHERE token_hash = ?", arguments: [tokenHash]) }
    }

    static func revokeAll(userID: Int64, _ db: Database) throws {
        try db.execute(sql: "DELETE FROM sessions WHERE user_id = ?", arguments: [userID])
    }
}
