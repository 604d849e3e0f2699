import Foundation
import HTTPServer
import Metrics
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// How long anything waits on PostgreSQL. Every wait is bounded: connecting, the server's own
/// statement and lock timeouts, a deadline of the client's own on every answer (a frozen server
/// enforces none of its timeouts, and the kernel still acknowledges its packets), checking a
/// connection out of the pool, and TCP keepalives for a peer that vanished.
public struct PostgresTimeouts: Sendable, Equatable {
    /// Seconds to connect (libpq's `connect_timeout`).
    public var connect: Int = 5
    /// Seconds a statement may run on the server (`statement_timeout`).
    public var statement: Int = 5
    /// Seconds a statement may wait for a lock (`lock_timeout`).
    public var lock: Int = 2
    /// Seconds to wait for a pooled connection to be free.
    public var checkout: Double = 5
    /// Seconds a pooled connection may sit unused before it is closed (one is kept open), so a
    /// quiet node gives its connection slots back to the operator's `psql`, `backup` and `migrate`.
    public var idle: Double = 60
    public init() {}

    /// For the commands (`migrate`, `backup`, `copy-to`): statements as long as they take, no
    /// lock timeout; connecting and the pool are still bounded.
    public static let forCommands: PostgresTimeouts = {
        var timeouts = PostgresTimeouts()
        timeouts.statement = 0
        timeouts.lock = 0
        return timeouts
    }()

    /// Seconds the client waits for any answer: the server's own limit and a margin (a day
    /// when statements have no limit).
    var answer: Double { statement > 0 ? Double(statement) + 2 : 86_400 }
}

/// PostgreSQL through libpq: the shared store when the site runs on several nodes.
/// A pool of connections (sized by the caller to the threads that use them), each statement prepared once per
/// connection, values exchanged as text (what both engines' columns hold: integers, seconds
/// since 1970 as doubles, text).
final class PostgresDatabase: SQLDatabase, Sendable {
    let url: String
    private let library: LibPQ
    private struct Pool {
        /// Free connections, the one returned last at the end (used first, so the others age out).
        var idle: [(connection: PostgresConnection, since: Date)] = []
        var open = 0
        var closed = false

        /// Every connection is in use and no other may be opened.
        func isExhausted(_ maximum: Int) -> Bool { idle.isEmpty && open >= maximum && !closed }
    }
    /// A connection taken out of the pool is its taker's alone until it is checked in again.
    private let pool = ConditionLock(Pool())
    let maximumConnections: Int
    let timeouts: PostgresTimeouts
    /// Checkouts that found every connection in use and waited; those that gave up.
    private let poolWaits, poolTimeouts: Counter
    /// Closes connections unused for `timeouts.idle` seconds, even on a node nobody asks anything.
    /// (Behind a lock only because Dispatch's timers are not `Sendable`: it is set once and cancelled once.)
    private let idleSweep = Mutex<(any DispatchSourceTimer)?>(nil)

    var dialect: SQLDialect { .postgres }

    /// The cluster's write lock: a `.cluster` write holds it alone, as SQLite's one writer
    /// holds its file, so its checks and the write they guard cannot interleave with any other
    /// write on any node; `.subjects` writes share it (`WriteLocks`).
    static let writeLock: Int64 = 0x5745_4154_4852 // "WEATHR"
    /// Held while migrating, so two nodes starting together do not both apply a migration.
    static let migrationLock: Int64 = 0x5745_4154_4D49 // "WEATMI"

    init(url: String, maximumConnections: Int = 12, timeouts: PostgresTimeouts = .forCommands,
         metrics: any MetricsFactory = NOOPMetricsHandler.instance) throws {
        poolWaits = Counter(label: "weatherboard_db_pool_waits_total", factory: metrics)
        poolTimeouts = Counter(label: "weatherboard_db_pool_timeouts_total", factory: metrics)
        self.url = url
        self.library = try LibPQ.shared.get()
        self.maximumConnections = maximumConnections
        self.timeouts = timeouts
        idleSweep.withLock { [timeouts] idleSweep in
            let sweep = DispatchSource.makeTimerSource(queue: .global(qos: .utility))
            sweep.schedule(deadline: .now() + timeouts.idle / 2, repeating: timeouts.idle / 2, leeway: .seconds(1))
            sweep.setEventHandler { [weak self] in self?.closeIdleConnections() }
            sweep.resume()
            idleSweep = sweep
        }
    }

