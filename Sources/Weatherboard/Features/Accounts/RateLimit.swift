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
    /// length); other buckets' expired rows are the janitor's (`keeping`).
    func hit(_ bucket: String, now: Date, _ db: any SQLConnection) throws {
        try db.lock(.bucket(bucket))
        try db.execute("DELETE FROM rate_events WHERE bucket = ? AND at <= ?", Tokens.digest(bucket), now.timeIntervalSince1970 - window)
        if let retry = try wait(bucket, now: now, db) { throw Self.refusal(retryAfter: retry) }
        try db.execute("INSERT INTO rate_events (bucket, at) VALUES (?, ?)", Tokens.digest(bucket), now)
    }

    /// The seconds until `bucket` has room for one more attempt, or nil when it has room now;
    /// records nothing (for a form that checks before costly work and records once it is done).
    func wait(_ bucket: String, now: Date, _ db: any SQLConnection) throws -> Int? {
        let since = now.timeIntervalSince1970 - window
        let (count, oldest) = try db.one("SELECT count(*), min(at) FROM rate_events WHERE bucket = ? AND at > ?",
                                         [Tokens.digest(bucket), since]) { ($0.int(0), $0.isNull(1) ? 0 : $0.double(1)) } ?? (0, 0)
        guard count >= limit else { return nil }
        return max(1, Int(clampedSeconds: (oldest + window - now.timeIntervalSince1970).rounded(.up)))
    }

    /// The 429 a refused attempt is answered with.
    static func refusal(retryAfter seconds: Int) -> HTTPError {
        HTTPError(.tooManyRequests, headers: HTTPHeaders([("Retry-After", String(seconds))]))
    }

    /// The longest window any limit uses; rows older than it count for nothing.
    static let longestWindow: TimeInterval = 86_400
    /// Rows older than the longest window count for nothing.
    static let keeping = Keeping("rate_events", "at", for: longestWindow)
}

/// Slows password guessing against one account that is spread over many addresses, each within
/// its own limits, without ever locking the account's owner out.
///
/// Every sign-in attempt on an account is recorded (whatever the outcome, from any address).
/// The first `freeAttempts` in `window` go through; past them, attempts on that account must be
/// spaced: one second apart, doubling every further `freeAttempts`, at most `longestPause`. A
/// guesser with ten thousand addresses then gets about 120 guesses an hour at the account, and
/// the owner, whatever the attacker does, waits at most `longestPause` before one attempt.
struct GuessingBrake: Sendable {
    var freeAttempts = 10
    var window: TimeInterval = 3600
    var longestPause: TimeInterval = 30
    /// Fewer attempts than this in `window` and the account is not under attack: its checks go
    /// ahead of those on accounts that are (`ConcurrencyLimit.Priority.quietAccount`).
    var quietBelow = 3

    /// The spacing required after `attempts` recent attempts (0 while under the free allowance).
    func pause(after attempts: Int) -> TimeInterval {
        guard attempts >= freeAttempts else { return 0 }
        let doublings = (attempts - freeAttempts) / freeAttempts
        return doublings >= 5 ? longestPause : min(longestPause, Double(1 << doublings))
    }

    /// Records an attempt on `account` (a username as typed, any case); throws 429 with
    /// `Retry-After` when it comes sooner than the account's current spacing allows. Checking
    /// and recording in one transaction, so that concurrent guesses cannot all pass one gap.
    /// Returns how many attempts came before this one in the window.
    @discardableResult
    func attempt(on account: String, now: Date, _ db: any SQLConnection) throws -> Int {
        let bucket = Tokens.digest("login:account:\(account.lowercased())")
        try db.lock(.bucket(bucket))
        let seconds = now.timeIntervalSince1970
        let (count, last) = try db.one("SELECT count(*), max(at) FROM rate_events WHERE bucket = ? AND at > ?",
                                       [bucket, seconds - window]) { ($0.int(0), $0.isNull(1) ? 0 : $0.double(1)) } ?? (0, 0)
        // At most the longest pause (a clock moved back would otherwise ask for more).
        let wait = min(longestPause, pause(after: count) - (seconds - last))
        if count >= freeAttempts && wait > 0 {
            throw RateLimit.refusal(retryAfter: max(1, Int(clampedSeconds: wait.rounded(.up))))
        }
        try db.execute("INSERT INTO rate_events (bucket, at) VALUES (?, ?)", bucket, now)
        return count
    }
}

/// The site's own brake on password checks: when sign-ins fail across the site faster than
/// people mistype (`failuresPerMinute`, from any addresses, on any accounts), checks from
/// browsers not known to the account are admitted at most `admittedPerSecond` a second for each
/// priority below a known browser's, the rest answered 429. A spread guessing attack then costs
/// the node a few hashes a second however many addresses it has, while owners sign in from
/// browsers they used before, with a passkey (no hash at all) or by a reset link; someone on a
/// new browser waits seconds, never hours.
struct SiteWideBrake: Sendable {
    var failuresPerMinute: Int
    var admittedPerSecond: Int

    private static let failures = "login:failed"

    /// Counts a check from a browser not known to the account; 429 when the brake is on and this
    /// second's admissions for `priority` are used up.
    func admit(_ priority: ConcurrencyLimit.Priority, now: Date, _ db: any SQLConnection) throws {
        guard try isEngaged(now: now, db) else { return }
        try RateLimit(limit: admittedPerSecond, window: 1).hit("login:admitted:\(priority)", now: now, db)
    }

    /// Whether sign-ins are failing across the site faster than `failuresPerMinute`.
    func isEngaged(now: Date, _ db: any SQLConnection) throws -> Bool {
        try RateLimit(limit: failuresPerMinute, window: 60).wait(Self.failures, now: now, db) != nil
    }

    /// Records a failed password check (and drops those past the minute the brake counts: an
    /// attack would otherwise leave a day's worth of rows for the daily purge).
    static func failed(now: Date, _ db: any SQLConnection) throws {
        try db.execute("DELETE FROM rate_events WHERE bucket = ? AND at <= ?", Tokens.digest(failures), now.timeIntervalSince1970 - 60)
        try db.execute("INSERT INTO rate_events (bucket, at) VALUES (?, ?)", Tokens.digest(failures), now)
    }
}
