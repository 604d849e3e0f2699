import Foundation
import Synchronization
import HTTPServer

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
    func hit(_ bucket: String, now: Date, _ db: any SQLConnection) throws {
        try Self.purgeIfDue(now: now, db)
        let bucket = Tokens.digest(bucket)
        let since = now.timeIntervalSince1970 - window
        try db.execute("DELETE FROM rate_events WHERE bucket = ? AND at <= ?", bucket, since)
        let times = try db.all("SELECT at FROM rate_events WHERE bucket = ? ORDER BY at", [bucket]) { $0.double(0) }
        if times.count >= limit, let oldest = times.first {
            let retry = max(1, Int((oldest + window - now.timeIntervalSince1970).rounded(.up)))
            throw HTTPError(.tooManyRequests, headers: HTTPHeaders([("Retry-After", String(retry))]))
        }
        try db.execute("INSERT INTO rate_events (bucket, at) VALUES (?, ?)", bucket, now)
    }

    /// The longest window any limit uses; rows older than it count for nothing.
    static let longestWindow: TimeInterval = 86_400
    /// When expired rows were last purged (seconds since 1970).
    private static let lastPurge = Mutex<Double>(0)

    /// Deletes every expired rate event, every session past its idle limit and every notice past
    /// its keeping time, at most once a minute.
    static func purgeIfDue(now: Date, _ db: any SQLConnection) throws {
        let seconds = now.timeIntervalSince1970
        let due = lastPurge.withLock { last -> Bool in
            guard abs(seconds - last) >= 60 else { return false }
            last = seconds
            return true
        }
        guard due else { return }
        try db.execute("DELETE FROM rate_events WHERE at <= ?", seconds - longestWindow)
        try db.execute("DELETE FROM sessions WHERE last_seen_at <= ?", seconds - SessionStore.defaultIdleLimit)
        try db.execute("DELETE FROM notifications WHERE created_at <= ?", seconds - Notices.keptFor)
    }
}
