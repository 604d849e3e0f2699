import Foundation
import GRDB
import HTTPServer

/// A person with an account.
public struct User: Codable, Sendable, Equatable, FetchableRecord, MutablePersistableRecord {
    public static let databaseTableName = "users"

    public var id: Int64?
    public var username: String
    public var usernameKey: String
    public var displayName: String
    public var passwordHash: String
    public var role: String
    public var createdAt: Date

    enum CodingKeys: String, CodingKey {
        case id, username, role
        case usernameKey = "username_key", displayName = "display_name", passwordHash = "password_hash", createdAt = "created_at"
    }

    public var isAdmin: Bool { role == "admin" }

    public mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }

    public static func databaseDateEncodingStrategy(for column: String) -> DatabaseDateEncodingStrategy { .timeIntervalSince1970 }
    public static func databaseDateDecodingStrategy(for column: String) -> DatabaseDateDecodingStrategy { .timeIntervalSince1970 }
}

extension User {
    static func find(username: String, _ db: Database) throws -> User? {
        try User.filter(Column("username_key") == username.lowercased()).fetchOne(db)
    }

    /// By id, through a cached statement (every signed-in request asks).
    static func find(id: Int64, _ db: Database) throws -> User? {
        try User.fetchOne(db.cachedStatement(sql: "SELECT * FROM users WHERE id = ?"), arguments: [id])
    }

    /// The person a `/users/{username}`-style route names, or 404.
    static func named(_ request: Request, in database: AppDatabase) throws -> User {
        guard let user = try database.pool.read({ try User.find(username: request.parameters["username"] ?? "", $0) }) else {
            throw HTTPError(.notFound)
        }
        return user
    }
}

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

/// Rate limits kept in SQLite, so they hold across restarts and every worker thread sees them.
public struct RateLimit: Sendable {
    public var limit: Int
    public var window: TimeInterval

    public init(limit: Int, window: TimeInterval) {
        self.limit = limit
        self.window = window
    }

    /// Records an attempt in `bucket`; throws 429 with `Retry-After` when over the limit.
    /// Buckets are stored as a SHA-256 digest (a bucket may hold a username as typed, of any
    /// length), and expired rows of every bucket are purged once a minute.
    func hit(_ bucket: String, now: Date, _ db: Database) throws {
        try Self.purgeIfDue(now: now, db)
        let bucket = Tokens.digest(bucket)
        let since = now.timeIntervalSince1970 - window
        try db.execute(sql: "DELETE FROM rate_events WHERE bucket = ? AND at <= ?", arguments: [bucket, since])
        let times = try Double.fetchAll(db, sql: "SELECT at FROM rate_events WHERE bucket = ? ORDER BY at", arguments: [bucket])
        if times.count >= limit, let oldest = times.first {
            let retry = max(1, Int((oldest + window - now.timeIntervalSince1970).rounded(.up)))
            throw HTTPError(.tooManyRequests, headers: HTTPHeaders([("Retry-After", String(retry))]))
        }
        try db.execute(sql: "INSERT INTO rate_events (bucket, at) VALUES (?, ?)", arguments: [bucket, now.timeIntervalSince1970])
    }

    /// The longest window any limit uses; rows older than it count for nothing.
    static let longestWindow: TimeInterval = 86_400
    private static let purgeLock = NSLock()
    nonisolated(unsafe) private static var lastPurge: Double = 0 // guarded by purgeLock

    /// Deletes every expired rate event and every session past its idle limit, at most once a minute.
    static func purgeIfDue(now: Date, _ db: Database) throws {
        let seconds = now.timeIntervalSince1970
        let due = purgeLock.withLock { () -> Bool in
            guard abs(seconds - lastPurge) >= 60 else { return false }
            lastPurge = seconds
            return true
        }
        guard due else { return }
        try db.execute(sql: "DELETE FROM rate_events WHERE at <= ?", arguments: [seconds - longestWindow])
        try db.execute(sql: "DELETE FROM sessions WHERE last_seen_at <= ?", arguments: [seconds - SessionStore.defaultIdleLimit])
    }
}

extension Optional where Wrapped == Bool {
    /// A `SELECT 1 …` answer: true only when a row said so.
    var isTrue: Bool { self ?? false }
}

extension User {
    /// The id of a user read from (or just written to) the database. One without an id would be
    /// a programming error: it fails the request with a 500, never the process.
    func persistedID() throws -> Int64 {
        guard let id else { throw HTTPError(.internalServerError, message: "a user without an id") }
        return id
    }
}
