import Foundation
import HTTPTestSupport
import Testing
@testable import Weatherboard

/// Issue 21 #4: the two engines' migrations make the same schema — every table, column, type
/// family, nullability, default, primary key, unique constraint, index (and whether it is
/// partial) and foreign key (with its ON DELETE) — compared as read back from each database,
/// not by the migrations' file names.
@Suite struct SchemaParityTests {
    /// One engine's schema as comparable lines, e.g. `column posts.parent_id integer null default -`.
    struct Schema {
        var lines: Set<String> = []
    }

    /// Migration bookkeeping, each engine's own.
    static let bookkeeping: Set<String> = ["grdb_migrations", "schema_migrations", "sqlite_sequence"]

    static func family(_ type: String) -> String {
        let type = type.lowercased()
        if type.contains("int") { return "integer" }
        if type.contains("double") || type.contains("real") || type.contains("float") || type.contains("numeric") { return "real" }
        if type.contains("char") || type.contains("text") { return "text" }
        if type.contains("blob") || type.contains("bytea") { return "blob" }
        return type
    }

    /// A default as a bare literal: `'user'::text` and `'user'` are `user`; none is `-`.
    static func literal(_ value: String?) -> String {
        guard var value = value?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return "-" }
        if let cast = value.range(of: "::") { value = String(value[..<cast.lowerBound]) }
        if value.hasPrefix("("), value.hasSuffix(")") { value = String(value.dropFirst().dropLast()) }
        return value.trimmingCharacters(in: CharacterSet(charactersIn: "'"))
    }

    static func sqlite(_ database: AppDatabase) throws -> Schema {
        var schema = Schema()
        try database.read { db in
            // A full-text index is each engine's own kind of thing (an FTS5 table and its shadow
            // tables here, a trigram index there): compared as what it indexes.
            let tables = try db.all("SELECT name FROM pragma_table_list WHERE schema = 'main' AND type = 'table' ORDER BY name") { $0.string(0) }
                .filter { !bookkeeping.contains($0) && !$0.hasPrefix("sqlite_") }
            try db.forEachRow("SELECT sql FROM sqlite_master WHERE sql LIKE 'CREATE VIRTUAL TABLE % USING fts5(%'", []) { row in
                let sql = row.string(0)
                if let content = sql.range(of: #"content = '(\w+)'"#, options: .regularExpression) {
                    let table = sql[content].split(separator: "'")[1]
                    let column = sql[sql.range(of: "fts5(")!.upperBound...].prefix { $0 != "," }
                    schema.lines.insert("full-text \(table).\(column) trigram")
                }
            }
            for table in tables {
                schema.lines.insert("table \(table)")
                var primaryKey: [(Int, String)] = []
                try db.forEachRow("PRAGMA table_info('\(table)')", []) { row in
                    let name = row.string(1), position = row.int(5)
                    // A primary key column is never null (SQLite's INTEGER PRIMARY KEY is the rowid).
                    let nullable = row.int(3) == 0 && position == 0
                    schema.lines.insert("column \(table).\(name) \(family(row.string(2))) \(nullable ? "null" : "not-null") default \(literal(row.optionalString(4)))")
                    if position > 0 { primaryKey.append((position, name)) }
                }
                schema.lines.insert("primary-key \(table) (\(primaryKey.sorted { $0.0 < $1.0 }.map(\.1).joined(separator: ", ")))")
                let indexes = try db.all("PRAGMA index_list('\(table)')", []) {
                    (name: $0.string(1), unique: $0.int(2) == 1, origin: $0.string(3), partial: $0.int(4) == 1)
                }
                for index in indexes where index.origin != "pk" {
                    let columns = try db.all("PRAGMA index_info('\(index.name)')", []) { (position: $0.int(0), name: $0.string(2)) }
                        .sorted { $0.position < $1.position }.map(\.name)
                    schema.lines.insert("index \(table) (\(columns.joined(separator: ", ")))\(index.unique ? " unique" : "")\(index.partial ? " partial" : "")")
                }
                try db.forEachRow("PRAGMA foreign_key_list('\(table)')", []) { row in
                    schema.lines.insert("foreign-key \(table).\(row.string(3)) -> \(row.string(2)).\(row.optionalString(4) ?? "id") on-delete \(row.string(6).lowercased())")
                }
            }
        }
        return schema
    }

    static func postgres(_ url: String) throws -> Schema {
        var schema = Schema()
        let database = try PostgresDatabase(url: url, maximumConnections: 1)
        defer { try? database.close() }
        try database.withConnection { db in
            let tables = try db.all("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'", []) {
                $0.string(0)
            }.filter { !bookkeeping.contains($0) }
            for table in tables {
                schema.lines.insert("table \(table)")
                try db.forEachRow("""
                    SELECT column_name, data_type, is_nullable, column_default FROM information_schema.columns
                    WHERE table_schema = 'public' AND table_name = $1
                    """, [.text(table)]) { row in
                    schema.lines.insert("column \(table).\(row.string(0)) \(family(row.string(1))) \(row.string(2) == "YES" ? "null" : "not-null") default \(literal(row.optionalString(3)))")
                }
                let primaryKey = try db.all("""
                    SELECT a.attname FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
                    WHERE i.indrelid = $1::regclass AND i.indisprimary ORDER BY array_position(i.indkey, a.attnum)
                    """, [table]) { $0.string(0) }
                schema.lines.insert("primary-key \(table) (\(primaryKey.joined(separator: ", ")))")
                try db.forEachRow("""
                    SELECT i.indisunique, i.indpred IS NOT NULL,
                           (SELECT string_agg(a.attname, ', ' ORDER BY k.n) FROM unnest(i.indkey) WITH ORDINALITY AS k(attnum, n)
                            JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum)
                    FROM pg_index i WHERE i.indrelid = $1::regclass AND NOT i.indisprimary AND NOT (0 = ANY(i.indkey))
                    """, [.text(table)]) { row in
                    let unique = row.string(0) == "t" || row.string(0) == "true", partial = row.string(1) == "t" || row.string(1) == "true"
                    schema.lines.insert("index \(table) (\(row.string(2)))\(unique ? " unique" : "")\(partial ? " partial" : "")")
                }
                try db.forEachRow("""
                    SELECT substring(indexdef FROM 'lower\\((\\w+)\\) gin_trgm_ops') FROM pg_indexes
                    WHERE schemaname = 'public' AND tablename = $1 AND indexdef LIKE '%gin_trgm_ops%'
                    """, [.text(table)]) { row in
                    schema.lines.insert("full-text \(table).\(row.string(0)) trigram")
                }
                try db.forEachRow("""
                    SELECT a.attname, ft.relname, fa.attname, c.confdeltype FROM pg_constraint c
                    CROSS JOIN LATERAL unnest(c.conkey, c.confkey) AS k(col, fcol)
                    JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.col
                    JOIN pg_class ft ON ft.oid = c.confrelid
                    JOIN pg_attribute fa ON fa.attrelid = c.confrelid AND fa.attnum = k.fcol
                    WHERE c.conrelid = $1::regclass AND c.contype = 'f'
                    """, [.text(table)]) { row in
                    let action = ["a": "no action", "r": "restrict", "c": "cascade", "n": "set null", "d": "set default"][row.string(3)] ?? row.string(3)
                    schema.lines.insert("foreign-key \(table).\(row.string(0)) -> \(row.string(1)).\(row.string(2)) on-delete \(action)")
                }
            }
        }
        return schema
    }

    @Test func bothEnginesMigrateToTheSameSchema() throws {
        guard TestEngine.enabled.contains(.postgres) else {
            print("SchemaParityTests: PostgreSQL is not among the engines here; the schemas were not compared")
            return
        }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("wb-schema-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (sqliteDatabase, _) = try AppDatabase.open(.sqlite(path: folder + "/schema.sqlite"),
                                                       migrationsDirectory: AppConfiguration.repositoryFolder("Migrations"))
        defer { try? sqliteDatabase.close() }
        let postgres = try TestPostgres.require()
        let url = try postgres.freshDatabase()
        defer { postgres.drop(url) }
        let lite = try Self.sqlite(sqliteDatabase), pg = try Self.postgres(url)
        #expect(lite.lines.count > 50, "the schema was read")
        print("schema lines: SQLite \(lite.lines.count), PostgreSQL \(pg.lines.count)")
        let onlySQLite = lite.lines.subtracting(pg.lines).sorted(), onlyPostgres = pg.lines.subtracting(lite.lines).sorted()
        #expect(onlySQLite.isEmpty && onlyPostgres.isEmpty,
                "only in SQLite:\n\(onlySQLite.joined(separator: "\n"))\nonly in PostgreSQL:\n\(onlyPostgres.joined(separator: "\n"))")

        // The comparison sees a difference of each kind it claims to (one engine changed by hand).
        let admin = try PostgresDatabase(url: url, maximumConnections: 1)
        try admin.withConnection { db in
            try db.simple("""
                ALTER TABLE reactions ALTER COLUMN created_at DROP NOT NULL;
                ALTER TABLE posts ALTER COLUMN sky SET DEFAULT 'rain';
                DROP INDEX posts_parent;
                ALTER TABLE notifications DROP CONSTRAINT notifications_post_id_fkey;
                ALTER TABLE notifications ADD FOREIGN KEY (post_id) REFERENCES posts(id) ON DELETE SET NULL
                """)
        }
        try admin.close()
        let changed = try Self.postgres(url).lines.subtracting(lite.lines).sorted()
        #expect(changed == [
            "column posts.sky text null default rain",
            "column reactions.created_at real null default -",
            "foreign-key notifications.post_id -> posts.id on-delete set null",
        ], "\(changed)")
        #expect(try !Self.postgres(url).lines.contains("index posts (parent_id, id) partial"))
    }
}
