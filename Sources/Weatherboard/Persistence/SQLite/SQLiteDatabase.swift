import Foundation
import GRDB
import GRDBSQLite

/// SQLite through GRDB's `DatabasePool` (WAL, foreign keys, busy timeout): the embedded default.
/// Migrations are the files of `Migrations/sqlite/`, each in its own transaction, recorded by
/// GRDB's migrator.
final class SQLiteDatabase: SQLDatabase {
    /// Bytes SQLite holds now, in every connection of the process (page caches, statements).
    static var memoryUsed: Int { Int(sqlite3_memory_used()) }

    let pool: DatabasePool
    var dialect: SQLDialect { .sqlite }

    /// Opens (creating if needed) the database at `path` and applies pending migrations.
    /// - Returns: the database and the names of the migrations applied now.
    static func open(path: String, migrationsDirectory: String) throws -> (SQLiteDatabase, [String]) {
        let migrator = try makeMigrator(directory: migrationsDirectory)
        // The file holds password hashes and session digests: readable by its owner alone, made
        // so before SQLite creates it (its -wal and -shm files take the main file's mode).
        try PrivateFile.prepare(path)
        var configuration = Configuration()
        configuration.foreignKeysEnabled = true
        configuration.busyMode = Self.busyMode
        configuration.maximumReaderCount = 4
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
        }
        let pool = try DatabasePool(path: path, configuration: configuration)
        let applied = try migrate(pool, with: migrator)
        return (SQLiteDatabase(pool: pool, readers: StatementReaders(path: path, most: configuration.maximumReaderCount)), applied)
    }

    private let readOnly: Bool
    /// Connections for one-statement reads (nil: GRDB's pool serves them).
    private let readers: StatementReaders?

    private init(pool: DatabasePool, readers: StatementReaders? = nil, readOnly: Bool = false) {
        self.pool = pool
        self.readers = readers
        self.readOnly = readOnly
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

    /// One snapshot for every statement of `body`: on a statement reader inside BEGIN and COMMIT
    /// (two cached statements), else in GRDB's read transaction.
    func read<T>(_ body: (any SQLConnection) throws -> T) throws -> T {
        try Self.classifying {
            if let readers, let value = try readers.withReader({ reader in try Self.snapshot(reader, body) }) { return value }
            return try pool.read { try body(GRDBConnection($0)) }
        }
    }

    private static func snapshot<T>(_ reader: any SQLConnection, _ body: (any SQLConnection) throws -> T) throws -> T {
        _ = try reader.execute("BEGIN", [])
        do {
            let value = try body(reader)
            _ = try reader.execute("COMMIT", [])
            return value
        } catch {
            _ = try? reader.execute("ROLLBACK", [])
            throw error
        }
    }

    func readStatement<T>(_ body: (any SQLConnection) throws -> T) throws -> T {
        try Self.classifying {
            if let readers, let value = try readers.withReader(body) { return value }
            return try pool.unsafeRead { try body(GRDBConnection($0)) }
        }
    }

    func write<T>(_ locks: WriteLocks, _ body: (any SQLConnection) throws -> T) throws -> T {
        try Self.classifying { try pool.write { try body(GRDBConnection($0)) } }
    }

    /// Every error of SQLite's as an `SQLError` of the kind the site acts on (what PostgreSQL's
    /// are turned into too): a full disk, a busy or locked database past the busy timeout, a
    /// read-only file or an I/O error are passing trouble answered 503/507; a constraint is
    /// told apart as unique or other. Errors that are not SQLite's pass through unchanged.
    private static func classifying<T>(_ work: () throws -> T) throws -> T {
        do {
            return try work()
        } catch let error as DatabaseError {
            throw SQLError(kind(of: error), "SQLite: \(error.message ?? "\(error.resultCode)")\(error.sql.map { " (in: \($0.prefix(120)))" } ?? "")")
        }
    }

    static func kind(of error: DatabaseError) -> SQLError.Kind {
        switch error.resultCode {
        case .SQLITE_FULL: .full
        case .SQLITE_BUSY, .SQLITE_LOCKED: .busy
        case .SQLITE_READONLY, .SQLITE_IOERR, .SQLITE_CANTOPEN, .SQLITE_NOMEM, .SQLITE_PROTOCOL: .unavailable
        case .SQLITE_CONSTRAINT:
            error.extendedResultCode == .SQLITE_CONSTRAINT_UNIQUE || error.extendedResultCode == .SQLITE_CONSTRAINT_PRIMARYKEY
                ? .uniqueViolation : .constraintViolation
        default: .other
        }
    }

    func isHealthy() -> Bool {
        (try? pool.read { db in try Int.fetchOne(db, sql: "SELECT 1") }) == 1
    }

    /// Moves every commit from the `-wal` into the database file first, so that after a clean
    /// stop the `.sqlite` alone holds the site (an operator copying it finds every post there).
    func close() throws {
        readers?.close()
        if !readOnly { try pool.writeWithoutTransaction { db in _ = try db.checkpoint(.truncate) } }
        try pool.close()
    }

    /// The writer connection's `PRAGMA data_version`: it moves only when another connection
    /// commits (another process: `weatherboard create-admin`, an operator's `sqlite3`), never for
    /// this process's own writes, which all go through that connection. Nil if it cannot be read.
    func othersCommitted() -> Int? {
        try? pool.writeWithoutTransaction { db in try Int.fetchOne(db, sql: "PRAGMA data_version") }
    }

    /// An existing database as it is, read-only: nothing migrated, nothing written (a backup
    /// being checked). A missing file is an error, not a new database.
    /// Waiting for a lock another connection or process holds, as SQLite's own busy timeout
    /// waits (1, 2, 5 … 100 ms between tries: most waits are a reader's moment beside a
    /// checkpoint), for 5 s in all, or until the request's `DatabaseDeadline` (then
    /// SQLITE_BUSY, a 503).
    static let busyMode = Database.BusyMode.callback(keepsWaiting)

    /// Whether to try again after `tries` tries, having waited for the next; false gives SQLITE_BUSY.
    static func keepsWaiting(_ tries: Int) -> Bool {
        let delays: [UInt32] = [1, 2, 5, 10, 15, 20, 25, 25, 25, 50, 50, 100]
        let waited = delays.prefix(tries).reduce(0, +) + UInt32(max(0, tries - delays.count)) * 100
        if let deadline = DatabaseDeadline.current { guard Date() < deadline else { return false } } else if waited >= 5_000 { return false }
        usleep(delays[min(tries, delays.count - 1)] * 1000)
        return true
    }

    static func openReadOnly(path: String) throws -> SQLiteDatabase {
        var configuration = Configuration()
        configuration.readonly = true
        configuration.busyMode = .timeout(5)
        return SQLiteDatabase(pool: try classifying { try DatabasePool(path: path, configuration: configuration) }, readOnly: true)
    }
}

