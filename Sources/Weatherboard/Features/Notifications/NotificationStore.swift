import Foundation

/// A member's notices as their list shows them.
struct NotificationStore: Sendable {
    let database: AppDatabase
    static let pageSize = 30

    /// A notice with what it is about: the post (its city, the post a reply answers) and who did it.
    struct Notice {
        let id: Int64, kind: NoticeKind, postID: Int64, parentID: Int64?, people: Int, createdAt: Double, unread: Bool
        let actorUsername: String?, actorDisplayName: String?, citySlug: String, cityNameEn: String, cityNameKo: String?
        let excerpt: String

        /// The post's page (a reply's place on it).
        var href: String { PostRow.href(id: postID, parentID: parentID) }
    }

    /// A page of the member's notices, newest first, before the notice `before`, one more than a
    /// page; then every unread one is marked read (opening the list reads them), in one transaction.
    func open(userID: Int64, before: Int64?, now: Date) throws -> [Notice] {
        try database.write { db in
            // The excerpt only of what the member may read now (not a post removed or hidden since,
            // unless it is their own hidden one); agreement counted as it stands (people take it back).
            let notices = try db.all("""
                SELECT n.id, n.kind, n.post_id, p.parent_id,
                       CASE WHEN n.kind = 'reaction' THEN (SELECT count(*) FROM reactions x WHERE x.post_id = n.post_id) ELSE n.people END,
                       n.created_at, n.read_at, a.username, a.display_name, c.slug, c.name_en, c.name_ko,
                       CASE WHEN p.removed_at IS NULL AND (p.hidden_at IS NULL OR p.user_id = ?1) THEN p.body ELSE '' END
                FROM notifications n
                JOIN posts p ON p.id = n.post_id
                JOIN cities c ON c.id = p.city_id
                LEFT JOIN users a ON a.id = n.actor_id
                WHERE n.user_id = ?1 AND n.id < ?2 AND n.created_at > ?3
                  AND (n.kind <> 'reaction' OR EXISTS (SELECT 1 FROM reactions x WHERE x.post_id = n.post_id))
                ORDER BY n.id DESC LIMIT ?4
                """, [userID, before ?? Int64.max, now.timeIntervalSince1970 - Notices.keptFor, Self.pageSize + 1]) { row in
                Notice(id: row.int64(0), kind: NoticeKind(rawValue: row.string(1)) ?? .reply, postID: row.int64(2),
                       parentID: row.optionalInt64(3), people: row.int(4), createdAt: row.double(5), unread: row.isNull(6),
                       actorUsername: row.optionalString(7), actorDisplayName: row.optionalString(8), citySlug: row.string(9),
                       cityNameEn: row.string(10), cityNameKo: row.optionalString(11), excerpt: String(row.string(12).prefix(80)))
            }
            try db.execute("UPDATE notifications SET read_at = ? WHERE user_id = ? AND read_at IS NULL", now, userID)
            return notices
        }
    }
}
