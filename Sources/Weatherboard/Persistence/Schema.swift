import Foundation

/// The site's tables as a database's own catalog declares them (SQLite's pragmas, PostgreSQL's
/// `information_schema` and `pg_constraint`): what a copy, a backup and its check read, so that a
/// table a migration adds is copied and checked without anyone listing it.
enum Schema {
    /// Each engine's record of the migrations applied: the engine's own, not the site's data.
    static let bookkeeping: Set<String> = ["grdb_migrations", "schema_migrations"]

    struct Column {
        enum Kind { case integer, real, text, blob }
        let name: String
        let kind: Kind
    }

    struct Table {
        let name: String
        let columns: [Column]
        /// Other tables this one's foreign keys name.
        let parents: Set<String>
        /// A foreign key to this same table (a reply's post): its column and the key it names.
        let selfReference: (column: String, key: String)?

        var columnList: String { columns.map(\.name).joined(separator: ", ") }

        /// The row's values, read as the source's schema declares each column.
        func values(of row: any SQLRow) -> [SQLValue] {
            columns.indices.map { index in
                if row.isNull(index) { return .null }
                return switch columns[index].kind {
                case .integer: .integer(row.int64(index))
                case .real: .real(row.double(index))
                case .text: .text(row.string(index))
                case .blob: .blob(row.bytes(index))
                }
            }
        }

        /// Every row, each after the row it refers to in this table (by depth from the rows that
        /// refer to none), so that inserting them in this order satisfies the foreign key.
        var parentsFirstQuery: String {
            guard let (column, key) = selfReference else { return "SELECT \(columnList) FROM \(name)" }
            let qualified = columns.map { "t.\($0.name)" }.joined(separator: ", ")
            return """
                WITH RECURSIVE depth(row_key, level) AS (
                    SELECT \(key), 0 FROM \(name) WHERE \(column) IS NULL
                    UNION ALL SELECT c.\(key), d.level + 1 FROM \(name) c JOIN depth d ON c.\(column) = d.row_key
                )
                SELECT \(qualified) FROM \(name) t JOIN depth d ON d.row_key = t.\(key) ORDER BY d.level
                """
        }
    }

    /// The site's tables, parents before the tables that refer to them.
    static func tables(_ db: any SQLConnection) throws -> [Table] {
        var unordered: [String: Table] = [:]
        for name in try tableNames(db) {
            var parents = Set<String>()
            var selfReference: (column: String, key: String)?
            for (column, parent, key) in try foreignKeys(of: name, db) {
                if parent == name { selfReference = (column, key) } else { parents.insert(parent) }
            }
            unordered[name] = Table(name: name, columns: try columns(of: name, db), parents: parents, selfReference: selfReference)
        }
        // Kahn's order, ties by name so that the order is the same on every run.
        var ordered: [Table] = []
        var placed = Set<String>()
        while ordered.count < unordered.count {
            let ready = unordered.values.filter { !placed.contains($0.name) && $0.parents.isSubset(of: placed) }
                .sorted { $0.name < $1.name }
            guard !ready.isEmpty else {
                let rest = unordered.keys.filter { !placed.contains($0) }.sorted()
                throw DatabaseCopy.Failure(description: "the foreign keys of \(rest.joined(separator: ", ")) form a cycle; no copy order exists")
            }
            ordered += ready
            placed.formUnion(ready.map(\.name))
        }
        return ordered
    }

    /// The target must have the same tables with the same columns (the same migrations applied).
    static func requireSameTables(_ tables: [Table], in db: any SQLConnection) throws {
        let there = Set(try tableNames(db))
        let here = Set(tables.map(\.name))
        if there != here {
            let missing = here.subtracting(there).sorted(), extra = there.subtracting(here).sorted()
            throw DatabaseCopy.Failure(description: "the target's tables differ (missing: \(missing), not in the source: \(extra)): "
                + "migrate both with the same version first")
        }
        for table in tables {
            let names = try columns(of: table.name, db).map(\.name)
            guard names == table.columns.map(\.name) else {
                throw DatabaseCopy.Failure(description: "\(table.name) has columns \(table.columns.map(\.name)) in the source "
                    + "but \(names) in the target: migrate both with the same version first")
            }
        }
    }

    /// After rows are copied into PostgreSQL with their ids, each generated id's sequence goes
    /// on after the largest copied one.
    static func continueGeneratedIDs(_ db: any SQLConnection) throws {
        let generated = try db.all("""
            SELECT table_name, column_name FROM information_schema.columns
            WHERE table_schema = current_schema() AND (is_identity = 'YES' OR column_default LIKE 'nextval(%')
            ORDER BY table_name
            """) { ($0.string(0), $0.string(1)) }
        for (table, column) in generated where !bookkeeping.contains(table) {
            try db.execute("SELECT setval(pg_get_serial_sequence('\(table)', '\(column)'), coalesce(max(\(column)), 0) + 1, false) FROM \(table)")
        }
    }

    static func tableNames(_ db: any SQLConnection) throws -> [String] {
        let names = switch db.dialect {
        case .sqlite:
            // Virtual tables and their shadow tables are the engine's (a full-text index is rebuilt
            // from the rows it indexes); sqlite_ tables are SQLite's own.
            try db.all("SELECT name FROM pragma_table_list WHERE schema = 'main' AND type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'") {
                $0.string(0)
            }
        case .postgres:
            try db.all("SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'") {
                $0.string(0)
            }
        }
        return names.filter { !bookkeeping.contains($0) }.sorted()
    }

    static func columns(of table: String, _ db: any SQLConnection) throws -> [Column] {
        let declared: [(String, String)] = switch db.dialect {
        case .sqlite:
            try db.all("SELECT name, type FROM pragma_table_info(?) ORDER BY cid", [table]) { ($0.string(0), $0.string(1)) }
        case .postgres:
            try db.all("""
                SELECT column_name, data_type FROM information_schema.columns
                WHERE table_schema = current_schema() AND table_name = ? ORDER BY ordinal_position
                """, [table]) { ($0.string(0), $0.string(1)) }
        }
        return try declared.map { name, type in
            let type = type.lowercased()
            let kind: Column.Kind
            if type.contains("int") {
                kind = .integer
            } else if type.contains("real") || type.contains("double") || type.contains("float") {
                kind = .real
            } else if type.contains("text") || type.contains("char") {
                kind = .text
            } else if type == "blob" || type == "bytea" {
                kind = .blob
            } else {
                // Copied as text it would come back different: refuse rather than change it.
                throw DatabaseCopy.Failure(description: "\(table).\(name) is of type \(type), which a copy cannot carry unchanged")
            }
            return Column(name: name, kind: kind)
        }
    }

    /// (column, the table it names, the key it names there) for each single-column foreign key.
    private static func foreignKeys(of table: String, _ db: any SQLConnection) throws -> [(String, String, String)] {
        switch db.dialect {
        case .sqlite:
            return try db.all("SELECT \"from\", \"table\", \"to\" FROM pragma_foreign_key_list(?)", [table]) {
                ($0.string(0), $0.string(1), $0.optionalString(2) ?? "id")
            }
        case .postgres:
            return try db.all("""
                SELECT a.attname, ft.relname, fa.attname FROM pg_constraint c
                JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]
                JOIN pg_class ft ON ft.oid = c.confrelid
                JOIN pg_attribute fa ON fa.attrelid = c.confrelid AND fa.attnum = c.confkey[1]
                WHERE c.conrelid = ?::regclass AND c.contype = 'f'
                """, [table]) { ($0.string(0), $0.string(1), $0.string(2)) }
        }
    }
}