/// A GRDB connection inside a transaction. Every statement is cached per connection: preparing
/// (and GRDB's authorizer pass) cost more than running the board's queries. GRDB opens, pools,
/// configures, migrates and runs the transactions; the statements themselves are bound, stepped
/// and read through SQLite's C interface on GRDB's statement handle (GRDB's documented escape
/// hatch), since its cursor and argument set-up cost more than SQLite took to run most of the
/// statements. Nothing here uses what that skips (GRDB's transaction observers and region
/// tracking).
final class GRDBConnection: SQLConnection {
    let db: Database
    var dialect: SQLDialect { .sqlite }

    init(_ db: Database) { self.db = db }

    @discardableResult
    func execute(_ sql: String, _ arguments: [SQLValue]) throws -> Int {
        try run(sql, arguments) { _ in }
        return Int(sqlite3_changes(db.sqliteConnection))
    }

    func forEachRow(_ sql: String, _ arguments: [SQLValue], _ body: (any SQLRow) throws -> Void) throws {
        try run(sql, arguments) { try body(SQLiteRow(statement: $0)) }
    }

    private func run(_ sql: String, _ arguments: [SQLValue], _ body: (SQLiteStatement) throws -> Void) throws {
        try Self.run(try db.cachedStatement(sql: sql).sqliteStatement, on: db.sqliteConnection, sql, arguments, body)
    }

