import Foundation

/// PostgreSQL through libpq: the shared store when the site runs on several nodes.
/// A pool of connections (sized by the caller to the threads that use them), each statement prepared once per
/// connection, values exchanged as text (what both engines' columns hold: integers, seconds
/// since 1970 as doubles, text).
final class PostgresDatabase: SQLDatabase, @unchecked Sendable { // state guarded by `condition`
    let url: String
    private let library: LibPQ
    private let condition = NSCondition()
    private var idle: [PostgresConnection] = []
    private var open = 0
    private var closed = false
    let maximumConnections: Int

    var dialect: SQLDialect { .postgres }

    /// The advisory lock every write transaction takes, so writes are serialised across nodes as
    /// SQLite serialises them in one process: the checks a write makes (rate limits, posting
    /// rules, the report threshold) and the write they guard cannot interleave with another's.
    static let writeLock: Int64 = 0x5745_4154_4852 // "WEATHR"
    /// Held while migrating, so two nodes starting together do not both apply a migration.
    static let migrationLock: Int64 = 0x5745_4154_4D49 // "WEATMI"

    init(url: String, maximumConnections: Int = 12) throws {
        self.url = url
        self.library = try LibPQ.shared.get()
        self.maximumConnections = maximumConnections
    }

    /// Connects, and applies the pending migrations of `migrationsDirectory` in order, each in its
    /// own transaction, recorded in `schema_migrations`.
    static func open(url: String, migrationsDirectory: String, connections: Int) throws -> (PostgresDatabase, [String]) {
        let database = try PostgresDatabase(url: url, maximumConnections: connections)
        let applied = try database.migrate(directory: migrationsDirectory)
        return (database, applied)
    }

    private func migrate(directory: String) throws -> [String] {
        let files = try Migrations.files(in: directory)
        return try withConnection { connection in
            try connection.simple("SELECT pg_advisory_lock(\(Self.migrationLock))")
            defer { try? connection.simple("SELECT pg_advisory_unlock(\(Self.migrationLock))") }
            try connection.simple("""
                CREATE TABLE IF NOT EXISTS schema_migrations (identifier TEXT PRIMARY KEY, applied_at DOUBLE PRECISION NOT NULL)
                """)
            let done = try connection.all("SELECT identifier FROM schema_migrations", []) { $0.string(0) }
            try Migrations.refuseUnknown(applied: done, known: files.map(Migrations.identifier))
            var applied: [String] = []
            for file in files where !done.contains(Migrations.identifier(file)) {
                let sql = try String(contentsOfFile: directory + "/" + file, encoding: .utf8)
                do {
                    try connection.simple("BEGIN")
                    try connection.simple(sql)
                    try connection.execute("INSERT INTO schema_migrations (identifier, applied_at) VALUES (?, ?)",
                                           [.text(Migrations.identifier(file)), .real(Date().timeIntervalSince1970)])
                    try connection.simple("COMMIT")
                } catch {
                    try? connection.simple("ROLLBACK")
                    throw MigrationError(description: "migration \(file) failed: \(error)")
                }
                applied.append(Migrations.identifier(file))
            }
            return applied
        }
    }

    /// A pooled connection for the duration of `body`; a connection that broke is not returned.
    func withConnection<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        let connection = try checkOut()
        do {
            let value = try body(connection)
            checkIn(connection)
            return value
        } catch {
            checkIn(connection)
            throw error
        }
    }

    private func checkOut() throws -> PostgresConnection {
        condition.lock()
        while idle.isEmpty && open >= maximumConnections && !closed { condition.wait() }
        if closed {
            condition.unlock()
            throw SQLError(.connection, "the database is closed")
        }
        if let connection = idle.popLast() {
            condition.unlock()
            return connection
        }
        open += 1
        condition.unlock()
        do {
            return try PostgresConnection(url: url, library: library)
        } catch {
            condition.lock()
            open -= 1
            condition.signal()
            condition.unlock()
            throw error
        }
    }

    private func checkIn(_ connection: PostgresConnection) {
        let usable = connection.isUsable
        condition.lock()
        if usable && !closed { idle.append(connection) } else { open -= 1 }
        condition.signal()
        condition.unlock()
        if !usable || closed { connection.close() }
    }

    func read<T>(_ body: (any SQLConnection) throws -> T) throws -> T {
        try withConnection { connection in
            try connection.transaction("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY") { try body(connection) }
        }
    }

    func readStatement<T>(_ body: (any SQLConnection) throws -> T) throws -> T {
        try withConnection { try body($0) }
    }

    func write<T>(_ body: (any SQLConnection) throws -> T) throws -> T {
        try withConnection { connection in
            try connection.transaction("BEGIN") {
                try connection.execute("SELECT pg_advisory_xact_lock(?)", [.integer(Self.writeLock)])
                return try body(connection)
            }
        }
    }

    func isHealthy() -> Bool {
        (try? withConnection { try $0.integer("SELECT 1") }) == 1
    }

    func close() throws {
        condition.lock()
        closed = true
        let connections = idle
        idle = []
        open -= connections.count
        condition.broadcast()
        condition.unlock()
        connections.forEach { $0.close() }
    }
}

/// One libpq connection and the statements prepared on it.
final class PostgresConnection: SQLConnection {
    private let library: LibPQ
    private var connection: LibPQ.Connection?
    /// SQL as the features write it → the name of its prepared statement on this connection.
    private var prepared: [String: String] = [:]
    var dialect: SQLDialect { .postgres }

