import Crypto
import Foundation

/// A browser a member lets the site push to.
struct PushSubscription: Sendable {
    var id: Int64
    var endpoint: String
    var p256dh: String
    var auth: String
    var browser: String
    var createdAt: Date
    var lastUsedAt: Date?
}

/// Push's data: the site's VAPID key, members' subscriptions, and the pushes waiting to go.
struct PushStore: Sendable {
    let database: AppDatabase

    /// At most this many browsers a member; a new one past it replaces the longest unused.
    static let subscriptionsPerMember = 10
    /// A push not delivered within a day is no longer worth it (the notice is on the site); a
    /// rain alert's, past its window.
    static let keptFor: TimeInterval = 86_400

    /// The site's key pair, made by whichever node asks first (every node then signs alike).
    func vapid(now: Date) throws -> WebPush.VAPID {
        try database.write(.cluster) { db in  // one key pair for every node
            let fresh = P256.Signing.PrivateKey()
            try db.execute("""
                INSERT INTO push_keys (id, private_key, public_key, created_at) VALUES (1, ?, ?, ?) ON CONFLICT (id) DO NOTHING
                """, Tokens.base64URL(Array(fresh.rawRepresentation)), Tokens.base64URL(Array(fresh.publicKey.x963Representation)), now)
            let stored = try db.one("SELECT private_key FROM push_keys WHERE id = 1", []) { $0.string(0) } ?? ""
            guard let raw = Tokens.base64URLDecoded(stored), let key = try? P256.Signing.PrivateKey(rawRepresentation: raw) else {
                throw WebPush.Failure(description: "the stored VAPID key is damaged")
            }
            return WebPush.VAPID(key: key)
        }
    }

    /// Keeps the browser's subscription for `userID` (one endpoint is one browser: a browser
    /// that changes hands moves with it).
    func subscribe(userID: Int64, endpoint: String, p256dh: String, auth: String, browser: String, now: Date) throws {
        try database.write(.subjects) { db in  // an endpoint is unique by the schema
            try db.execute("""
                INSERT INTO push_subscriptions (user_id, endpoint, p256dh, auth, browser, created_at) VALUES (?, ?, ?, ?, ?, ?)
                ON CONFLICT (endpoint) DO UPDATE SET user_id = excluded.user_id, p256dh = excluded.p256dh, auth = excluded.auth,
                    browser = excluded.browser
                """, userID, endpoint, p256dh, auth, browser, now)
            try db.execute("""
                DELETE FROM push_subscriptions WHERE user_id = ?1 AND id NOT IN (
                    SELECT id FROM push_subscriptions WHERE user_id = ?1 ORDER BY coalesce(last_used_at, created_at) DESC LIMIT ?2)
                """, userID, Self.subscriptionsPerMember)
        }
    }

    func unsubscribe(userID: Int64, endpoint: String) throws {
        // Locks: the member's own subscription.
        try database.write(.subjects) { try $0.execute("DELETE FROM push_subscriptions WHERE user_id = ? AND endpoint = ?", userID, endpoint) }
    }

    func unsubscribe(userID: Int64, id: Int64) throws {
        // Locks: the member's own subscription.
        try database.write(.subjects) { try $0.execute("DELETE FROM push_subscriptions WHERE user_id = ? AND id = ?", userID, id) }
    }

    func subscriptions(userID: Int64) throws -> [PushSubscription] {
        try database.readStatement { db in
            try db.all("""
                SELECT id, endpoint, p256dh, auth, browser, created_at, last_used_at FROM push_subscriptions WHERE user_id = ? ORDER BY id
                """, [userID]) { row in
                PushSubscription(id: row.int64(0), endpoint: row.string(1), p256dh: row.string(2), auth: row.string(3),
                                 browser: row.string(4), createdAt: row.date(5), lastUsedAt: row.optionalDate(6))
            }
        }
    }

    /// A notice to push to every browser of its member (inside the transaction that tells it),
    /// not before `notBefore` (the end of their quiet hours), and worth it until `expires`.
    static func enqueue(notification: Int64, for userID: Int64, now: Double, notBefore: Double, expires: Double,
                        _ db: any SQLConnection) throws {
        try db.execute("""
            INSERT INTO push_queue (subscription_id, notification_id, created_at, expires_at, next_attempt_at)
            SELECT id, ?, ?, ?, ? FROM push_subscriptions WHERE user_id = ?
            """, notification, now, expires, notBefore, userID)
    }

    /// A push claimed to send now: its subscription, the notice and its member.
    struct Due: Sendable {
        var id: Int64
        var attempts: Int
        var subscription: PushSubscription
        var notificationID: Int64
        var userID: Int64
        var language: Language
    }

    /// Claims the oldest push due now for `claimFor` seconds (one sender per push, across
    /// nodes); first drops what expired, and says how many.
    func claim(now: Date, claimFor: TimeInterval) throws -> (due: Due?, expired: Int) {
        try database.write(.cluster) { db in  // one sender a push across nodes
            let expired = try db.execute("DELETE FROM push_queue WHERE expires_at <= ?", now)
            let free = "(claimed_until IS NULL OR claimed_until <= ?1)"
            guard let (id, attempts, subscriptionID, notificationID) = try db.one("""
                UPDATE push_queue SET claimed_until = ?2, attempts = attempts + 1
                WHERE id = (SELECT id FROM push_queue WHERE next_attempt_at <= ?1 AND \(free) ORDER BY id LIMIT 1) AND \(free)
                RETURNING id, attempts, subscription_id, notification_id
                """, [now, now.addingTimeInterval(claimFor)], { ($0.int64(0), $0.int(1), $0.int64(2), $0.int64(3)) }) else {
                return (nil, expired)
            }
            let due = try db.one("""
                SELECT s.id, s.endpoint, s.p256dh, s.auth, s.browser, s.created_at, s.last_used_at, s.user_id, u.language
                FROM push_subscriptions s JOIN users u ON u.id = s.user_id WHERE s.id = ?
                """, [subscriptionID]) { row in
                Due(id: id, attempts: attempts,
                    subscription: PushSubscription(id: row.int64(0), endpoint: row.string(1), p256dh: row.string(2), auth: row.string(3),
                                                   browser: row.string(4), createdAt: row.date(5), lastUsedAt: row.optionalDate(6)),
                    notificationID: notificationID, userID: row.int64(7), language: Language(rawValue: row.string(8)) ?? .en)
            }
            return (due, expired)
        }
    }

    /// Delivered: gone from the queue, the browser last used now.
    func delivered(_ due: Due, now: Date) throws {
        try database.write(.subjects) { db in  // one claimed push's row
            try db.execute("DELETE FROM push_queue WHERE id = ?", due.id)
            try db.execute("UPDATE push_subscriptions SET last_used_at = ? WHERE id = ?", now, due.subscription.id)
        }
    }

    func drop(_ id: Int64) throws {
        try database.write(.subjects) { try $0.execute("DELETE FROM push_queue WHERE id = ?", id) }  // one push's row
    }

    /// The push service says the browser is gone (404, 410): so is the subscription, and all its pushes.
    func forget(subscription id: Int64) throws {
        try database.write(.subjects) { try $0.execute("DELETE FROM push_subscriptions WHERE id = ?", id) }  // one subscription and its pushes
    }

    func retry(_ id: Int64, at: Date) throws {
        // Locks: one push's row.
        try database.write(.subjects) { try $0.execute("UPDATE push_queue SET claimed_until = NULL, next_attempt_at = ? WHERE id = ?", at, id) }
    }
}
