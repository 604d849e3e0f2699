import Foundation
import HTTPServer
import Metrics
import Synchronization

/// Why the database could not be opened or migrated; the message names the database and the cause.
public struct MigrationError: Error, CustomStringConvertible {
    public let description: String
}

/// The application's database, whichever engine holds it: SQLite (a file, the default) or
/// PostgreSQL (a URL, for several nodes). Features read and write through it; only the stores'
/// SQL knows it is SQL, and nothing above them knows which engine.
public final class AppDatabase: Sendable {
    public let engine: any SQLDatabase
    /// What writes through `write(_:)` with a change log committed, and what other nodes did.
    public let changes = ChangeStream()
    /// Statements run since the database was opened (a page's count is a test's measure: a list
    /// must not cost a query per item).
    public let statements = Atomic<Int>(0)

    /// Where the data lives.
    public enum Location: Sendable, Equatable {
        case sqlite(path: String)
        case postgres(url: String)
    }

    /// Opens the database and applies pending migrations from `migrationsDirectory/<engine>/`.
    /// - Parameter connections: PostgreSQL connections at most: one for every thread that may
    ///   use the database at once (request workers, weather fetches), so none waits for another's.
    /// - Returns: the database and the names of the migrations applied now.
    public static func open(_ location: Location, migrationsDirectory: String,
                            connections: Int = 12, timeouts: PostgresTimeouts = PostgresTimeouts(),
                            metrics: any MetricsFactory = NOOPMetricsHandler.instance) throws -> (AppDatabase, [String]) {
        switch location {
        case .sqlite(let path):
            let (engine, applied) = try SQLiteDatabase.open(path: path, migrationsDirectory: migrationsDirectory + "/sqlite")
            return (AppDatabase(engine, metrics: metrics), applied)
        case .postgres(let url):
            let (engine, applied) = try PostgresDatabase.open(url: url, migrationsDirectory: migrationsDirectory + "/postgres",
                                                                 connections: connections, timeouts: timeouts, metrics: metrics)
            return (AppDatabase(engine, metrics: metrics), applied)
        }
    }

    init(_ engine: any SQLDatabase, metrics: any MetricsFactory = NOOPMetricsHandler.instance) {
        self.engine = engine
        statementTimer = Metrics.Timer(label: "weatherboard_db_statement_duration_seconds",
                                       dimensions: [("engine", engine.dialect == .postgres ? "postgres" : "sqlite")], factory: metrics)
        let kind = { Counter(label: "weatherboard_db_errors_total", dimensions: [("kind", $0)], factory: metrics) }
        troubles = Troubles(connection: kind("connection"), unavailable: kind("unavailable"), full: kind("full"))
    }

    /// The database's passing troubles, counted for the operator as they reach the features:
    /// unreachable or gone, answered but not now (busy, locked, read-only, a timeout), full.
    private struct Troubles {
        let connection, unavailable, full: Counter
        let answers = Answers()

