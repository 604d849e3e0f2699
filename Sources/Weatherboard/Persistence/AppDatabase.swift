import Foundation
import HTTPServer
import Logging
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
    public let changes: ChangeStream
    /// Statements run since the database was opened (a page's count is a test's measure: a list
    /// must not cost a query per item).
    public let statements = Atomic<Int>(0)
    /// Streaming replicas that pages read from (PostgreSQL with `--database-replica-url`).
    let replicas: ReplicaSet?
    /// Statements of reads, by where they ran (the operator's measure of what replicas take).
    let readStatements = ReadStatements()
    final class ReadStatements: Sendable {
        let primary = Atomic<Int>(0), replica = Atomic<Int>(0)
    }

    /// Where the data lives.
    public enum Location: Sendable, Equatable {
        case sqlite(path: String)
        case postgres(url: String)
    }

    /// Opens the database and applies pending migrations from `migrationsDirectory/<engine>/`.
    /// - Parameter connections: PostgreSQL connections at most: one for every thread that may
    ///   use the database at once (request workers, weather fetches), so none waits for another's.
    /// - Returns: the database and the names of the migrations applied now.
    /// - Parameter replicas: PostgreSQL streaming replicas of `location` for pages' reads, and
    ///   the lag in seconds past which one serves nothing.
    public static func open(_ location: Location, migrationsDirectory: String,
                            connections: Int = 12, timeouts: PostgresTimeouts = PostgresTimeouts(),
                            replicas: (urls: [String], maximumLag: Double) = ([], 1),
                            metrics: any MetricsFactory = NOOPMetricsHandler.instance,
                            logger: Logger = Logger(label: "weatherboard")) throws -> (AppDatabase, [String]) {
        switch location {
        case .sqlite(let path):
            guard replicas.urls.isEmpty else {
                throw MigrationError(description: "replicas (--database-replica-url) need PostgreSQL (--database-url)")
            }
            let (engine, applied) = try SQLiteDatabase.open(path: path, migrationsDirectory: migrationsDirectory + "/sqlite")
            return (AppDatabase(engine, metrics: metrics), applied)
        case .postgres(let url):
            let (engine, applied) = try PostgresDatabase.open(url: url, migrationsDirectory: migrationsDirectory + "/postgres",
                                                                 connections: connections, timeouts: timeouts, metrics: metrics)
            let stream = ChangeStream()
            let replicaSet = try replicas.urls.isEmpty ? nil
                : ReplicaSet(primaryURL: url, replicaURLs: replicas.urls, maximumLag: replicas.maximumLag,
                             connections: connections, timeouts: timeouts, stream: stream, logger: logger)
            let database = AppDatabase(engine, metrics: metrics, changes: stream, replicas: replicaSet)
            return (database, applied)
        }
    }

    init(_ engine: any SQLDatabase, metrics: any MetricsFactory = NOOPMetricsHandler.instance,
         changes: ChangeStream = ChangeStream(), replicas: ReplicaSet? = nil) {
        self.engine = engine
        self.changes = changes
        self.replicas = replicas
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
    /// A consistent read. In a GET's request, where replicas are set up, it may run on one
    /// that has replayed what the reader must see (`ReplicaSet`); `.current` keeps it on the
    /// primary (a token looked up from a link mailed a moment ago).
    public func read<T>(_ body: (any SQLConnection) throws -> T) throws -> T { try read(.mayLag, body) }

    public func read<T>(_ freshness: Freshness, _ body: (any SQLConnection) throws -> T) throws -> T {
        try Lane.waitsAllowed()
        if freshness == .mayLag, let replica = replica() {
            if let value = try onReplica(replica, { try replica.database.read { try body(CountedConnection($0, self, .onReplica)) } }) {
                return value
            }
        }
        return try troubles.count { try engine.read { try body(CountedConnection($0, self, .onPrimary)) } }
    }

    /// One statement's read (its own snapshot), as `read`.
    public func readStatement<T>(_ body: (any SQLConnection) throws -> T, file: StaticString = #fileID, line: UInt = #line) throws -> T {
        try readStatement(.mayLag, body, file: file, line: line)
    }

    public func readStatement<T>(_ freshness: Freshness, _ body: (any SQLConnection) throws -> T,
                                 file: StaticString = #fileID, line: UInt = #line) throws -> T {
        try Lane.waitsAllowed()
        func one(_ connection: any SQLConnection, _ reading: CountedConnection.Reading) throws -> T {
            let counted = CountedConnection(connection, self, reading)
            let value = try body(counted)
            // A read of several statements is one snapshot (`read`); this one's each have their own.
            assert(counted.executed <= 1, "readStatement at \(file):\(line) ran \(counted.executed) statements: use read")
            return value
        }
        if freshness == .mayLag, let replica = replica() {
            if let value = try onReplica(replica, { try replica.database.readStatement { try one($0, .onReplica) } }) {
                return value
            }
        }
        return try troubles.count { try engine.readStatement { try one($0, .onPrimary) } }
    }

    /// Whether a read may show data a second or so old.
    public enum Freshness: Sendable {
        /// A page's read: a replica that has replayed the reader's own writes may serve it.
        case mayLag
        /// The primary's data as it is now.
        case current
    }

    /// The replica this request's read may use, if any.
    private func replica() -> ReplicaSet.Replica? {
        guard let replicas, let reads = RequestReads.current, reads.mayUseReplica else { return nil }
        guard let replica = replicas.replica(seeing: reads.floor.load(ordering: .relaxed)) else {
            replicas.fallbacks.add(1, ordering: .relaxed)
            return nil
        }
        reads.read(at: replica.replayed.load(ordering: .acquiring))
        return replica
    }

    /// `work` on a replica, within `ReplicaSet.readDeadline` or half the request's time left
    /// (whichever is more), leaving the rest for the primary; nil when the replica failed it
    /// (gone, frozen, or it cancelled the read to replay), and the read is then the primary's.
    private func onReplica<T>(_ replica: ReplicaSet.Replica, _ work: () throws -> T) throws -> T? {
        let now = Date(), request = DatabaseDeadline.current ?? .distantFuture
        let own = now.addingTimeInterval(max(ReplicaSet.readDeadline, request.timeIntervalSince(now) / 2))
        do {
            return try DatabaseDeadline.$current.withValue(min(request, own)) { try work() }
        } catch let error as SQLError where error.isTemporary {
            // Out of the request's own time: the primary could not answer in it either.
            if error.kind == .timeout && request <= own { throw error }
            replicas?.failed(replica, error)
            return nil
        }
    }

    /// A write that changes nothing pages show (sessions, rate limits, blocks, leases); what
    /// it excludes while it runs is `locks` (`.cluster`: every other write).
    @discardableResult
    public func write<T>(_ locks: WriteLocks, _ body: (any SQLConnection) throws -> T) throws -> T {
        try Lane.waitsAllowed()
        return try troubles.count { try committing(locks, { [] }, { try body(CountedConnection($0, self, holding: locks.first)) }) }
    }

    /// The engine's write. On PostgreSQL the other nodes are told of `changes` right after
    /// COMMIT, in its round trip; where replicas serve reads, the commit's position goes to the
    /// request (its later reads, and its client's next, must see it) and `changes` wait for the
    /// replicas before this node's consumers hear them.
    private func committing<T>(_ locks: WriteLocks, _ changes: () -> [PageChange],
                               _ body: (any SQLConnection) throws -> T) throws -> T {
        guard let postgres = engine as? PostgresDatabase else {
            let value = try engine.write(locks, body)
            self.changes.deliver(changes(), from: .here)
            return value
        }
        let stream = self.changes, reportsPosition = replicas != nil
        // The position right after COMMIT (the value the engine hands back), then the notices.
        let (value, last) = try postgres.write(locks, commit: {
            ["COMMIT", reportsPosition ? "SELECT \(WALPosition.insertQuery)" : nil, stream.notifications(changes())]
                .compactMap { $0 }.joined(separator: "; ")
        }, body)
        guard let replicas else {
            stream.deliver(changes(), from: .here)
            return value
        }
        // No position (PostgreSQL always gives one, but its answer may not have come in time):
        // asked again, else the changes go at once, as without replicas.
        let position = last.flatMap(WALPosition.parse)
            ?? (try? postgres.withConnection { try $0.simpleValue("SELECT \(WALPosition.insertQuery)") }).flatMap { $0.flatMap(WALPosition.parse) } ?? 0
        if position > 0 { RequestReads.current?.committed(at: position) }
        replicas.hold(changes(), from: .here, at: position)
        return value
    }

    /// Changes another node committed, heard at `position` (or later): to this node's consumers,
    /// once the replicas have them where there are replicas.
    func heard(_ changes: [PageChange], at position: UInt64?) {
        if let replicas, let position {
            replicas.hold(changes, from: .elsewhere, at: position)
        } else {
            self.changes.deliver(changes, from: .elsewhere)
        }
    }

    /// A write that changes what pages show: `body` emits each change into the log where it
    /// writes the data, and the changes reach every consumer once the transaction commits
    /// (none if it does not).
    @discardableResult
    public func write<T>(_ locks: WriteLocks, _ body: (any SQLConnection, ChangeLog) throws -> T) throws -> T {
        try Lane.waitsAllowed()
        var committed: [PageChange] = []
        return try troubles.count { try committing(locks, { committed }) { engineConnection in
            let db = CountedConnection(engineConnection, self, holding: locks.first)
            let log = ChangeLog(db)
            let value = try body(db, log)
            committed = log.changes
            return value
        } }
    }
    public func isHealthy() -> Bool { engine.isHealthy() }
    public func close() throws {
        closed.store(true, ordering: .relaxed)
        replicas?.stop()
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
    /// Where its statements are counted as reads (where replicas are set up): nil in a write.
    private let reading: Reading?

    enum Reading { case onPrimary, onReplica }

    init(_ connection: any SQLConnection, _ database: AppDatabase, _ reading: Reading? = nil, holding first: LockSubject? = nil) {
        self.connection = connection
        self.database = database
        self.reading = database.replicas == nil ? nil : reading
        if let first { held.insert(first) }
    }

    /// Statements run through this connection.
    private(set) var executed = 0

    private func countRead() {
        executed += 1
        switch reading {
        case .onPrimary: database.readStatements.primary.add(1, ordering: .relaxed)
        case .onReplica: database.readStatements.replica.add(1, ordering: .relaxed)
        case nil: break
        }
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
        countRead()
        let started = DispatchTime.now().uptimeNanoseconds
        defer { database.statementTimer.recordNanoseconds(Int64(clamping: DispatchTime.now().uptimeNanoseconds &- started)) }
        return try connection.execute(sql, arguments)
    }

    func forEachRow(_ sql: String, _ arguments: [SQLValue], _ body: (any SQLRow) throws -> Void) throws {
        database.statements.add(1, ordering: .relaxed)
        countRead()
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
