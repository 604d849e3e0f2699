import Foundation

/// Search in posts reads the boards' own columns and rules (`BoardQueries`), so a result shows
/// what its board would show this reader.
extension BoardQueries {
    /// Which results of a search in posts come first.
    enum SearchOrder: String, Sendable {
        /// Newest first; the cursor is the last id shown.
        case newest
        /// Best match first: the terms making up more of a shorter text (by length, then newest);
        /// the cursor is the last length and id shown.
        case best
    }

    /// Posts and replies the viewer can see whose text holds every term of `query` (never a
    /// removed one), in `cityID` or on every board, `limit` of them past `cursor`, each with its
    /// length (for the next cursor). The index finds candidates (SQLite's trigram table,
    /// PostgreSQL's trigram index on `lower(body)`), `PostQuery.matches` keeps exact ones.
    /// SQLite's trigram table finds nothing for a pattern under three characters ("우산"), so
    /// such a term is looked for in the posts themselves.
    static func search(_ query: PostQuery, cityID: Int64?, viewer: User?, order: SearchOrder, after cursor: (length: Int, id: Int64)?,
                       limit: Int, now: Date, _ db: any SQLConnection) throws -> [(post: PostRow, length: Int)] {
        var sql = "SELECT \(columnsSQL), length(p.body) FROM posts p \(joinsSQL) WHERE \(visibleWhere) AND p.removed_at IS NULL"
            + " AND (?4 < 0 OR p.city_id = ?4)"
        var values = arguments(viewer, cityID ?? -1, limit)
        switch order {
        case .newest:
            sql += " AND p.id < ?6"
            values.append(cursor?.id ?? Int64.max)
        case .best:
            sql += " AND (length(p.body) > ?6 OR (length(p.body) = ?6 AND p.id < ?7))"
            values += [cursor?.length ?? -1, cursor?.id ?? Int64.max]
        }
        // Nothing by people the reader has muted (a guest, -1, has muted nobody).
        values.append(now)
        sql += " AND NOT EXISTS (SELECT 1 FROM mutes m WHERE m.muter_id = ?1 AND m.muted_id = p.user_id AND \(Mutes.active("m", at: "?\(values.count)")))"
        // A reply only where its conversation shows (issue 61 #3): under a post hidden by reports
        // for that post's author and admins, under a removed one for admins, never under a post by
        // someone the reader blocked or muted, nor under one the reader hid.
        sql += """
             AND (p.parent_id IS NULL OR EXISTS (SELECT 1 FROM posts t WHERE t.id = p.parent_id
                  AND (t.hidden_at IS NULL OR t.user_id = ?1 OR ?2 = 1) AND (t.removed_at IS NULL OR ?2 = 1)
                  AND NOT EXISTS (SELECT 1 FROM blocks b WHERE b.blocker_id = ?1 AND b.blocked_id = t.user_id)
                  AND NOT EXISTS (SELECT 1 FROM hidden_posts h WHERE h.viewer_id = ?1 AND h.post_id = t.id)
                  AND NOT EXISTS (SELECT 1 FROM mutes m WHERE m.muter_id = ?1 AND m.muted_id = t.user_id AND \(Mutes.active("m", at: "?\(values.count)")))))
            """
        let first = values.count + 1
        let patterns = query.likePatterns.enumerated().map { (placeholder: "?\(first + $0)", indexed: $1.unicodeScalars.count >= 5) }
        switch db.dialect {
        case .sqlite:
            let indexed = patterns.filter(\.indexed).map { "body LIKE \($0.placeholder)" }
            if !indexed.isEmpty { sql += " AND p.id IN (SELECT rowid FROM post_search WHERE " + indexed.joined(separator: " AND ") + ")" }
            sql += patterns.filter { !$0.indexed }.map { " AND p.body LIKE \($0.placeholder)" }.joined()
        case .postgres: sql += patterns.map { " AND lower(p.body) LIKE \($0.placeholder)" }.joined()
        }
        values += query.likePatterns as [any SQLArgument]
        sql += order == .newest ? " ORDER BY p.id DESC LIMIT ?5" : " ORDER BY length(p.body), p.id DESC LIMIT ?5"
        return try db.all(sql, values) { (PostRow(row: $0), $0.int(PostRow.columnCount)) }.filter { query.matches($0.post.body) }
    }
}