        func count<T>(_ work: () throws -> T) rethrows -> T {
            answers.waiting.add(1, ordering: .relaxed)
            defer { answers.waiting.subtract(1, ordering: .relaxed) }
            do {
                let value = try work()
                answers.last.store(Answers.now(), ordering: .relaxed)
                return value
            } catch let error as SQLError where error.isTemporary {
                if [.timeout, .connection, .unavailable].contains(error.kind) { answers.troubled.store(Answers.now(), ordering: .relaxed) }
                switch error.kind {
                case .connection: connection.increment()
                case .full: full.increment()
                default: unavailable.increment()
                }
                throw error
            }
        }
    }
    /// Work waiting on the database, and when it last answered (successfully: a deadline's 503
    /// is no answer).
    private final class Answers: Sendable {
        let waiting = Atomic<Int>(0)
        let last = Atomic<UInt64>(Answers.now())
        /// When work last got no answer in time, or no connection (0: never).
        let troubled = Atomic<UInt64>(0)
        static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds / 1_000_000 }
    }

    private let troubles: Troubles

    /// The database has stopped answering: its last word was a timeout or a refused connection,
    /// or work waits on it and nothing has come back for half a second (a frozen or stopped
    /// server, a lock another process holds); the next answer ends it. Guests' kept pages are
    /// then served beside it (`Application.lane`). Three atomic loads.
    public var isStalled: Bool {
        let answers = troubles.answers, last = answers.last.load(ordering: .relaxed)
        return answers.troubled.load(ordering: .relaxed) > last
            || (answers.waiting.load(ordering: .relaxed) > 0 && Answers.now() &- last >= 500)
    }
    /// Each statement's time, from the call to its last row read (for the operator).
    fileprivate let statementTimer: Metrics.Timer

    public var dialect: SQLDialect { engine.dialect }

    // Each access first leaves the quick lane (`Lane.waitsAllowed`): a request sent there on the
    // chance that its page is kept never waits on the database beside static files.
    public func read<T>(_ body: (any SQLConnection) throws -> T) throws -> T {
        try Lane.waitsAllowed()
        return try troubles.count { try engine.read { try body(CountedConnection($0, self)) } }
    }

    public func readStatement<T>(_ body: (any SQLConnection) throws -> T) throws -> T {
        try Lane.waitsAllowed()
        return try troubles.count { try engine.readStatement { try body(CountedConnection($0, self)) } }
    }

    /// A write that changes nothing pages show (sessions, rate limits, blocks, leases); what
    /// it excludes while it runs is `locks` (`.cluster`: every other write).
    @discardableResult
    public func write<T>(_ locks: WriteLocks = .cluster, _ body: (any SQLConnection) throws -> T) throws -> T {
        try Lane.waitsAllowed()
        return try troubles.count { try engine.write(locks) { try body(CountedConnection($0, self)) } }
    }

    /// A write that changes what pages show: `body` emits each change into the log where it
    /// writes the data, and the changes reach every consumer once the transaction commits
    /// (none if it does not).
    @discardableResult
    public func write<T>(_ locks: WriteLocks = .cluster, _ body: (any SQLConnection, ChangeLog) throws -> T) throws -> T {
        try Lane.waitsAllowed()
        var committed: [PageChange] = []
        let value = try troubles.count { try engine.write(locks) { engineConnection in
            let db = CountedConnection(engineConnection, self)
            let log = ChangeLog(db, notifyingAs: dialect == .postgres ? changes.node : nil)
            let value = try body(db, log)
            committed = log.changes
            return value
        } }
        changes.deliver(committed, from: .here)
        return value
    }
    public func isHealthy() -> Bool { engine.isHealthy() }
    public func close() throws {
        closed.store(true, ordering: .relaxed)
        try engine.close()
    }
    /// Closed: work scheduled for later (`Surges`) has nothing left to do.
    public var isClosed: Bool { closed.load(ordering: .relaxed) }
    private let closed = Atomic(false)
}

/// A connection that counts its statements into its database's `statements`.
private final class CountedConnection: SQLConnection {
    private let connection: any SQLConnection
    private unowned let database: AppDatabase

    init(_ connection: any SQLConnection, _ database: AppDatabase) {
        self.connection = connection
        self.database = database
    }

    var dialect: SQLDialect { connection.dialect }

    /// Subjects this transaction holds already: asking again would cost a round trip for nothing
    /// (a post's write locks its author, and their standing's refresh asks again).
    private var held: Set<LockSubject> = []

    func lock(_ subject: LockSubject) throws {
        guard !held.contains(subject) else { return }
        try connection.lock(subject)
        held.insert(subject)
    }

    func execute(_ sql: String, _ arguments: [SQLValue]) throws -> Int {
        database.statements.add(1, ordering: .relaxed)
        let started = DispatchTime.now().uptimeNanoseconds
        defer { database.statementTimer.recordNanoseconds(Int64(clamping: DispatchTime.now().uptimeNanoseconds &- started)) }
        return try connection.execute(sql, arguments)
    }

    func forEachRow(_ sql: String, _ arguments: [SQLValue], _ body: (any SQLRow) throws -> Void) throws {
        database.statements.add(1, ordering: .relaxed)
        let started = DispatchTime.now().uptimeNanoseconds
        defer { database.statementTimer.recordNanoseconds(Int64(clamping: DispatchTime.now().uptimeNanoseconds &- started)) }
        try connection.forEachRow(sql, arguments, body)
    }
}

/// The migration files both engines share the numbering of: `NNNN_name.sql`, in name order.
enum Migrations {
    static func files(in directory: String) throws -> [String] {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory)
        } catch {
            throw MigrationError(description: "cannot read the migrations folder \(directory)")
        }
        return names.filter { $0.hasSuffix(".sql") && $0.first?.isNumber == true }.sorted()
    }

    static func identifier(_ file: String) -> String { String(file.dropLast(4)) }

    /// A database migrated by a newer version is not ours to write.
    static func refuseUnknown(applied: some Collection<String>, known: [String]) throws {
        let unknown = Set(applied).subtracting(known)
        if !unknown.isEmpty {
            throw MigrationError(description: "the database was migrated by a newer version of Weatherboard "
                + "(unknown migrations: \(unknown.sorted().joined(separator: ", "))); refusing to use it")
        }
    }
}