    /// Binds `arguments` to the prepared statement `handle` and steps it to the end, handing each
    /// row to `body`. The statement is reset afterwards, however this ends: a statement left
    /// mid-way would hold its read snapshot (and WAL checkpoints) open.
    static func run(_ handle: SQLiteStatement, on connection: SQLiteConnection?, _ sql: String, _ arguments: [SQLValue],
                    _ body: (SQLiteStatement) throws -> Void) throws {
        defer {
            sqlite3_reset(handle)
            sqlite3_clear_bindings(handle)
        }
        guard Int(sqlite3_bind_parameter_count(handle)) == arguments.count else {
            throw DatabaseError(resultCode: .SQLITE_MISUSE,
                                message: "\(arguments.count) arguments for \(sqlite3_bind_parameter_count(handle)) parameters", sql: sql)
        }
        for (offset, value) in arguments.enumerated() {
            let index = CInt(offset + 1)
            let code: CInt = switch value {
            case .null: sqlite3_bind_null(handle, index)
            case .integer(let integer): sqlite3_bind_int64(handle, index, integer)
            case .real(let real): sqlite3_bind_double(handle, index, real)
            case .text(let text): bind(text, handle, index)
            case .blob(let bytes):
                bytes.withUnsafeBytes { raw in
                    // A zero-length blob still needs an address (NULL would bind NULL).
                    sqlite3_bind_blob(handle, index, raw.baseAddress ?? UnsafeRawPointer(bitPattern: 1), CInt(raw.count), transient)
                }
            }
            guard code == SQLITE_OK else { throw failure(code, connection, sql) }
        }
        while true {
            switch sqlite3_step(handle) {
            case SQLITE_ROW: try body(handle)
            case SQLITE_DONE: return
            case let code: throw failure(code, connection, sql)
            }
        }
    }

    /// Text copied by SQLite as it binds (`SQLITE_TRANSIENT`), so no Swift buffer must outlive this call.
    private static func bind(_ text: String, _ handle: SQLiteStatement, _ index: CInt) -> CInt {
        var text = text
        return text.withUTF8 { bytes in
            bytes.withMemoryRebound(to: CChar.self) { chars in
                // An empty string may have no address, and SQLite needs one for '' (NULL is NULL).
                guard let start = chars.baseAddress else { return sqlite3_bind_text(handle, index, "", 0, Self.transient) }
                return sqlite3_bind_text(handle, index, start, CInt(chars.count), Self.transient)
            }
        }
    }

    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    static func failure(_ code: CInt, _ connection: SQLiteConnection?, _ sql: String) -> DatabaseError {
        DatabaseError(resultCode: ResultCode(rawValue: code), message: connection.map { String(cString: sqlite3_errmsg($0)) }, sql: sql)
    }
}

/// The current row of a statement being stepped. SQLite reads NULL as 0 for numbers; text is
/// checked for NULL first (SQLite gives no pointer for it).
struct SQLiteRow: SQLRow {
    let statement: SQLiteStatement
    func isNull(_ column: Int) -> Bool { sqlite3_column_type(statement, CInt(column)) == SQLITE_NULL }
    func int64(_ column: Int) -> Int64 { sqlite3_column_int64(statement, CInt(column)) }
    func double(_ column: Int) -> Double { sqlite3_column_double(statement, CInt(column)) }
    func string(_ column: Int) -> String { optionalString(column) ?? "" }
    func optionalString(_ column: Int) -> String? {
        guard let text = sqlite3_column_text(statement, CInt(column)) else { return nil }
        return String(decoding: UnsafeBufferPointer(start: text, count: Int(sqlite3_column_bytes(statement, CInt(column)))), as: UTF8.self)
    }
    func bytes(_ column: Int) -> [UInt8] {
        guard let blob = sqlite3_column_blob(statement, CInt(column)) else { return [] }
        return Array(UnsafeRawBufferPointer(start: blob, count: Int(sqlite3_column_bytes(statement, CInt(column)))))
    }
}
