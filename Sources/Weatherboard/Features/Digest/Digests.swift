import Foundation
import Logging

/// The digest's schedule, off the request path: every `interval`, each member whose period has
/// begun since it was last handled is handled once (across nodes: the update of
/// `digest_handled_at` that finds it due is the claim). A digest is queued for the mail sender
/// only when there is something to say (unread notices, or agreed posts in their cities) and
/// the member has not visited the site today.
final class Digests: Sendable, BackgroundWork {
    private let database: AppDatabase
    private let mail: MailSender
    private let clock: @Sendable () -> Date
    private let logger: Logger
    private let worker: QueueWorker

    init(database: AppDatabase, mail: MailSender, interval: TimeInterval, clock: @escaping @Sendable () -> Date, logger: Logger) {
        self.database = database
        self.mail = mail
        self.clock = clock
        self.logger = logger
        worker = QueueWorker(pollInterval: interval)
    }

    var rounds: Int { worker.rounds.load(ordering: .relaxed) }

    func start() { worker.start { [self] in handleDue() } }

    func stop() { worker.stop(waitingAtMost: 5) }

    func handleDue() {
        let now = clock()
        do {
            let members = try database.readStatement { db in
                try db.all("""
                    SELECT id, digest, time_zone, digest_handled_at, email, language FROM users
                    WHERE digest <> 'off' AND email IS NOT NULL
                    """) { row in
                    (id: row.int64(0), every: DigestEvery(rawValue: row.string(1)) ?? .off, zone: TimeZone(identifier: row.string(2)) ?? .gmt,
                     handled: row.optionalDouble(3), email: row.string(4), language: Language(rawValue: row.string(5)) ?? .en)
                }
            }
            var queued = false
            for member in members where !worker.isStopped {
                guard let start = member.every.periodStart(at: now, in: member.zone),
                      (member.handled ?? 0) < start.timeIntervalSince1970, let address = MailAddress(member.email) else { continue }
                let midnight = LocalCalendar(member.zone).startOfDay(LocalCalendar(member.zone).dateString(now)) ?? now
                let since = start.addingTimeInterval(-member.every.length)
                queued = try database.write(.cluster) { db in  // one digest a period across nodes
                    guard try db.execute("""
                        UPDATE users SET digest_handled_at = ? WHERE id = ? AND digest <> 'off' AND coalesce(digest_handled_at, 0) < ?
                        """, now, member.id, start) == 1 else { return false } // another node has it
                    guard try !db.exists("SELECT 1 FROM sessions WHERE user_id = ? AND last_seen_at >= ?", member.id, midnight),
                          try DigestContent.hasNews(for: member.id, since: since, now: now, db) else { return false }
                    try MailQueue.enqueue(.digest, userID: member.id, to: address, detail: String(since.timeIntervalSince1970),
                                          language: member.language, now: now, db)
                    return true
                } || queued
            }
            if queued { mail.wake() }
        } catch {
            logger.error("digest: \(error)")
        }
    }
}

/// What a digest says, read when it is sent: the member's unread notices, each bookmarked
/// city's "today vs yesterday", and the most agreed posts in those cities since the period began.
struct DigestContent {
    struct Line {
        var text: String
        var href: String
    }

    var notices: [Line] = []
    var unread = 0
    var cities: [Line] = []
    var agreed: [Line] = []

    static let noticesShown = 10
    static let agreedShown = 3

    /// The most agreed top-level posts and replies in the member's bookmarked cities since
    /// `since` (?2), readable by anyone and by nobody they blocked or have muted at ?4: (id, parent,
    /// city, excerpt, agreement).
    static let agreedSQL = """
        SELECT p.id, p.parent_id, p.city_id, p.body, count(*) AS n FROM posts p
        JOIN bookmarks b ON b.city_id = p.city_id AND b.user_id = ?1
        JOIN reactions x ON x.post_id = p.id
        WHERE p.created_at > ?2 AND p.removed_at IS NULL AND p.hidden_at IS NULL AND (p.user_id IS NULL OR p.user_id <> ?1)
          AND NOT EXISTS (SELECT 1 FROM blocks k WHERE k.blocker_id = ?1 AND k.blocked_id = p.user_id)
          AND NOT EXISTS (SELECT 1 FROM mutes m WHERE m.muter_id = ?1 AND m.muted_id = p.user_id AND \(Mutes.active("m", at: "?4")))
          AND NOT EXISTS (SELECT 1 FROM hidden_posts h WHERE h.viewer_id = ?1 AND h.post_id = p.id)
        GROUP BY p.id, p.parent_id, p.city_id, p.body ORDER BY n DESC, p.id DESC LIMIT ?3
        """

    static func hasNews(for userID: Int64, since: Date, now: Date, _ db: any SQLConnection) throws -> Bool {
        try db.exists("SELECT 1 FROM notifications WHERE user_id = ? AND read_at IS NULL", userID)
            || !(try db.all(agreedSQL, [userID, since, 1, now]) { $0.int64(0) }).isEmpty
    }

    /// The digest for `userID` in `language`, links made absolute with `site`. The weather is
    /// read outside any transaction (a city may need fetching).
    static func make(for userID: Int64, since: Date, language: Language, site: String, pages: Pages, cities index: CityIndex,
                     weather: WeatherService, now: Date, _ database: AppDatabase) throws -> DigestContent {
        var content = DigestContent()
        try database.read { db in
            content.unread = try db.integer("SELECT count(*) FROM notifications WHERE user_id = ? AND read_at IS NULL", userID)
            content.notices = try db.all("\(NotificationStore.select) WHERE n.user_id = ?1 AND n.read_at IS NULL ORDER BY n.id DESC LIMIT ?2",
                                         [userID, noticesShown], NotificationStore.Notice.init(row:)).map {
                Line(text: $0.text(pages, language), href: site + $0.href)
            }
            content.agreed = try db.all(agreedSQL, [userID, since, agreedShown, now]) { row in
                let city = index.city(id: row.int64(2))
                return Line(text: pages.string("digest_agreed", language, [
                    "city": city?.name(language) ?? "", "n": String(row.int(4)), "excerpt": String(row.string(3).prefix(80)),
                ]), href: site + PostRow.href(id: row.int64(0), parentID: row.optionalInt64(1)))
            }
        }
        for city in try BookmarkStore(database: database).cityIDs(of: userID).compactMap(index.city(id:)) {
            let local = LocalCalendar(city.timeZone)
            guard let forecast = weather.report(for: city)?.forecast, let high = forecast.day(local.dateString(now))?.high,
                  let yesterday = forecast.day(local.dateString(now, offset: -1))?.high else { continue }
            let (key, degrees) = Comparison.phrase(today: high, reference: yesterday)
            content.cities.append(Line(text: pages.string("digest_city", language, [
                "city": city.name(language), "change": pages.string(key, language, ["n": String(degrees)]),
                "high": String(Comparison.wholeDegrees(high)),
            ]), href: site + "/city/" + city.slug))
        }
        return content
    }
}
