import Foundation
import HTTPServer

/// Browsers that signed in to an account with its password before: OWASP's "device cookies".
/// A sign-in from one goes ahead of a crowd of guesses (`ConcurrencyLimit.Priority`) and past
/// the account's and the site's brakes, so an owner is never kept out by guesses spread over
/// addresses and accounts. The cookie grants nothing but that place in line: the password is
/// still checked, and wrong passwords sent with it (`failuresAllowed`) end its standing, so a
/// stolen cookie buys a thief a few guesses at one account, no more.
enum KnownDevices {
    static let cookieName = "device"
    /// The longest a browser keeps a cookie (RFC 6265bis caps `Max-Age` at 400 days).
    static let keptFor: TimeInterval = 400 * 86_400
    static let keeping = Keeping("known_devices", "last_used_at", for: keptFor)
    /// Browsers remembered per account; a new one forgets the least recently used.
    static let perAccount = 5
    /// Wrong passwords a known browser may send in an hour before it is no longer known.
    static let failuresAllowed = 3

    /// The cookie: only sign-in pages see it, never another site's request.
    static func cookie(_ token: String, secure: Bool) -> SetCookie {
        SetCookie(name: cookieName, value: token, path: "/login", maxAge: Int(keptFor), secure: secure, sameSite: .strict)
    }

    /// The token a request carries, if it has the form of one.
    static func token(in request: Request) -> String? {
        request.cookie(cookieName).flatMap { Tokens.isWellFormed($0) ? $0 : nil }
    }

    /// Whether `token` names a browser known to `userID`'s account.
    static func isKnown(_ token: String?, userID: Int64, _ db: any SQLConnection) throws -> Bool {
        guard let token else { return false }
        return try db.exists("SELECT 1 FROM known_devices WHERE token_hash = ? AND user_id = ?", Tokens.digest(token), userID)
    }

    /// Remembers the browser that just signed in under a new token (its old one, if any, ends),
    /// keeping the `perAccount` most recently used; returns the token for its cookie.
    static func remember(userID: Int64, replacing old: String?, now: Date, _ db: any SQLConnection) throws -> String {
        if let old { try db.execute("DELETE FROM known_devices WHERE token_hash = ?", Tokens.digest(old)) }
        let token = Tokens.random()
        try db.execute("INSERT INTO known_devices (token_hash, user_id, created_at, last_used_at) VALUES (?, ?, ?, ?)",
                       Tokens.digest(token), userID, now, now)
        try db.execute("""
            DELETE FROM known_devices WHERE user_id = ? AND token_hash NOT IN
                (SELECT token_hash FROM known_devices WHERE user_id = ? ORDER BY last_used_at DESC, created_at DESC LIMIT ?)
            """, userID, userID, perAccount)
        return token
    }

    /// Counts a wrong password sent with a known browser's token; past `failuresAllowed` in an
    /// hour the browser is no longer known.
    static func failed(_ token: String, now: Date, _ db: any SQLConnection) throws {
        let bucket = "login:device:\(Tokens.digest(token))"
        do {
            try RateLimit(limit: failuresAllowed, window: 3600).hit(bucket, now: now, db)
        } catch let refusal as HTTPError where refusal.status == .tooManyRequests {
            try db.execute("DELETE FROM known_devices WHERE token_hash = ?", Tokens.digest(token))
        }
    }

    /// Forgets every browser of the account (its password was reset: whoever used it may have
    /// known the old one).
    static func forgetAll(userID: Int64, _ db: any SQLConnection) throws {
        try db.execute("DELETE FROM known_devices WHERE user_id = ?", userID)
    }
}
