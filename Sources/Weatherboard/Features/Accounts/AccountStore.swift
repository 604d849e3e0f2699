import Foundation

/// Accounts' data: people, the limits their attempts count against, their sessions' start and the
/// records an account's deletion must leave (blocks as hidden posts, the name reserved, the bans).
struct AccountStore: Sendable {
    let database: AppDatabase

    func user(named username: String) throws -> User? {
        try database.readStatement { try User.find(username: username, $0) }
    }

    /// The person named `username` and their password's hash, for checking a password at sign-in.
    func credentials(username: String) throws -> (user: User, passwordHash: String)? {
        try database.readStatement { db in
            // The site's own account has no password anyone knows: it is not there to sign in to.
            try db.one("SELECT \(User.columns), password_hash FROM users WHERE username_key = ? AND is_system = 0", [username.lowercased()]) {
                (User(row: $0), $0.string(User.columnCount))
            }
        }
    }

    /// The hash of `userID`'s password, for checking it before a change only they may make.
    func passwordHash(userID: Int64) throws -> String? {
        try database.readStatement { try $0.one("SELECT password_hash FROM users WHERE id = ?", [userID]) { $0.string(0) } }
    }

    /// Every admin's username and display name but `userID`'s (names others may not look like).
    func adminNames(except userID: Int64?) throws -> [(username: String, displayName: String)] {
        try database.readStatement { db in
            try db.all("SELECT username, display_name FROM users WHERE role = 'admin' AND id <> ?", [userID ?? -1]) {
                (username: $0.string(0), displayName: $0.string(1))
            }
        }
    }

    /// Counts one attempt in each bucket, together; throws 429 when any is over its limit.
    func count(_ attempts: [(limit: RateLimit, bucket: String)], now: Date) throws {
        try database.write(.subjects) { db in
            for attempt in attempts { try attempt.limit.hit(attempt.bucket, now: now, db) }
        }
    }

    /// A sign-in attempt: the per-address limits first (an address over them costs the account
    /// nothing); then, unless the browser is one the account knows (`KnownDevices`), the
    /// account's guessing brake and the site's; in one transaction. Returns the place its
    /// password check takes in line.
    func countSignIn(_ attempts: [(limit: RateLimit, bucket: String)], on account: String, device: (token: String?, userID: Int64?),
                     brake: GuessingBrake, siteBrake: SiteWideBrake, now: Date) throws -> ConcurrencyLimit.Priority {
        try database.write(.subjects) { db in
            for attempt in attempts { try attempt.limit.hit(attempt.bucket, now: now, db) }
            if let userID = device.userID, try KnownDevices.isKnown(device.token, userID: userID, db) { return .knownDevice }
            let priority: ConcurrencyLimit.Priority = try brake.attempt(on: account, now: now, db) < brake.quietBelow ? .quietAccount : .other
            try siteBrake.admit(priority, now: now, db)
            return priority
        }
    }

    /// A password that did not match (or an account that has none, or no account): counted for
    /// the site's brake, and against the known browser that sent it, if any.
    func signInFailed(knownDevice: String?, now: Date) throws {
        try database.write(.subjects) { db in
            try SiteWideBrake.failed(now: now, db)
            if let knownDevice { try KnownDevices.failed(knownDevice, now: now, db) }
        }
    }

    /// Whether `username` may be taken: no account has it, in any case, and no deleted one had it.
    func isAvailable(_ username: String) throws -> Bool {
        try database.read { try Self.isAvailable(username, $0) }
    }

    private static func isAvailable(_ username: String, _ db: any SQLConnection) throws -> Bool {
        try User.find(username: username, db) == nil
            && !db.exists("SELECT 1 FROM retired_usernames WHERE username_key = ?", username.lowercased())
    }

