import Foundation

/// Warnings that find people (issue 68 #3): a warning that begins, or is raised, in a city a
/// member follows (a bookmark, or a subscription to its warnings alone) is a notice on the
/// topic `warnings`, on the site, by push and by mail as they chose. An update is told only to
/// those told of the start, and only when it changes what to do (a later end, a cancellation);
/// one that only renews the warning is kept (`carried`) and told to nobody. Written in the
/// transaction that keeps the warnings (`WarningStore.apply`, under the cluster's lock), and
/// `warning_alerts` is unique per warning, member and state: each member is told once, however
/// many nodes poll the feed.
enum WarningAlerts {
    /// A warning just kept: its cities, and the earlier ids it carries on (an update's, or its own
    /// when a source sent it again changed).
    struct Kept {
        var warning: Warning
        var cities: [Int64]
        var earlier: [String]
    }

    /// A cancellation is pushed within this long or not at all (past quiet hours that outlast it,
    /// the list says it).
    static let cancellationPushedFor: TimeInterval = 6 * 3600

    static func tell(kept: [Kept], cancelled: [Set<String>], now: Date, _ db: any SQLConnection, _ changes: ChangeLog) throws {
        let at = now.timeIntervalSince1970
        for item in kept where !item.cities.isEmpty {
            let warning = item.warning
            for (member, city) in try followers(of: item.cities, db) {
                let before = try lastTold(member, of: item.earlier, db)
                // An update is news only to those told of the start (one who follows the city
                // later hears of its next warning).
                if before == nil && !item.earlier.isEmpty { continue }
                let state: String
                switch before {
                case nil: state = "started"
                case let before? where warning.severity > before.severity: state = "raised"
                case let before? where warning.endsWhenLifted ? !before.endsWhenLifted
                        : warning.expires.timeIntervalSince1970 > before.expires + 60 && !before.endsWhenLifted: state = "extended"
                default: state = "carried"
                }
                guard let alert = try record(warning.id, member: member, city: city, event: warning.event, severity: warning.severity,
                                             expires: warning.expires.timeIntervalSince1970, endsWhenLifted: warning.endsWhenLifted,
                                             state: state, now: at, db), state != "carried" else { continue }
                try Notices.tell(member, state == "extended" ? .warningUpdate : .warning, warningAlert: alert,
                                 urgent: warning.severity >= .severe, pushUntil: warning.expires.timeIntervalSince1970, now: at, db, changes)
            }
        }
        for ids in cancelled where !ids.isEmpty {
            let told = try db.all("""
                SELECT user_id, city_id, event, severity, expires, ends_when_lifted, warning_id FROM warning_alerts
                WHERE warning_id IN (\(sqlMarks(ids.count))) AND state <> 'cancelled' ORDER BY told_at DESC, id DESC
                """, ids.sorted().map { SQLValue.text($0) }) { row in
                (member: row.int64(0), city: row.int64(1), event: row.string(2), severity: Warning.Severity(cap: row.string(3)),
                 expires: row.double(4), endsWhenLifted: row.int(5) != 0, id: row.string(6))
            }
            var seen = Set<Int64>()
            for row in told where seen.insert(row.member).inserted {
                guard let alert = try record(row.id, member: row.member, city: row.city, event: row.event, severity: row.severity,
                                             expires: row.expires, endsWhenLifted: row.endsWhenLifted, state: "cancelled", now: at, db)
                else { continue }
                try Notices.tell(row.member, .warningUpdate, warningAlert: alert, urgent: false, pushUntil: at + cancellationPushedFor,
                                 now: at, db, changes)
            }
        }
    }

    /// Members who follow any of `cities`, each with the first of them they follow.
    private static func followers(of cities: [Int64], _ db: any SQLConnection) throws -> [(Int64, Int64)] {
        let rows = try db.all("""
            SELECT f.user_id, f.city_id FROM (
                SELECT user_id, city_id FROM bookmarks WHERE city_id IN (\(sqlMarks(cities.count)))
                UNION SELECT user_id, city_id FROM warning_subscriptions WHERE city_id IN (\(sqlMarks(cities.count)))
            ) f JOIN users u ON u.id = f.user_id WHERE u.is_system = 0 ORDER BY f.user_id, f.city_id
            """, (cities + cities).map { SQLValue.integer($0) }) { ($0.int64(0), $0.int64(1)) }
        var first: [Int64: Int64] = [:]
        let order = Dictionary(cities.enumerated().map { ($1, $0) }, uniquingKeysWith: { a, _ in a })
        for (member, city) in rows {
            if let held = first[member], order[held, default: .max] <= order[city, default: .max] { continue }
            first[member] = city
        }
        return first.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }

    private struct Told {
        var severity: Warning.Severity
        var expires: Double
        var endsWhenLifted: Bool
    }

    /// What `member` was last told (or carried) of any of `ids`; nil when nothing.
    private static func lastTold(_ member: Int64, of ids: [String], _ db: any SQLConnection) throws -> Told? {
        guard !ids.isEmpty else { return nil }
        return try db.one("""
            SELECT severity, expires, ends_when_lifted FROM warning_alerts
            WHERE user_id = ? AND warning_id IN (\(sqlMarks(ids.count))) AND state <> 'cancelled' ORDER BY told_at DESC, id DESC LIMIT 1
            """, [SQLValue.integer(member)] + ids.map { SQLValue.text($0) }) {
            Told(severity: Warning.Severity(cap: $0.string(0)), expires: $0.double(1), endsWhenLifted: $0.int(2) != 0)
        }
    }

    /// The row of what a member is told, or nil when it was written before (another node's poll).
    private static func record(_ warningID: String, member: Int64, city: Int64, event: String, severity: Warning.Severity,
                               expires: Double, endsWhenLifted: Bool, state: String, now: Double, _ db: any SQLConnection) throws -> Int64? {
        try db.one("""
            INSERT INTO warning_alerts (warning_id, user_id, city_id, event, severity, expires, ends_when_lifted, state, told_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING id
            """, [warningID, member, city, event, severity.rawValue, expires, endsWhenLifted ? 1 : 0, state, now]) { $0.int64(0) }
    }
}
