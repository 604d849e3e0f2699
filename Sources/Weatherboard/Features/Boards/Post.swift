import Foundation
import GRDB

/// A post as a viewer may see it, with its author and the viewer's relation to it.
struct PostRow: FetchableRecord, Sendable {
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
    init(row: Row) throws {
        id = row[0]
        cityID = row[1]
        userID = row[2]
        body = row[3]
        createdAt = Date(timeIntervalSince1970: row[4])
        editedAt = (row[5] as Double?).map(Date.init(timeIntervalSince1970:))
        hiddenAt = (row[6] as Double?).map(Date.init(timeIntervalSince1970:))
        removedAt = (row[7] as Double?).map(Date.init(timeIntervalSince1970:))
        removedReason = row[8]
        username = row[9]
        displayName = row[10]
        authorIsAdmin = (row[11] as String?) == "admin"
        citySlug = row[12]
        cityNameEn = row[13]
        cityNameKo = row[14]
        reportedByViewerAt = (row[15] as Double?).map(Date.init(timeIntervalSince1970:))
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
               (SELECT r.created_at FROM reports r WHERE r.post_id = p.id AND r.reporter_id = :viewer) AS reported_at
        FROM posts p
        LEFT JOIN users u ON u.id = p.user_id
        JOIN cities c ON c.id = p.city_id
        WHERE (p.hidden_at IS NULL OR p.user_id = :viewer OR :isAdmin)
          AND (p.removed_at IS NULL OR (:includeOwnRemoved AND p.user_id = :viewer))
          AND NOT EXISTS (SELECT 1 FROM blocks b WHERE b.blocker_id = :viewer AND b.blocked_id = p.user_id)
          AND NOT EXISTS (SELECT 1 FROM hidden_posts h WHERE h.viewer_id = :viewer AND h.post_id = p.id)
        """

    /// A board page, newest first, before the post `before` (the cursor).
    static func board(cityID: Int64, viewer: User?, before: Int64?, limit: Int = pageSize, _ db: Database) throws -> [PostRow] {
        // Cached statements: preparing this SQL (and GRDB's authorizer pass over it) cost more than
        // running it, on every page view.
        try PostRow.fetchAll(db.cachedStatement(sql: visibleSQL + " AND p.city_id = :city AND p.id < :before ORDER BY p.id DESC LIMIT :limit"),
                             arguments: arguments(viewer, ["city": cityID, "before": before ?? Int64.max, "limit": limit]))
    }

    /// A person's recent posts on every board.
    /// A person's recent posts on every board; on their own profile they also see what was removed.
    static func byAuthor(userID: Int64, viewer: User?, limit: Int = pageSize, _ db: Database) throws -> [PostRow] {
        try PostRow.fetchAll(db.cachedStatement(sql: visibleSQL + " AND p.user_id = :author ORDER BY p.id DESC LIMIT :limit"),
                             arguments: arguments(viewer, ["author": userID, "limit": limit, "includeOwnRemoved": viewer?.id == userID]))
    }

    static func post(id: Int64, viewer: User?, _ db: Database) throws -> PostRow? {
        try PostRow.fetchOne(db.cachedStatement(sql: visibleSQL + " AND p.id = :id"), arguments: arguments(viewer, ["id": id]))
    }

    private static func arguments(_ viewer: User?, _ more: [String: (any DatabaseValueConvertible)?]) -> StatementArguments {
        var values: [String: (any DatabaseValueConvertible)?] = ["viewer": viewer?.id ?? -1, "isAdmin": viewer?.isAdmin == true,
                                                                 "includeOwnRemoved": false]
        values.merge(more) { $1 }
        return StatementArguments(values)
    }
}
