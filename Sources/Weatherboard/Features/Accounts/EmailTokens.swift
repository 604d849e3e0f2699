import Foundation

/// Single-use links sent by mail, stored as the SHA-256 of their token.
enum EmailTokens {
    static let keeping = Keeping("email_tokens", "expires_at")

    enum Purpose: String {
        case verify, reset
        var validFor: TimeInterval { self == .reset ? 3600 : 86_400 }
    }

    /// A new token for `userID`; the member's earlier ones of the same purpose stop working
    /// (the newest link is the one that counts).
    static func make(_ purpose: Purpose, userID: Int64, address: String, now: Date, _ db: any SQLConnection) throws -> String {
        let token = Tokens.random()
        try db.execute("DELETE FROM email_tokens WHERE user_id = ? AND purpose = ?", userID, purpose.rawValue)
        try db.execute("""
            INSERT INTO email_tokens (token_hash, user_id, purpose, address, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)
            """, Tokens.digest(token), userID, purpose.rawValue, address, now, now.addingTimeInterval(purpose.validFor))
        return token
    }

    /// The member and address a link is for, while it is unused and unexpired.
    static func find(_ token: String, _ purpose: Purpose, now: Date, _ db: any SQLConnection) throws -> (userID: Int64, address: String)? {
        guard Tokens.isWellFormed(token) else { return nil }
        return try db.one("SELECT user_id, address FROM email_tokens WHERE token_hash = ? AND purpose = ? AND expires_at > ?",
                          [Tokens.digest(token), purpose.rawValue, now]) { ($0.int64(0), $0.string(1)) }
    }

    /// Uses a link: what `find` gives, and the token gone (a second use finds nothing).
    static func use(_ token: String, _ purpose: Purpose, now: Date, _ db: any SQLConnection) throws -> (userID: Int64, address: String)? {
        guard let found = try find(token, purpose, now: now, db) else { return nil }
        try db.execute("DELETE FROM email_tokens WHERE token_hash = ?", Tokens.digest(token))
        return found
    }

    /// Every reset link of `userID` stops working (they signed in, or reset the password).
    static func dropResets(userID: Int64, _ db: any SQLConnection) throws {
        try db.execute("DELETE FROM email_tokens WHERE user_id = ? AND purpose = 'reset'", userID)
        try MailQueue.dropResets(userID: userID, db)
    }
}
