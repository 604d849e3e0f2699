import Foundation

/// A message waiting to go out: whom it is for and what it is about, never its text or a live
/// link (a link's token is made as the message is sent).
struct QueuedMail: Sendable {
    enum Kind: String, Sendable {
        /// "Confirm this address": a link to `/email/verify/{token}`, good for a day.
        case verify
        /// "Reset your password": a link to `/password/reset/{token}`, good for an hour.
        case reset
        /// To the old address when another is asked for: `detail` is the new one, masked.
        case addressChanged = "address_changed"
        /// The daily or weekly digest: `detail` is the start of what it looks back on (seconds).
        case digest
        /// A notice by e-mail: `detail` is its id.
        case notice

        /// How long the message is worth sending: a reset an hour after it was asked for is
        /// no use (the person has asked again or given up).
        var keptFor: TimeInterval { self == .reset ? 3600 : 86_400 }
    }

    var id: Int64
    var userID: Int64
    var kind: Kind
    var address: String
    var detail: String
    var language: Language
    var attempts: Int
}

/// The queue's queries. Any node may send any message; a claim (`claimed_until`) makes one
/// sender per message, and a claim left by a node that died runs out after `claimFor`.
enum MailQueue {
    /// - Parameter expires: when it is no longer worth sending, if sooner than `kind.keptFor`.
    static func enqueue(_ kind: QueuedMail.Kind, userID: Int64, to address: MailAddress, detail: String = "", language: Language,
                        now: Date, expires: Date? = nil, _ db: any SQLConnection) throws {
        try db.execute("""
            INSERT INTO mail_queue (user_id, kind, address, detail, language, created_at, expires_at, next_attempt_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """, userID, kind.rawValue, address.text, detail, language.rawValue, now,
            min(expires ?? .distantFuture, now.addingTimeInterval(kind.keptFor)), now)
    }

    /// Claims the oldest message due now, for `claimFor` seconds; first drops what expired
    /// (the count dropped comes back for the log).
    static func claim(now: Date, claimFor: TimeInterval, _ db: any SQLConnection) throws -> (mail: QueuedMail?, expired: Int) {
        let expired = try db.execute("DELETE FROM mail_queue WHERE expires_at <= ?", now)
        let free = "(claimed_until IS NULL OR claimed_until <= ?1)"
        let mail = try db.one("""
            UPDATE mail_queue SET claimed_until = ?2, attempts = attempts + 1
            WHERE id = (SELECT id FROM mail_queue WHERE next_attempt_at <= ?1 AND \(free) ORDER BY id LIMIT 1) AND \(free)
            RETURNING id, user_id, kind, address, detail, language, attempts
            """, [now, now.addingTimeInterval(claimFor)]) { row in
            QueuedMail(id: row.int64(0), userID: row.int64(1), kind: QueuedMail.Kind(rawValue: row.string(2)) ?? .verify,
                       address: row.string(3), detail: row.string(4), language: Language(rawValue: row.string(5)) ?? .en,
                       attempts: row.int(6))
        }
        return (mail, expired)
    }

    static func sent(_ id: Int64, _ db: any SQLConnection) throws {
        try db.execute("DELETE FROM mail_queue WHERE id = ?", id)
    }

    /// Back in the queue, to be tried again at `retryAt`.
    static func failed(_ id: Int64, retryAt: Date, _ db: any SQLConnection) throws {
        try db.execute("UPDATE mail_queue SET claimed_until = NULL, next_attempt_at = ? WHERE id = ?", retryAt, id)
    }

    /// Reset messages not yet sent to `userID`: dropped when they sign in or reset the password.
    static func dropResets(userID: Int64, _ db: any SQLConnection) throws {
        try db.execute("DELETE FROM mail_queue WHERE user_id = ? AND kind = 'reset'", userID)
    }
}
