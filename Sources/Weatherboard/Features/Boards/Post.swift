import Foundation

/// A post as a viewer may see it, with its author and the viewer's relation to it.
struct PostRow: Sendable {
    var id: Int64
    var cityID: Int64
    var userID: Int64?
    var username: String?
    var displayName: String?
    var authorIsAdmin: Bool
    var body: String
    var createdAt: Date
    var editedAt: Date?
    var hiddenAt: Date?
    var removedAt: Date?
    var removedReason: String?
    var citySlug: String
    var cityNameEn: String
    var cityNameKo: String?
    /// When the viewer reported it (they see a placeholder instead).
    var reportedByViewerAt: Date?

    /// Reads the columns of `BoardQueries.visibleSQL` by position (by name, each look-up hashed
    /// the column's name: 16 columns × 21 rows on every board page).
    init(row: any SQLRow) {
        id = row.int64(0)
        cityID = row.int64(1)
        userID = row.optionalInt64(2)
        body = row.string(3)
        createdAt = row.date(4)
        editedAt = row.optionalDate(5)
        hiddenAt = row.optionalDate(6)
        removedAt = row.optionalDate(7)
        removedReason = row.optionalString(8)
        username = row.optionalString(9)
        displayName = row.optionalString(10)
        authorIsAdmin = row.optionalString(11) == "admin"
        citySlug = row.string(12)
        cityNameEn = row.string(13)
        cityNameKo = row.optionalString(14)
        reportedByViewerAt = row.optionalDate(15)
    }
}

/// The queries that list posts. Every list goes through `visibleSQL`, so the rules — no posts
/// by people the viewer blocked; hidden posts only for their author and admins; removed posts
/// for nobody (their author sees a notice on their own profile) — hold on every page, profile
/// and feed alike.
enum BoardQueries {
    static let pageSize = 20

    private static let visibleSQL = """
        SELECT p.id, p.city_id, p.user_id, p.body, p.created_at, p.edited_at, p.hidden_at, p.removed_at, p.removed_reason,
               u.username, u.display_name, u.role, c.slug, c.name_en, c.name_ko,
               (SELECT r.created_at FROM reports r WHERE r.post_id = p.id AND r.reporter_id = ?1) AS reported_at
        FROM posts p
        LEFT JOIN users u ON u.id = p.user_id
        JOIN cities c ON c.id = p.city_id
        WHERE (p.hidden_at IS NULL OR p.user_id = ?1 OR ?2 = 1)
          AND (p.removed_at IS NULL OR (?3 = 1 AND p.user_id = ?1))
          AND NOT EXISTS (SELECT 1 FROM blocks b WHERE b.blocker_id = ?1 AND b.blocked_id = p.user_id)
          AND NOT EXISTS (SELECT 1 FROM hidden_posts h WHERE h.viewer_id = ?1 AND h.post_id = p.id)
        """

    /// A board page, newest first, before the post `before` (the cursor).
    static func board(cityID: Int64, viewer: User?, before: Int64?, limit: Int = pageSize, _ db: any SQLConnection) throws -> [PostRow] {
        try db.all(visibleSQL + " AND p.city_id = ?4 AND p.id < ?5 ORDER BY p.id DESC LIMIT ?6",
                   arguments(viewer, cityID, before ?? Int64.max, limit), PostRow.init(row:))
    }

    /// A person's recent posts on every board; on their own profile they also see what was removed.
    static func byAuthor(userID: Int64, viewer: User?, limit: Int = pageSize, _ db: any SQLConnection) throws -> [PostRow] {
        try db.all(visibleSQL + " AND p.user_id = ?4 ORDER BY p.id DESC LIMIT ?5",
                   arguments(viewer, userID, limit, includeOwnRemoved: viewer?.id == userID), PostRow.init(row:))
    }

    static func post(id: Int64, viewer: User?, _ db: any SQLConnection) throws -> PostRow? {
        try db.one(visibleSQL + " AND p.id = ?4", arguments(viewer, id), PostRow.init(row:))
    }

    /// `?1` the viewer (-1 for a guest), `?2` whether they are an admin, `?3` whether they see
    /// their own removed posts, then the query's own values from `?4`.
    private static func arguments(_ viewer: User?, _ more: any SQLArgument..., includeOwnRemoved: Bool = false) -> [any SQLArgument] {
        [viewer?.id ?? -1, viewer?.isAdmin == true, includeOwnRemoved] + more
    }
}