    deinit { idleSweep.withLock { $0?.cancel() } }

    /// Connections open now, in use or free (for tests and metrics).
    var openConnections: Int { pool.withLock { $0.open } }

    /// Closes the free connections unused for `timeouts.idle` seconds but the newest.
    func closeIdleConnections(now: Date = Date()) {
        let cutoff = now.addingTimeInterval(-timeouts.idle)
        let stale = pool.withLock(wake: .all) { pool in
            // The oldest sit first; the last one stays whatever its age.
            let stale = pool.idle.dropLast().prefix { $0.since < cutoff }.map(\.connection)
            pool.idle.removeFirst(stale.count)
            pool.open -= stale.count
            return stale
        }
        stale.forEach { $0.close() }
    }

    /// Connects, and applies the pending migrations of `migrationsDirectory` in order, each in its
    /// own transaction, recorded in `schema_migrations`.
    static func open(url: String, migrationsDirectory: String, connections: Int,
                     timeouts: PostgresTimeouts = .forCommands,
                     metrics: any MetricsFactory = NOOPMetricsHandler.instance) throws -> (PostgresDatabase, [String]) {
        let database = try PostgresDatabase(url: url, maximumConnections: connections, timeouts: timeouts, metrics: metrics)
        let applied = try database.migrate(directory: migrationsDirectory)
        return (database, applied)
    }

    private func migrate(directory: String) throws -> [String] {
        let files = try Migrations.files(in: directory)
        return try withConnection { connection in
            // Migrations and waiting for another node's take as long as they take; the connection
            // is closed afterwards rather than pooled with these settings.
            defer { connection.close() }
            try connection.simple("SET statement_timeout = 0; SET lock_timeout = 0")
            return try connection.withAnswerDeadline(86_400) { try migrate(files, directory: directory, connection) }
        }
    }