    init(url: String, library: LibPQ) throws {
        self.library = library
        connection = library.connectdb(url)
        guard library.status(connection) == LibPQ.connectionOK else {
            let message = library.errorMessage(connection).map { String(cString: $0) } ?? "unknown error"
            library.finish(connection)
            connection = nil
            throw SQLError(.connection, "cannot connect to PostgreSQL: \(message.trimmingCharacters(in: .whitespacesAndNewlines))")
        }
        // Times go in and out as seconds since 1970 (doubles); keep the shortest exact text for them.
        try simple("SET extra_float_digits = 3")
    }

    deinit { close() }

    func close() {
        if let connection { library.finish(connection) }
        connection = nil
    }

    /// Still connected, and not left inside a transaction.
    var isUsable: Bool {
        connection != nil && library.status(connection) == LibPQ.connectionOK
            && library.transactionStatus(connection) == LibPQ.transactionIdle
    }

    /// The socket, for waiting on notifications.
    var socket: Int32 { library.socket(connection) }

    /// Runs `body` between `begin` and COMMIT; rolls back when it throws.
    func transaction<T>(_ begin: String, _ body: () throws -> T) throws -> T {
        try simple(begin)
        do {
            let value = try body()
            try simple("COMMIT")
            return value
        } catch {
            try? simple("ROLLBACK")
            throw error
        }
    }

    /// Statements without parameters, through the simple query protocol (several may be given).
    func simple(_ sql: String) throws {
        let result = library.exec(connection, sql)
        defer { library.clear(result) }
        try check(result)
    }

    @discardableResult
    func execute(_ sql: String, _ arguments: [SQLValue]) throws -> Int {
        let result = try run(sql, arguments)
        defer { library.clear(result) }
        return library.cmdTuples(result).flatMap { Int(String(cString: $0)) } ?? 0
    }

    func forEachRow(_ sql: String, _ arguments: [SQLValue], _ body: (any SQLRow) throws -> Void) throws {
        let result = try run(sql, arguments)
        defer { library.clear(result) }
        for index in 0..<library.ntuples(result) {
            try body(PostgresRow(library: library, result: result, row: index))
        }
    }

    /// The notifications received so far (channel, payload), after reading what the socket holds.
    func notifications() -> [(channel: String, payload: String)] {
        guard library.consumeInput(connection) == 1 else { return [] }
        var received: [(String, String)] = []
        while let notice = library.notifies(connection) {
            received.append(LibPQ.notification(notice))
            library.freemem(notice)
        }
        return received
    }

    private func run(_ sql: String, _ arguments: [SQLValue]) throws -> LibPQ.Result? {
        let name: String
        if let known = prepared[sql] {
            name = known
        } else {
            name = "s\(prepared.count)"
            let result = library.prepare(connection, name, Placeholders.postgres(sql), 0, nil)
            defer { library.clear(result) }
            try check(result, sql: sql)
            prepared[sql] = name
        }
        let texts: [UnsafeMutablePointer<CChar>?] = arguments.map { value in
            switch value {
            case .null: return nil
            case .integer(let i): return strdup(String(i))
            case .real(let d): return strdup(d.isFinite ? "\(d)" : (d.isNaN ? "NaN" : d > 0 ? "Infinity" : "-Infinity"))
            case .text(let s): return strdup(s)
            }
        }
        defer { texts.forEach { free($0) } }
        let result = texts.map { UnsafePointer($0) }.withUnsafeBufferPointer { values in
            library.execPrepared(connection, name, Int32(values.count), values.baseAddress, nil, nil, 0)
        }
        do {
            try check(result, sql: sql)
        } catch {
            library.clear(result)
            throw error
        }
        return result
    }

    private func check(_ result: LibPQ.Result?, sql: String? = nil) throws {
        let status = library.resultStatus(result)
        guard result == nil || (status != LibPQ.commandOK && status != LibPQ.tuplesOK) else { return }
        let message = (result.flatMap { library.resultErrorMessage($0) } ?? library.errorMessage(connection))
            .map { String(cString: $0) }?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "unknown error"
        let state = library.resultErrorField(result, LibPQ.diagnosticSQLState).map { String(cString: $0) } ?? ""
        let kind: SQLError.Kind = switch state {
        case "23505": .uniqueViolation
        case let s where s.hasPrefix("23"): .constraintViolation
        case let s where s.hasPrefix("08") || s.isEmpty || s.hasPrefix("57P"): .connection // lost, refused, shut down
        case "57014", "55P03", "40001", "40P01", "53300": .unavailable // timeouts, lock waits, too many connections
        case "53100": .full // disk full
        case let s where s.hasPrefix("25006"): .unavailable // read-only transaction (a standby)
        default: .other
        }
        throw SQLError(kind, sql.map { "\(message) (in: \($0.prefix(120)))" } ?? message)
    }
}

/// A row of a text-format result.
struct PostgresRow: SQLRow {
    let library: LibPQ
    let result: LibPQ.Result?
    let row: Int32

    func isNull(_ column: Int) -> Bool { library.getisnull(result, row, Int32(column)) == 1 }

    private func text(_ column: Int) -> UnsafePointer<CChar>? { library.getvalue(result, row, Int32(column)) }

    func int64(_ column: Int) -> Int64 {
        guard let text = text(column) else { return 0 }
        switch text.pointee {
        case CChar(UInt8(ascii: "t")): return 1 // a boolean column
        case CChar(UInt8(ascii: "f")): return 0
        default: return strtoll(text, nil, 10)
        }
    }

    func double(_ column: Int) -> Double { text(column).map { strtod($0, nil) } ?? 0 }
    func string(_ column: Int) -> String { text(column).map { String(cString: $0) } ?? "" }
}
