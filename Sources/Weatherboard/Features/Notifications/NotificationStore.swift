import Foundation

/// A member's notices as their list shows them.
struct NotificationStore: Sendable {
    let database: AppDatabase
    static let pageSize = 30

    /// A notice and what it is about, for its member (`?1`): the excerpt only of what they may
    /// read now (not a post removed or hidden since, unless it is their own hidden one);
    /// agreement counted as it stands (people take it back); a rain alert's spell; a warning
    /// alert's warning as it was told.
    static let select = """
        SELECT n.id, n.kind, coalesce(n.post_id, 0), p.parent_id,
               CASE WHEN n.kind = 'reaction' THEN (SELECT count(*) FROM reactions x WHERE x.post_id = n.post_id) ELSE n.people END,
               n.created_at, n.read_at, a.username, a.display_name, c.slug, c.name_en, c.name_ko,
               CASE WHEN p.id IS NOT NULL AND p.removed_at IS NULL AND (p.hidden_at IS NULL OR p.user_id = ?1) THEN p.body ELSE '' END,
               r.kind, r.spell_from, r.spell_to, r.stops_at,
               g.event, g.severity, g.expires, g.ends_when_lifted, g.state, c.timezone
        FROM notifications n
        LEFT JOIN posts p ON p.id = n.post_id
        LEFT JOIN rain_alerts r ON r.id = n.alert_id
        LEFT JOIN rain_windows w ON w.id = r.window_id
        LEFT JOIN warning_alerts g ON g.id = n.warning_alert_id
        JOIN cities c ON c.id = coalesce(p.city_id, w.city_id, g.city_id)
        LEFT JOIN users a ON a.id = n.actor_id
        """

    /// One notice of `userID`'s, as the list would show it (a push says the same).
    static func notice(_ id: Int64, of userID: Int64, _ db: any SQLConnection) throws -> Notice? {
        try db.one("\(select) WHERE n.user_id = ?1 AND n.id = ?2", [userID, id], Notice.init(row:))
    }

    /// A notice with what it is about: the post (its city, the post a reply answers) and who
    /// did it, or the rain alert.
    struct Notice {
        let id: Int64, kind: NoticeKind, postID: Int64, parentID: Int64?, people: Int, createdAt: Double, unread: Bool
        let actorUsername: String?, actorDisplayName: String?, citySlug: String, cityNameEn: String, cityNameKo: String?
        let excerpt: String
        /// A rain alert's: the likely time in the window and when the spell stops.
        var rain: RainInWindow?
        /// A warning alert's: the warning as it was told.
        var warning: WarningNotice?

        /// The post's page (a reply's place on it), or the city's for a rain or warning alert.
        var href: String { rain == nil && warning == nil ? PostRow.href(id: postID, parentID: parentID) : "/city/" + citySlug }

        init(row: any SQLRow) {
            id = row.int64(0)
            kind = NoticeKind(rawValue: row.string(1)) ?? .reply
            postID = row.int64(2)
            parentID = row.optionalInt64(3)
            people = row.int(4)
            createdAt = row.double(5)
            unread = row.isNull(6)
            actorUsername = row.optionalString(7)
            actorDisplayName = row.optionalString(8)
            citySlug = row.string(9)
            cityNameEn = row.string(10)
            cityNameKo = row.optionalString(11)
            excerpt = String(row.string(12).prefix(80))
            if let kind = row.optionalString(13) {
                rain = RainInWindow(from: row.string(14), to: row.string(15), stopsAt: row.optionalString(16),
                                    kind: RainOutlook.Kind(rawValue: kind) ?? .rain)
            }
            if let event = row.optionalString(17) {
                warning = WarningNotice(event: event, severity: row.string(18), expires: row.double(19), endsWhenLifted: row.int(20) != 0,
                                        state: row.string(21), timeZone: TimeZone(identifier: row.string(22)) ?? .gmt)
            }
        }

        /// What happened, in words ("Ann replied to your post in Seoul"), as the list and a push say it.
        func text(_ pages: Pages, _ language: Language) -> String {
            let city = language == .ko ? (cityNameKo ?? cityNameEn) : cityNameEn
            let who = actorDisplayName ?? pages.string("deleted_user", language)
            return switch kind {
            case .reply: pages.string("notice_reply", language, ["user": who, "city": city])
            case .mention: pages.string("notice_mention", language, ["user": who, "city": city])
            case .reaction: people == 1 ? pages.string("notice_reaction_one", language, ["city": city])
                : pages.string("notice_reaction_many", language, ["n": String(people), "city": city])
            case .reportDecided: pages.string("notice_report_decided", language, ["city": city])
            case .removed: pages.string("notice_removed", language, ["city": city])
            case .restored: pages.string("notice_restored", language, ["city": city])
            case .rain, .rainCleared: rain.map { $0.sentence(kind == .rainCleared, city: city, pages, language) } ?? ""
            case .warning, .warningUpdate: warning.map { $0.sentence(city: city, pages, language) } ?? ""
            }
        }
    }

    /// A page of the member's notices, newest first, before the notice `before`, one more than a
    /// page; then, when `marksRead`, every unread one is marked read (opening the list reads
    /// them), in one transaction.
    func open(userID: Int64, before: Int64?, now: Date, marksRead: Bool = true) throws -> [Notice] {
        try database.write(.subject(.member(userID))) { db in  // the member's own notices
            // The excerpt only of what the member may read now (not a post removed or hidden since,
            // unless it is their own hidden one); agreement counted as it stands (people take it back).
            let notices = try db.all("""
                \(Self.select)
                WHERE n.user_id = ?1 AND n.id < ?2 AND n.created_at > ?3
                  AND (n.kind <> 'reaction' OR EXISTS (SELECT 1 FROM reactions x WHERE x.post_id = n.post_id))
                ORDER BY n.id DESC LIMIT ?4
                """, [userID, before ?? Int64.max, now.timeIntervalSince1970 - Notices.keptFor, Self.pageSize + 1], Notice.init(row:))
            if marksRead { try db.execute("UPDATE notifications SET read_at = ? WHERE user_id = ? AND read_at IS NULL", now, userID) }
            return notices
        }
    }
}
