import Foundation
import GRDB

/// SQLite through GRDB's `DatabasePool` (WAL, foreign keys, busy timeout): the embedded default.
/// Migrations are the files of `Migrations/sqlite/`, each in its own transaction, recorded by
/// GRDB's migrator.
final class SQLiteDatabase: SQLDatabase {
    let pool: DatabasePool
    var dialect: SQLDialect { .sqlite }

    /// Opens (creating if needed) the database at `path` and applies pending migrations.
    /// - Returns: the database and the names of the migrations applied now.
    static func open(path: String, migrationsDirectory: String) throws -> (SQLiteDatabase, [String]) {
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
        return (SQLiteDatabase(pool: pool), applied)
    }

    private init(pool: DatabasePool) {
        self.pool = pool
    }

    /// One migration per `NNNN_name.sql` file, in file-name order.
    static func makeMigrator(directory: String) throws -> DatabaseMigrator {
        var migrator = DatabaseMigrator()
        for file in try Migrations.files(in: directory) {
            let sql = try String(contentsOfFile: directory + "/" + file, encoding: .utf8)
            migrator.registerMigration(Migrations.identifier(file)) { db in
                do {
                    try db.execute(sql: sql)
                } catch let error as DatabaseError {
                    throw MigrationError(description: "migration \(file) failed: \(error.message ?? "\(error)")")
                }
            }
        }
        return migrator
    }

    private static func migrate(_ pool: DatabasePool, with migrator: DatabaseMigrator) throws -> [String] {
        let (known, alreadyApplied) = try pool.read { db in
            (migrator.migrations, try migrator.appliedIdentifiers(db))
        }
        try Migrations.refuseUnknown(applied: alreadyApplied, known: known)
        do {
            try migrator.migrate(pool)
        } catch let error as MigrationError {
            throw error
        } catch {
            throw MigrationError(description: "migrations failed: \(error)")
        }
        return migrator.migrations.filter { !alreadyApplied.contains($0) }
    }

    func read<T>(_ body: (any SQLConnection) throws -> T) throws -> T {
        try pool.read { try body(GRDBConnection($0)) }
    }

    func readStatement<T>(_ body: (any SQLConnection) throws -> T) throws -> T {
        try pool.unsafeRead { try body(GRDBConnection($0)) }
    }

    func write<T>(_ body: (any SQLConnection) throws -> T) throws -> T {
        try pool.write { try body(GRDBConnection($0)) }
    }

    func isHealthy() -> Bool {
        (try? pool.read { db in try Int.fetchOne(db, sql: "SELECT 1") }) == 1
    }

    func close() throws {
        try pool.close()
    }

    /// A consistent copy of the live database at `path` (which must not exist), taken while the
    /// site serves: `VACUUM INTO` reads one snapshot, so writers are not held up (outside a
    /// transaction: SQLite refuses VACUUM inside one).
    func backup(to path: String) throws {
        try pool.unsafeRead { db in try db.execute(sql: "VACUUM INTO ?", arguments: [path]) }
    }
}

/// A GRDB connection inside a transaction. Every statement is cached per connection: preparing
/// (and GRDB's authorizer pass) cost more than running the board's queries.
final class GRDBConnection: SQLConnection {
    let db: Database
    var dialect: SQLDialect { .sqlite }

    init(_ db: Database) { self.db = db }

    @discardableResult
    func execute(_ sql: String, _ arguments: [SQLValue]) throws -> Int {
        try db.cachedStatement(sql: sql).execute(arguments: Self.arguments(arguments))
        return db.changesCount
    }

    func forEachRow(_ sql: String, _ arguments: [SQLValue], _ body: (any SQLRow) throws -> Void) throws {
        // A cursor's row reads the statement in place (`fetchAll` copies every column first), and
        // the values are read straight from SQLite's current row (GRDB's typed subscripts cost
        // about 6,000 instructions per board row, a tenth of a signed-in page).
        let statement = try db.cachedStatement(sql: sql)
        let rows = try Row.fetchCursor(statement, arguments: Self.arguments(arguments))
        while let row = try rows.next() {
            try body(GRDBRow(row: row, statement: statement.sqliteStatement))
        }
    }

    /// Through GRDB's initializer for optional existentials: the one for a sequence of concrete
    /// values maps with a key path that is built at run time on every call.
    private static func arguments(_ values: [SQLValue]) -> StatementArguments {
        StatementArguments(values.map { value -> (any DatabaseValueConvertible)? in
            switch value {
            case .null: return nil
            case .integer(let i): return i
            case .real(let d): return d
            case .text(let s): return s
            }
        })
    }
}

/// The current row of a statement being stepped. SQLite reads NULL as 0 for numbers; text is
/// checked for NULL first (SQLite gives no pointer for it).
struct GRDBRow: SQLRow {
    let row: Row
    let statement: SQLiteStatement
    func isNull(_ column: Int) -> Bool { row.hasNull(atIndex: column) }
    func int64(_ column: Int) -> Int64 { Int64(sqliteStatement: statement, index: CInt(column)) }
    func double(_ column: Int) -> Double { Double(sqliteStatement: statement, index: CInt(column)) }
    func string(_ column: Int) -> String { optionalString(column) ?? "" }
    func optionalString(_ column: Int) -> String? {
        isNull(column) ? nil : String(sqliteStatement: statement, index: CInt(column))
    }
}