    private func migrate(_ files: [String], directory: String, _ connection: PostgresConnection) throws -> [String] {
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

    /// A pooled connection for the duration of `body`; a connection that broke is not returned.
    /// - Parameter wait: seconds to wait for a free connection (the pool's `checkout` timeout).
    /// A request's `DatabaseDeadline` bounds the wait, and connecting (below).
    func withConnection<T>(wait: Double? = nil, _ body: (PostgresConnection) throws -> T) throws -> T {
        let connection = try checkOut(wait: min(wait ?? timeouts.checkout, DatabaseDeadline.remaining ?? .infinity))
        do {
            let value = try body(connection)
            checkIn(connection)
            return value
        } catch {
            checkIn(connection)
            throw error
        }
    }

    private enum CheckOut {
        case pooled(PostgresConnection)
        /// Room for one more: counted as open, to be connected outside the lock.
        case connect
        case timedOut, closed
    }

    private func checkOut(wait: Double) throws -> PostgresConnection {
        let maximum = maximumConnections
        var waited = false
        // Connections ended while they sat idle (a restart, a terminated backend) are dropped
        // here, unused: after a restart no request fails on one of them.
        var ended: [PostgresConnection] = []
        defer { ended.forEach { $0.close() } }
        let outcome = pool.wait(until: Date().addingTimeInterval(wait), for: { pool in
            let exhausted = pool.isExhausted(maximum)
            if exhausted { waited = true }
            return !exhausted
        }) { pool, ready -> CheckOut in
            guard ready else { return .timedOut }
            if pool.closed { return .closed }
            while let (connection, _) = pool.idle.popLast() {
                if connection.endedWhileIdle {
                    ended.append(connection)
                    pool.open -= 1
                    continue
                }
                return .pooled(connection)
            }
            pool.open += 1
            return .connect
        }
        if waited { poolWaits.increment() }
        switch outcome {
        case .pooled(let connection):
            return connection
        case .timedOut:
            poolTimeouts.increment()
            throw SQLError(.unavailable, "no PostgreSQL connection free within \(wait) s (\(maximum) in use)")
        case .closed:
            throw SQLError(.connection, "the database is closed")
        case .connect:
            guard let remaining = DatabaseDeadline.remaining else { return try connect() }
            // A request does not wait out libpq's connect timeout (at least 2 s; 5 s here): the
            // connection is made on a thread of its own and joins the pool, and the request
            // takes a free connection while its deadline lasts.
            Thread {
                // A failure reaches the requests as the 503 of their deadline, and the next
                // checkout tries again.
                do { self.checkIn(try self.connect()) } catch {}
            }.start()
            return try checkOutIdle(until: Date().addingTimeInterval(remaining))
        }
    }

    /// A new connection, counted as open already; uncounted when it fails.
    private func connect() throws -> PostgresConnection {
        do {
            return try PostgresConnection(url: url, library: library, timeouts: timeouts)
        } catch {
            pool.withLock(wake: .one) { $0.open -= 1 }
            throw error
        }
    }

    /// A free connection by `deadline`, opening none.
    private func checkOutIdle(until deadline: Date) throws -> PostgresConnection {
        let taken = pool.wait(until: deadline, for: { !$0.idle.isEmpty || $0.closed }) { pool, ready -> PostgresConnection? in
            ready && !pool.closed ? pool.idle.popLast()?.connection : nil
        }
        guard let taken else {
            poolTimeouts.increment()
            throw SQLError(.unavailable, "no PostgreSQL connection could be made within the request's deadline")
        }
        return taken
    }

    private func checkIn(_ connection: PostgresConnection) {
        let usable = connection.isUsable
        // Every waiter looks: some wait to open a connection, some only for a free one.
        let kept = pool.withLock(wake: .all) { pool -> Bool in
            guard usable && !pool.closed else {
                pool.open -= 1
                return false
            }
            pool.idle.append((connection, Date()))
            return true
        }
        if !kept { connection.close() }
    }

    func read<T>(_ body: (any SQLConnection) throws -> T) throws -> T {
        try withConnection { connection in
            try connection.transaction("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY") { try body(connection) }
        }
    }

    func readStatement<T>(_ body: (any SQLConnection) throws -> T) throws -> T {
        try withConnection { try body($0) }
    }

    func write<T>(_ locks: WriteLocks, _ body: (any SQLConnection) throws -> T) throws -> T {
        try write(locks, commit: { "COMMIT" }, body).value
    }

    /// A write whose COMMIT is followed, in the same round trip, by what `commit` adds (made
    /// once `body` has run; see `PostgresConnection.transaction`).
    func write<T>(_ locks: WriteLocks, commit: () -> String, _ body: (any SQLConnection) throws -> T) throws -> (value: T, committed: String?) {
        // The cluster's lock with BEGIN, in one round trip: held alone by a `.cluster` write,
        // shared by `.subjects` writes (which lock their subjects as they check them).
        let begin = switch locks {
        case .cluster: "BEGIN; SELECT pg_advisory_xact_lock(\(Self.writeLock))"
        case .subjects: "BEGIN; SELECT pg_advisory_xact_lock_shared(\(Self.writeLock))"
        case .subject(let first):
            "BEGIN; SELECT pg_advisory_xact_lock_shared(\(Self.writeLock)); SELECT pg_advisory_xact_lock(\(first.keys.0), \(first.keys.1))"
        }
        // A deadlock between subjects' locks ends one of the writes, which is then tried again
        // (the whole transaction: nothing of the first try was kept).
        var attempt = 1
        while true {
            do {
                return try withConnection { connection in try connection.transaction(begin, commit: commit) { try body(connection) } }
            } catch let error as SQLError where error.kind == .conflict && attempt < Self.writeAttempts {
                attempt += 1
            }
        }
    }
    /// Tries of a write that PostgreSQL ended to break a deadlock.
    static let writeAttempts = 3

    /// Answers within `healthDeadline` whatever the server does. The check runs on a thread of
    /// its own, and whoever asks meanwhile waits for that same check: connecting to a frozen
    /// server waits out libpq's connect timeout (at least 2 s, 5 s here), which no caller should
    /// wait for, and a flood of health checks must not open a connection each.
    func isHealthy() -> Bool {
        let check = healthCheck.withLock { state -> DispatchGroup in
            if let running = state.running { return running }
            let running = DispatchGroup()
            running.enter()
            state.running = running
            Thread.detachNewThread { [weak self] in
                let healthy = self?.checkHealth() ?? false
                self?.healthCheck.withLock { $0 = HealthCheck(running: nil, lastAnswer: healthy) }
                running.leave()
            }
            return running
        }
        guard check.wait(timeout: .now() + Self.healthDeadline) == .success else { return false }
        return healthCheck.withLock { $0.lastAnswer }
    }

    /// Seconds `/healthz` waits for the database's answer.
    static let healthDeadline = 1.5
    private struct HealthCheck {
        var running: DispatchGroup?
        var lastAnswer = false
    }
    private let healthCheck = Mutex(HealthCheck())

    /// A short wait for a connection and for the answer. A pooled connection that died with a
    /// restart is dropped and one fresh connection tried at once, so health returns as soon as
    /// the server does.
    private func checkHealth() -> Bool {
        for _ in 0..<2 {
            let answer = try? withConnection(wait: 1) { connection -> Int in
                try connection.withAnswerDeadline(1) { try connection.integer("SELECT 1") }
            }
            if answer == 1 { return true }
        }
        return false
    }

    func close() throws {
        idleSweep.withLock { $0?.cancel() }
        let connections = pool.withLock(wake: .all) { pool in
            pool.closed = true
            let connections = pool.idle.map(\.connection)
            pool.idle = []
            pool.open -= connections.count
            return connections
        }
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

    /// Seconds to wait for any answer before the connection is given up (`PostgresTimeouts.answer`).
    private var answerDeadline: Double

    /// - Parameter applicationName: what `pg_stat_activity` calls this connection (the change
    ///   feed's listener names itself, so an operator can tell it from the pool's).
    init(url: String, library: LibPQ, timeouts: PostgresTimeouts = PostgresTimeouts(), applicationName: String? = nil) throws {
        self.library = library
        answerDeadline = timeouts.answer
        connection = library.connectdb(Self.withDefaults(url, timeouts, applicationName: applicationName))
        guard library.status(connection) == LibPQ.connectionOK else {
            let message = library.errorMessage(connection).map { String(cString: $0) } ?? "unknown error"
            library.finish(connection)
            connection = nil
            throw SQLError(.connection, "cannot connect to PostgreSQL: \(message.trimmingCharacters(in: .whitespacesAndNewlines))")
        }
        // Times go in and out as seconds since 1970 (doubles); keep the shortest exact text for them.
        // The server's own limits: a statement, a lock wait, a transaction left open.
        // NOTICEs ("relation … already exists, skipping") are not the operator's business: warnings and up only.
        try simple("SET extra_float_digits = 3; SET statement_timeout = '\(timeouts.statement)s'; "
                   + "SET lock_timeout = '\(timeouts.lock)s'; SET idle_in_transaction_session_timeout = '30s'; "
                   + "SET client_min_messages = warning")
    }

    /// The operator's connection settings with ours added where they say nothing: the connect
    /// timeout and TCP keepalives (a peer that vanished is noticed in about 25 s).
    static func withDefaults(_ url: String, _ timeouts: PostgresTimeouts, applicationName: String? = nil) -> String {
        let ours = [("connect_timeout", "\(timeouts.connect)"), ("keepalives", "1"), ("keepalives_idle", "10"),
                    ("keepalives_interval", "5"), ("keepalives_count", "3")] + (applicationName.map { [("application_name", $0)] } ?? [])
        let isURL = url.hasPrefix("postgres://") || url.hasPrefix("postgresql://")
        var result = url
        for (key, value) in ours where !url.contains(key + "=") {
            if isURL {
                result += (result.contains("?") ? "&" : "?") + "\(key)=\(value)"
            } else {
                result += " \(key)=\(value)"
            }
        }
        return result
    }

    /// Runs `body` with a shorter deadline for answers (`/healthz`'s second).
    func withAnswerDeadline<T>(_ seconds: Double, _ body: () throws -> T) rethrows -> T {
        let saved = answerDeadline
        answerDeadline = seconds
        defer { answerDeadline = saved }
        return try body()
    }

    /// Waits for the answer to what was sent, within `answerDeadline`; past it, the connection is
    /// given up (closed, never returned to the pool) and the wait is a 503. Several statements
    /// (the simple protocol) give several results: the first error, else the last result, is kept.
    private func awaitAnswer() throws -> LibPQ.Result? {
        var progress = Progress()
        return try awaitAnswer(&progress)
    }

    /// How far an answer of several statements got: how many results came, which was the first
    /// to fail (counted from 0), and the first column of one statement's first row.
    struct Progress {
        var received = 0
        var failedAt: Int?
        /// The statement whose value is kept (nil: the last).
        var valueOf: Int?
        var value: String?
    }

    /// `awaitAnswer`, saying in `progress` how far it got (also when it throws).
    private func awaitAnswer(_ progress: inout Progress) throws -> LibPQ.Result? {
        // A request's own deadline, when sooner: it is answered 503 in time, and the connection,
        // whose answer may still come, is given up.
        let deadline = min(Date().addingTimeInterval(answerDeadline), DatabaseDeadline.current ?? .distantFuture)
        var kept: LibPQ.Result?
        while true {
            while library.isBusy(connection) == 1 {
                let remaining = deadline.timeIntervalSinceNow
                guard remaining > 0 else {
                    library.clear(kept)
                    close()
                    throw SQLError(.timeout, "PostgreSQL did not answer in time (within \(answerDeadline) s, or the request's deadline)")
                }
                var descriptor = pollfd(fd: library.socket(connection), events: Int16(POLLIN), revents: 0)
                let ready = poll(&descriptor, 1, Int32(min(remaining * 1000, 60_000).rounded(.up)))
                if ready < 0 && errno != EINTR { break }
                if ready > 0 && library.consumeInput(connection) == 0 { break } // the connection broke: getResult says why
            }
            guard let result = library.getResult(connection) else { return kept }
            let failed = { (r: LibPQ.Result?) in r != nil && self.library.resultStatus(r) != LibPQ.commandOK && self.library.resultStatus(r) != LibPQ.tuplesOK }
            if progress.failedAt == nil && failed(result) { progress.failedAt = progress.received }
            if !failed(result), progress.valueOf.map({ $0 == progress.received }) ?? true {
                progress.value = library.ntuples(result) > 0 && library.getisnull(result, 0, 0) == 0
                    ? library.getvalue(result, 0, 0).map { String(cString: $0) } : nil
            }
            progress.received += 1
            if kept != nil && failed(kept) {
                library.clear(result)
            } else {
                library.clear(kept)
                kept = result
            }
        }
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

    /// Whether an idle connection was ended while it waited in the pool. A server that stops,
    /// restarts or ends a backend tells the client and closes the socket, which makes it
    /// readable; an idle pooled connection has nothing else to read (it listens to nothing, and
    /// notices are turned off). One `poll` that does not wait: no round trip, no statement.
    var endedWhileIdle: Bool {
        guard connection != nil else { return true }
        var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
        return poll(&descriptor, 1, 0) != 0
    }

    /// Runs `body` between `begin` and COMMIT; rolls back when it throws.
    func transaction<T>(_ begin: String, _ body: () throws -> T) throws -> T {
        try transaction(begin, commit: { "COMMIT" }, body).value
    }

    /// Runs `body` between `begin` and `commit`; rolls back when it throws. `commit` (made once
    /// `body` has run) is COMMIT and what runs after it in the same round trip, whatever becomes
    /// of this process meanwhile: the first column of the statement right after COMMIT comes
    /// back with the value. Once COMMIT has answered, the write is committed: a statement after
    /// it that fails, or an answer that does not come in time, fails alone (nil with the value).
    func transaction<T>(_ begin: String, commit: () -> String, _ body: () throws -> T) throws -> (value: T, committed: String?) {
        do {
            try simple(begin)
        } catch {
            // A begin that failed after BEGIN (its lock not granted in time) leaves the
            // connection in a failed transaction: ended here, it goes back to the pool usable.
            try? simple("ROLLBACK")
            throw error
        }
        do {
            let value = try body()
            var progress = Progress(valueOf: 1)
            do {
                try simple(commit(), &progress)
                return (value, progress.value)
            } catch where progress.received > 0 && progress.failedAt != 0 {
                // COMMIT's own answer came, and it was no failure: the write is committed, whatever
                // became of what followed it (or of the wait for it).
                return (value, progress.value)
            }
        } catch {
            try? simple("ROLLBACK")
            throw error
        }
    }

    /// Statements without parameters, through the simple query protocol (several may be given).
    func simple(_ sql: String) throws {
        var progress = Progress()
        try simple(sql, &progress)
    }

    /// `simple`, and the first column of the last statement's first row (nil if none).
    func simpleValue(_ sql: String) throws -> String? {
        var progress = Progress()
        try simple(sql, &progress)
        return progress.value
    }

    /// `simple`, saying in `progress` how far it got.
    private func simple(_ sql: String, _ progress: inout Progress) throws {
        guard library.sendQuery(connection, sql) == 1 else { return try check(nil) }
        let result = try awaitAnswer(&progress)
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
            guard library.sendPrepare(connection, name, Placeholders.postgres(sql), 0, nil) == 1 else { try check(nil, sql: sql); return nil }
            let result = try awaitAnswer()
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
            case .blob(let bytes): return strdup(PostgresRow.hexBytea(bytes)) // bytea's text form
            }
        }
        defer { texts.forEach { free($0) } }
        let sent = texts.map { UnsafePointer($0) }.withUnsafeBufferPointer { values in
            library.sendQueryPrepared(connection, name, Int32(values.count), values.baseAddress, nil, nil, 0)
        }
        guard sent == 1 else { try check(nil, sql: sql); return nil }
        let result = try awaitAnswer()
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
        // PostgreSQL's messages run over several lines (DETAIL, HINT, LINE …): one log line each.
        let message = (result.flatMap { library.resultErrorMessage($0) } ?? library.errorMessage(connection))
            .map { String(cString: $0) }
            .map { $0.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }.joined(separator: " · ") }
            ?? "unknown error"
        let state = library.resultErrorField(result, LibPQ.diagnosticSQLState).map { String(cString: $0) } ?? ""
        let kind: SQLError.Kind = switch state {
        case "23505": .uniqueViolation
        case let s where s.hasPrefix("23"): .constraintViolation
        case let s where s.hasPrefix("08") || s.isEmpty || s.hasPrefix("57P"): .connection // lost, refused, shut down
        case "55P03": .busy // a lock not granted in time
        case "40001", "40P01": .conflict // a serialisation failure, a deadlock
        case "57014": .timeout // the statement's time ran out
        case "53300": .unavailable // too many connections
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

    /// bytea in its text form, `\x` and two hex digits a byte (PostgreSQL's default output).
    func bytes(_ column: Int) -> [UInt8] {
        guard let text = text(column) else { return [] }
        let length = Int(library.getlength(result, row, Int32(column)))
        guard length >= 2 else { return [] }
        return UnsafeBufferPointer(start: text, count: length).withMemoryRebound(to: UInt8.self) { chars in
            var bytes = [UInt8]()
            bytes.reserveCapacity((length - 2) / 2)
            var i = 2
            while i + 1 < length {
                bytes.append(Self.nibble(chars[i]) << 4 | Self.nibble(chars[i + 1]))
                i += 2
            }
            return bytes
        }
    }

    private static func nibble(_ c: UInt8) -> UInt8 {
        switch c {
        case 0x30...0x39: c - 0x30
        case 0x61...0x66: c - 0x61 + 10
        case 0x41...0x46: c - 0x41 + 10
        default: 0
        }
    }

    static func hexBytea(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text = [UInt8](repeating: 0, count: 2 + bytes.count * 2)
        text[0] = UInt8(ascii: "\\"); text[1] = UInt8(ascii: "x")
        for (i, byte) in bytes.enumerated() {
            text[2 + 2 * i] = digits[Int(byte >> 4)]
            text[3 + 2 * i] = digits[Int(byte & 15)]
        }
        return String(decoding: text, as: UTF8.self)
    }
}
