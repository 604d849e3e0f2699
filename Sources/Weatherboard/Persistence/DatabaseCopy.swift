import Foundation

/// Copies a whole site from one database to another, either engine to either: SQLite to
/// PostgreSQL when a site moves to several nodes (`copy-to`), PostgreSQL to a SQLite file for a
/// backup (`backup`). The source is read in one snapshot and the target written in one
/// transaction, so a copy that fails leaves the target as it was, and running it again is safe:
/// an empty target is filled, a target that already holds the same rows is left alone.
enum DatabaseCopy {
    /// The tables in an order that satisfies every foreign key (parents first).
    static let tables = ["cities", "weather_cache", "users", "sessions", "posts", "blocks", "reports", "bookmarks", "rate_events",
                         "bans", "moderation_log", "hidden_posts", "retired_usernames", "retired_bans"]
    /// Tables whose `id` the database assigns: after a copy into PostgreSQL its sequence must
    /// continue after the copied ids.
    static let generatedIDs = ["users", "posts", "reports", "bans", "moderation_log", "retired_bans"]

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// What a copy did: rows per table, and whether the target already held them.
    struct Outcome {
        var counts: [(table: String, rows: Int)]
        var alreadyCopied: Bool
    }

    static func copy(from source: AppDatabase, to target: AppDatabase) throws -> Outcome {
        try source.read { from in
            let sourceCounts = try tables.map { (table: $0, rows: try from.integer("SELECT count(*) FROM \($0)")) }
            return try target.write { to in
                let targetCounts = try tables.map { try to.integer("SELECT count(*) FROM \($0)") }
                if targetCounts.allSatisfy({ $0 == 0 }) {
                    for table in tables { try copyTable(table, from, to) }
                    if to.dialect == .postgres {
                        for table in generatedIDs {
                            try to.execute("SELECT setval(pg_get_serial_sequence('\(table)', 'id'), coalesce(max(id), 0) + 1, false) FROM \(table)")
                        }
                    }
                    let copied = try tables.map { try to.integer("SELECT count(*) FROM \($0)") }
                    for (index, table) in tables.enumerated() where copied[index] != sourceCounts[index].rows {
                        throw Failure(description: "\(table): \(sourceCounts[index].rows) rows read but \(copied[index]) written; nothing was kept")
                    }
                    return Outcome(counts: sourceCounts, alreadyCopied: false)
                }
                if targetCounts == sourceCounts.map(\.rows), try sameSite(from, to) {
                    return Outcome(counts: sourceCounts, alreadyCopied: true)
                }
                let differing = tables.indices.filter { targetCounts[$0] != sourceCounts[$0].rows }
                    .map { "\(tables[$0]) (\(targetCounts[$0]) there, \(sourceCounts[$0].rows) here)" }
                throw Failure(description: "the target database already holds other data: \(differing.joined(separator: ", ")); "
                    + "copy into an empty database")
            }
        }
    }

    /// Whether the target holds this very site (a copy made before), not another with as many
    /// rows: the same people and the same posts, by id.
    private static func sameSite(_ from: any SQLConnection, _ to: any SQLConnection) throws -> Bool {
        let people = "SELECT id, username_key FROM users ORDER BY id"
        let person: (any SQLRow) -> String = { "\($0.int64(0)) \($0.string(1))" }
        let posts = "SELECT id, user_id, created_at FROM posts ORDER BY id"
        let post: (any SQLRow) -> String = { "\($0.int64(0)) \($0.optionalInt64(1) ?? 0) \($0.double(2))" }
        return try from.all(people, [], person) == to.all(people, [], person) && from.all(posts, [], post) == to.all(posts, [], post)
    }

    /// A column's kind, as both engines' schemas declare it.
    private enum Kind { case integer, real, text }

    private static func columns(_ table: String, _ db: any SQLConnection) throws -> [(name: String, kind: Kind)] {
        let rows: [(String, String)] = switch db.dialect {
        case .sqlite:
            try db.all("SELECT name, type FROM pragma_table_info(?) ORDER BY cid", [table]) { ($0.string(0), $0.string(1)) }
        case .postgres:
            try db.all("""
                SELECT column_name, data_type FROM information_schema.columns
                WHERE table_schema = current_schema() AND table_name = ? ORDER BY ordinal_position
                """, [table]) { ($0.string(0), $0.string(1)) }
        }
        return rows.map { name, type in
            let type = type.lowercased()
            let kind: Kind = type.contains("int") ? .integer : (type.contains("real") || type.contains("double")) ? .real : .text
            return (name, kind)
        }
    }

    private static func copyTable(_ table: String, _ from: any SQLConnection, _ to: any SQLConnection) throws {
        let columns = try columns(table, from)
        let targetNames = try Self.columns(table, to).map(\.name)
        guard columns.map(\.name) == targetNames else {
            throw Failure(description: "\(table) has columns \(columns.map(\.name)) here but \(targetNames) in the target: migrate both first")
        }
        let names = columns.map(\.name).joined(separator: ", ")
        let rowMarks = "(" + Array(repeating: "?", count: columns.count).joined(separator: ", ") + ")"
        let batchSize = max(1, 2_000 / columns.count)
        var batch: [SQLValue] = []
        var rowsInBatch = 0
        func flush() throws {
            guard rowsInBatch > 0 else { return }
            let marks = Array(repeating: rowMarks, count: rowsInBatch).joined(separator: ", ")
            try to.execute("INSERT INTO \(table) (\(names)) VALUES \(marks)", batch)
            batch.removeAll(keepingCapacity: true)
            rowsInBatch = 0
        }
        try from.forEachRow("SELECT \(names) FROM \(table)", []) { row in
            for (index, column) in columns.enumerated() {
                if row.isNull(index) {
                    batch.append(.null)
                } else {
                    switch column.kind {
                    case .integer: batch.append(.integer(row.int64(index)))
                    case .real: batch.append(.real(row.double(index)))
                    case .text: batch.append(.text(row.string(index)))
                    }
                }
            }
            rowsInBatch += 1
            if rowsInBatch == batchSize { try flush() } // source and target are different connections
        }
        try flush()
    }
}
