import Foundation

/// What `weatherboard verify-backup` finds in a backup file, opened read-only: whether SQLite
/// calls it intact, whether every row's foreign keys hold, which migrations it carries, and each
/// table's rows and checksum; against the live site, which tables it lacks rows in.
struct BackupCheck {
    var tables: [DatabaseCopy.TableSummary] = []
    var migrations: [String] = []
    /// What makes the file unfit to restore from; empty when it is sound.
    var problems: [String] = []

    static func check(path: String, migrationsDirectory: String) throws -> BackupCheck {
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            throw DatabaseCopy.Failure(description: "\(path) is not a file")
        }
        let database = AppDatabase(try SQLiteDatabase.openReadOnly(path: path))
        defer { try? database.close() }
        var check = BackupCheck()
        try database.read { db in
            let integrity = try db.all("PRAGMA integrity_check") { $0.string(0) }
            if integrity != ["ok"] { check.problems += integrity.prefix(10).map { "integrity: \($0)" } }
            let orphans = try db.all("SELECT \"table\", parent, count(*) FROM pragma_foreign_key_check GROUP BY 1, 2 ORDER BY 1, 2") {
                "\($0.string(0)): \($0.int(2)) rows refer to \($0.string(1)) rows that are not there"
            }
            check.problems += orphans
            let hasLedger = try db.exists("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'grdb_migrations'")
            check.migrations = hasLedger ? try db.all("SELECT identifier FROM grdb_migrations ORDER BY identifier") { $0.string(0) } : []
            let known = try Migrations.files(in: migrationsDirectory + "/sqlite").map(Migrations.identifier)
            if check.migrations.isEmpty {
                check.problems.append("no migrations recorded: this is not a Weatherboard database")
            } else if case let unknown = Set(check.migrations).subtracting(known), !unknown.isEmpty {
                check.problems.append("made by a newer version (migrations \(unknown.sorted().joined(separator: ", "))); this one cannot serve it")
            }
            check.tables = try DatabaseCopy.summaries(of: Schema.tables(db), in: db)
        }
        return check
    }

    /// A backup with no rows in a table the live site has rows in is not the site: a restore
    /// from it would serve an empty board and call itself healthy.
    mutating func compare(withLive live: AppDatabase) throws -> [(table: String, live: Int)] {
        let liveCounts = try live.read { db in
            try Schema.tableNames(db).map { (table: $0, live: try db.integer("SELECT count(*) FROM \($0)")) }
        }
        let backup = Dictionary(uniqueKeysWithValues: tables.map { ($0.table, $0.rows) })
        for (table, rows) in liveCounts {
            switch backup[table] {
            case nil: problems.append("\(table): not in the backup, \(rows) rows on the live site")
            case 0? where rows > 0: problems.append("\(table): no rows in the backup, \(rows) on the live site")
            default: break
            }
        }
        return liveCounts
    }
}