    /// Counts one attempt against `attempts` (when it has room) and says whether `made` has room:
    /// the seconds to wait when either is full, nil when the attempt may go on.
    func attempt(_ attempts: RateLimit, _ attemptBucket: String, checking made: RateLimit, _ madeBucket: String, now: Date) throws -> Int? {
        try database.write(.subjects) { db in  // the limits' buckets are locked where they are counted (RateLimit)
            if let wait = try attempts.wait(attemptBucket, now: now, db) { return wait }
            try attempts.hit(attemptBucket, now: now, db)
            return try made.wait(madeBucket, now: now, db)
        }
    }

    /// Creates the account and its first session (the cookie token), counting it against
    /// `limit` in the same transaction; nil when the name is taken or reserved (a deleted
    /// account's), and nothing written when the limit is full (429).
    /// An address given at sign-up gets its confirmation link, in the language signed up in.
    /// `then` writes what else the account starts with (its passkey), in the same transaction.
    func signUp(_ person: NewUser, email: MailAddress?, language: Language, counting limit: (RateLimit, String),
                sessions: SessionStore, now: Date, then: (Int64, any SQLConnection) throws -> Void = { _, _ in }) throws -> String? {
        try database.write(.subjects) { db in  // a name is unique by the schema; the limit's bucket is locked where it is counted
            guard try Self.isAvailable(person.username, db) else { return nil }
            try limit.0.hit(limit.1, now: now, db)
            let id = try person.insert(db).id
            try db.execute("UPDATE users SET language = ? WHERE id = ?", language.rawValue, id)
            if let email { try MailQueue.enqueue(.verify, userID: id, to: email, language: language, now: now, db) }
            try then(id, db)
            return try sessions.create(userID: id, now: now, db)
        }
    }

    /// A new session for `userID`, ending the one the browser had (rotation at sign-in). Reset
    /// links still out stop working (the member remembered), and mail goes out in the language
    /// they last signed in with.
    /// The browser becomes one the account knows, under a new token (`KnownDevices`).
    func signIn(userID: Int64, replacing oldTokenHash: String?, device oldDevice: String?, language: Language, sessions: SessionStore,
                now: Date) throws -> (session: String, device: String) {
        try database.write(.subjects) { db in
            // The member's browsers are kept to a number, their sessions and visits counted.
            try db.lock(.member(userID))
            if let oldTokenHash { try db.execute("DELETE FROM sessions WHERE token_hash = ?", oldTokenHash) }
            try EmailTokens.dropResets(userID: userID, db)
            try db.execute("UPDATE users SET language = ? WHERE id = ?", language.rawValue, userID)
            let device = try KnownDevices.remember(userID: userID, replacing: oldDevice, now: now, db)
            return (try sessions.create(userID: userID, now: now, db), device)
        }
    }

    func activeBan(userID: Int64, now: Date) throws -> Ban? {
        try database.readStatement { try Ban.active(userID: userID, now: now, $0) }
    }

    /// The people `userID` blocked, most recent first: (username, display name).
    func blocked(by userID: Int64) throws -> [(username: String, displayName: String)] {
        try database.readStatement { db in
            try db.all("""
                SELECT u.username, u.display_name FROM blocks b JOIN users u ON u.id = b.blocked_id
                WHERE b.blocker_id = ? ORDER BY b.created_at DESC
                """, [userID]) { (username: $0.string(0), displayName: $0.string(1)) }
        }
    }

    /// The new display name: the boards that show the person's posts change.
    func rename(userID: Int64, to displayName: String) throws {
        try database.write(.subject(.member(userID))) { db, changes in  // their own name: nothing another write counts
            try db.execute("UPDATE users SET display_name = ? WHERE id = ?", displayName, userID)
            try changes.emitBoards(showingPostsOf: userID)
        }
    }

    /// The new password hash; every other session of the person ends.
    func changePassword(userID: Int64, hash: String, keepingSession tokenHash: String?) throws {
        try database.write(.subject(.member(userID))) { db in  // their own password and sessions
            try db.execute("UPDATE users SET password_hash = ? WHERE id = ?", hash, userID)
            try db.execute("DELETE FROM sessions WHERE user_id = ? AND token_hash <> ?", userID, tokenHash)
        }
    }

