import Foundation

/// What people reported of the sky in each of today's hours in a city (issue 43 #3), for the hourly
/// rain bars: how many distinct people saw rain, snow, fog or a storm, and how many people with
/// some standing (an account older than a day) saw precipitation (rain, snow, a storm) or a clear
/// sky. Hidden and removed posts do not count. Keyed by the local hour ("14").
struct HourReports: Sendable, Equatable {
    struct Hour: Sendable, Equatable {
        var wet = 0
        var wetWithStanding = 0
        var clearWithStanding = 0
    }
    var hours: [String: Hour] = [:]

    /// Reports with standing that make an hour's forecast "missed" (`--forecast-missed-reports`).
    static let defaultMissedAfter = 3
    static let standingAge: TimeInterval = 86_400

    /// Whether the forecast's `chance` of rain for an hour was missed by what `hour` holds:
    /// precipitation seen while it said under 20 %, or a clear sky while it said over 80 %.
    static func missed(chance: Int, _ hour: Hour, after reports: Int) -> Bool {
        (chance < 20 && hour.wetWithStanding >= reports) || (chance > 80 && hour.clearWithStanding >= reports)
    }

    /// Today's hours so far in `city` (its local day), one statement; without the posts of
    /// those `viewer` blocked or hid, when given (everyone's counts are kept per city: `Surges`).
    static func read(city: City, now: Date, viewer: Int64? = nil, _ db: any SQLConnection) throws -> HourReports {
        try reading(city: city, now: now, viewer: viewer, db).reports
    }

    /// What is read from posts is held at most an hour (a surge's floor not reached, a day's reports).
    static let heldAtMost: TimeInterval = 3600

    /// The hours, and until when they hold unless a post changes: the city's next midnight, a
    /// reporter's account coming of standing, or a post dated ahead of `now` (another node's
    /// clock) coming due, whichever is first.
    static func reading(city: City, now: Date, viewer: Int64? = nil, _ db: any SQLConnection) throws -> (reports: HourReports, holds: Date) {
        let local = LocalCalendar(city.timeZone)
        let t = now.timeIntervalSince1970
        let midnight = Double(local.localDayNumber(now)) * 86_400 - Double(city.timeZone.secondsFromGMT(for: now))
        var reports = HourReports()
        var holds = min(midnight + 86_400, t + heldAtMost) // at most an hour: a change of offset (DST) moves midnight
        try db.forEachRow("""
            SELECT \(db.dialect.wholeUnits("p.created_at - ?1", 3600)) AS hour,
                   count(CASE WHEN p.created_at <= ?4 THEN 1 END),
                   count(DISTINCT CASE WHEN p.created_at <= ?4 AND p.sky IN ('rain', 'snow', 'fog', 'storm') THEN p.user_id END),
                   count(DISTINCT CASE WHEN p.created_at <= ?4 AND p.sky IN ('rain', 'snow', 'storm') AND u.created_at < ?3 THEN p.user_id END),
                   count(DISTINCT CASE WHEN p.created_at <= ?4 AND p.sky = 'clear' AND u.created_at < ?3 THEN p.user_id END),
                   min(CASE WHEN p.created_at > ?4 THEN p.created_at END),
                   min(CASE WHEN p.created_at <= ?4 AND p.sky IN ('rain', 'snow', 'storm', 'clear') AND u.created_at >= ?3 THEN u.created_at END)
            FROM posts p JOIN users u ON u.id = p.user_id
            WHERE p.city_id = ?2 AND p.parent_id IS NULL AND p.removed_at IS NULL AND p.hidden_at IS NULL
                  AND p.sky IS NOT NULL AND p.created_at >= ?1
                  AND NOT EXISTS (SELECT 1 FROM blocks b WHERE b.blocker_id = ?5 AND b.blocked_id = p.user_id)
                  AND NOT EXISTS (SELECT 1 FROM hidden_posts h WHERE h.viewer_id = ?5 AND h.post_id = p.id)
            GROUP BY hour
            """, [.real(midnight), .integer(city.id), .real(t - standingAge), .real(t), .integer(viewer ?? 0)]) { row in
            if !row.isNull(5) { holds = min(holds, row.double(5)) }
            if !row.isNull(6) { holds = min(holds, row.double(6) + standingAge) }
            let hour = row.int(0)
            guard (0..<24).contains(hour), row.int(1) > 0 else { return }
            reports.hours[LocalCalendar.twoDigits(hour)] = Hour(wet: row.int(2), wetWithStanding: row.int(3), clearWithStanding: row.int(4))
        }
        return (reports, Date(timeIntervalSince1970: holds))
    }
}
