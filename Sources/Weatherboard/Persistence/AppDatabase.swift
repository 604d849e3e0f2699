import Foundation
import GRDB

/// Why the database could not be opened or migrated; the message names the file and the cause.
public struct MigrationError: Error, CustomStringConvertible {
    public let description: String
}

/// Owns the SQLite `DatabasePool` (WAL, foreign keys, busy timeout) and applies the SQL files in
/// `Migrations/` in order, each in its own transaction, recorded by GRDB's migrator.
public final class AppDatabase: Sendable {
    public let pool: DatabasePool

    /// Opens (creating if needed) the database at `path` and applies pending migrations.
    /// - Returns: the database and the names of the migrations applied now.
    public static func open(path: String, migrationsDirectory: String) throws -> (AppDatabase, [String]) {
        let migrator = try makeMigrator(directory: migrationsDirectory)
        var configuration = Configuration()
        configuration.foreignKeysEnabled = true
        configuration.busyMode = .timeout(5)
        configuration.maximumReaderCount = 4
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
        }
        let pool = try DatabasePool(path: path, configuration: configuration)
        let applied = try migrate(pool, with: migrator)
        return (AppDatabase(pool: pool), applied)
    }

    private init(pool: DatabasePool) {
        self.pool = pool
    }

    /// One migration per `NNNN_name.sql` file, in file-name order.
    static func makeMigrator(directory: String) throws -> DatabaseMigrator {
        let files = try migrationFiles(in: directory)
        var migrator = DatabaseMigrator()
        for file in files {
            let sql = try String(contentsOfFile: directory + "/" + file, encoding: .utf8)
            let identifier = String(file.dropLast(4))
            migrator.registerMigration(identifier) { db in
                do {
                    try db.execute(sql: sql)
                } catch let error as DatabaseError {
                    throw MigrationError(description: "migration \(file) failed: \(error.message ?? "\(error)")")
                }
            }
        }
        return migrator
    }

    static func migrationFiles(in directory: String) throws -> [String] {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory)
        } catch {
            throw MigrationError(description: "cannot read the migrations folder \(directory)")
        }
        return names.filter { $0.hasSuffix(".sql") && $0.first?.isNumber == true }.sorted()
    }

    private static func migrate(_ pool: DatabasePool, with migrator: DatabaseMigrator) throws -> [String] {
        let (known, alreadyApplied) = try pool.read { db in
            (Set(migrator.migrations), try migrator.appliedIdentifiers(db))
        }
        let unknown = alreadyApplied.subtracting(known)
        if !unknown.isEmpty {
            throw MigrationError(description: "the database was migrated by a newer version of Weatherboard "
                + "(unknown migrations: \(unknown.sorted().joined(separator: ", "))); refusing to use it")
        }
        do {
            try migrator.migrate(pool)
        } catch let error as MigrationError {
            throw error
        } catch {
            throw MigrationError(description: "migrations failed: \(error)")
        }
        return migrator.migrations.filter { !alreadyApplied.contains($0) }
    }

    /// True when SQLite answers a trivial query.
    public func isHealthy() -> Bool {
        (try? pool.read { db in try Int.fetchOne(db, sql: "SELECT 1") }) == 1
    }
}