    /// Deletes the account. Sessions, blocks and bookmarks go with the row; posts stay as
    /// "deleted user"; reports stay without their reporter. What must outlive the account is kept
    /// first: the blocks on this person as hidden posts, the name as reserved, the bans as history.
    func delete(_ user: User, now: Date) throws {
        try database.write(.cluster) { db, changes in  // an account's rows in every table
            try changes.emit(.everything) // their name and posts' author, wherever shown
            try db.execute("""
                INSERT INTO hidden_posts (viewer_id, post_id)
                SELECT b.blocker_id, p.id FROM blocks b JOIN posts p ON p.user_id = b.blocked_id WHERE b.blocked_id = ?
                ON CONFLICT DO NOTHING
                """, user.id)
            try db.execute("INSERT INTO retired_usernames (username_key, retired_at) VALUES (?, ?) ON CONFLICT DO NOTHING",
                           user.usernameKey, now)
            try db.execute("""
                INSERT INTO retired_bans (username_key, reason, created_at, until, lifted_at)
                SELECT CAST(? AS TEXT), reason, created_at, until, lifted_at FROM bans WHERE user_id = ?
                """, user.usernameKey, user.id)
            try db.execute("DELETE FROM users WHERE id = ?", user.id)
        }
    }

    // MARK: - Admins (the command line)

    func create(_ person: NewUser) throws {
        try database.write(.cluster) { _ = try person.insert($0) }  // the command line's, rare
    }

    /// An admin's posts carry a badge: every page showing them changes.
    func promote(username: String) throws {
        try database.write(.cluster) { db, changes in  // every page that shows the person changes
            if try db.execute("UPDATE users SET role = 'admin' WHERE username_key = ?", username.lowercased()) > 0 {
                try changes.emit(.everything)
            }
        }
    }

    enum DemotionRefusal: Error { case notAnAdmin, lastAdmin }

    /// Makes an admin a regular user, unless they are the last admin.
    func demote(username: String) throws {
        try database.write(.cluster) { db, changes in  // counts the admins left
            guard let user = try User.find(username: username, db), user.isAdmin else { throw DemotionRefusal.notAnAdmin }
            guard try db.integer("SELECT count(*) FROM users WHERE role = 'admin'") > 1 else { throw DemotionRefusal.lastAdmin }
            try db.execute("UPDATE users SET role = 'user' WHERE id = ?", user.id)
            try changes.emit(.everything)
        }
    }
}

extension NewUser {
    /// Inserts the account; the stored person, with its id.
    func insert(_ db: any SQLConnection) throws -> User {
        let id = try db.one("""
            INSERT INTO users (username, username_key, display_name, password_hash, role, created_at, time_zone, time_zone_source)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id
            """, [username, username.lowercased(), displayName, passwordHash, role, createdAt, timeZone.name, timeZone.source.rawValue]) { $0.int64(0) } ?? 0
        return User(id: id, username: username, usernameKey: username.lowercased(), displayName: displayName,
                    role: role, createdAt: createdAt, timeZoneUnset: timeZone.source == .unset)
    }
}

extension Ban {
    /// The id of the ban in force for `u.id` at `?2`, as a subquery: the one rule of which
    /// ban counts, used here and joined by the session look-up.
    static let activeIDSQL = """
        SELECT id FROM bans WHERE user_id = u.id AND lifted_at IS NULL AND (until IS NULL OR until > ?2)
        ORDER BY until IS NULL DESC, until DESC LIMIT 1
        """

    /// The ban in force for `userID` at `now`, if any.
    static func active(userID: Int64, now: Date, _ db: any SQLConnection) throws -> Ban? {
        try db.one("""
            SELECT b.reason, b.until FROM (SELECT CAST(?1 AS BIGINT) AS id) u JOIN bans b ON b.id = (\(activeIDSQL))
            """, [userID, now]) { Ban(reason: $0.string(0), until: $0.optionalDate(1)) }
    }
}
