import Foundation

/// The storage seam. Each feature's store speaks SQL through `SQLConnection`, in the dialect the
/// two engines share (SQLite 3.35+ and PostgreSQL 15: `RETURNING`, `ON CONFLICT`, `?` or `?N`
/// placeholders); the connection turns it into what its engine wants. So each query is written
/// once, next to the records it reads, and no controller knows which engine runs.
public enum SQLDialect: String, Sendable {
    case sqlite, postgres

    /// SQL for the whole number of `unit`s in `amount`, a non-negative expression, cut down on
    /// both engines: PostgreSQL's CAST to an integer rounds (a report at 14:40 would count at
    /// 15:00), SQLite's truncates.
    func wholeUnits(_ amount: String, _ unit: Int) -> String {
        switch self {
        case .postgres: "CAST(floor((\(amount)) / \(unit)) AS BIGINT)"
        case .sqlite: "CAST((\(amount)) / \(unit) AS INTEGER)"
        }
    }
}

/// A value bound to a placeholder.
/// `?, ?, ?`: the placeholders of an `IN (…)` list (or a row) of `count` bound values.
public func sqlMarks(_ count: Int) -> String {
    Array(repeating: "?", count: count).joined(separator: ", ")
}

public enum SQLValue: Sendable, Equatable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    /// Bytes as they are (a photo): SQLite's BLOB, PostgreSQL's bytea.
    case blob([UInt8])
}

/// Swift values that bind to placeholders.
public protocol SQLArgument {
    var sqlValue: SQLValue { get }
}

extension Int64: SQLArgument { public var sqlValue: SQLValue { .integer(self) } }
extension Int: SQLArgument { public var sqlValue: SQLValue { .integer(Int64(self)) } }
extension Double: SQLArgument { public var sqlValue: SQLValue { .real(self) } }
extension String: SQLArgument { public var sqlValue: SQLValue { .text(self) } }
extension [UInt8]: SQLArgument { public var sqlValue: SQLValue { .blob(self) } }
/// Booleans are stored as 0 and 1 (SQLite has no boolean; PostgreSQL reads "1"/"0" as one where it wants one).
extension Bool: SQLArgument { public var sqlValue: SQLValue { .integer(self ? 1 : 0) } }
/// Times are seconds since 1970 in both engines.
extension Date: SQLArgument { public var sqlValue: SQLValue { .real(timeIntervalSince1970) } }
extension SQLValue: SQLArgument { public var sqlValue: SQLValue { self } }
extension Optional: SQLArgument where Wrapped: SQLArgument {
    public var sqlValue: SQLValue { self?.sqlValue ?? .null }
}

/// One row of a result, read by column position (by name, every look-up hashes the name).
/// A NULL read as a non-optional gives 0 or "" rather than trapping; read optionals where NULL can occur.
public protocol SQLRow {
    func isNull(_ column: Int) -> Bool
    func int64(_ column: Int) -> Int64
    func double(_ column: Int) -> Double
    func string(_ column: Int) -> String
    /// Text or NULL with one look at the column (a row of the board has eight such columns).
    func optionalString(_ column: Int) -> String?
    /// A BLOB (bytea) column's bytes; empty for NULL.
    func bytes(_ column: Int) -> [UInt8]
}

extension SQLRow {
    public func optionalString(_ column: Int) -> String? { isNull(column) ? nil : string(column) }
    public func int(_ column: Int) -> Int { Int(int64(column)) }
    public func date(_ column: Int) -> Date { Date(timeIntervalSince1970: double(column)) }
    public func optionalInt64(_ column: Int) -> Int64? { isNull(column) ? nil : int64(column) }
    public func optionalInt(_ column: Int) -> Int? { isNull(column) ? nil : int(column) }
    public func optionalDouble(_ column: Int) -> Double? { isNull(column) ? nil : double(column) }
    public func optionalDate(_ column: Int) -> Date? { isNull(column) ? nil : date(column) }
}

/// What a write transaction excludes while it runs.
public enum WriteLocks: Sendable {
    /// Every other write: for writes whose checks nobody has said the subjects of (moderation,
    /// accounts, imports), and the rare write that changes many subjects at once (a ban).
    case cluster
    /// Only writes on the same subjects: the write's checks each lock what they count
    /// (`SQLConnection.lock`) before they read it. The hot writes (posts, replies, agreements,
    /// reports, sign-in limits) are of this kind, so they do not queue behind one another
    /// across nodes. A `.cluster` write still waits for them all, and they for it.
    case subjects
    /// As `subjects`, for a write whose first lock is known before it starts (a post: its
    /// author): taken with BEGIN, in its round trip.
    case subject(LockSubject)

    /// The subject a write holds from its start.
    var first: LockSubject? {
        if case .subject(let subject) = self { subject } else { nil }
    }
}

/// What a check counts, locked for the rest of its transaction so that two writes cannot both
/// pass the check on the same counts. Taken in the order of the cases (a post before a bucket
/// before a member before the photo space), and before the rows they guard, so that two writes
/// never wait for each other in a circle; PostgreSQL breaks any circle left with an error and
/// the write is tried again.
public enum LockSubject: Sendable, Hashable {
    /// A post and its conversation: its replies, agreements, reports and notices of them.
    case post(Int64)
    /// A rate limit's bucket (`RateLimit`).
    case bucket(String)
    /// A member: what they posted and reported today, their standing, their ban.
    case member(Int64)
    /// The site's photo space (`PhotoLimits.siteMegabytes`).
    case photoSpace

    /// The two keys of PostgreSQL's `pg_advisory_xact_lock(int4, int4)` (a space apart from the
    /// one-key locks the engine itself takes): the kind, and the id, or a bucket's digest.
    /// Two subjects that meet on one key wait for each other needlessly, and nothing worse.
    var keys: (Int32, Int32) {
        switch self {
        case .bucket(let name):
            var hash: UInt32 = 2_166_136_261 // FNV-1a: stable across processes, unlike `Hasher`
            for byte in name.utf8 { hash = (hash ^ UInt32(byte)) &* 16_777_619 }
            return (2, Int32(bitPattern: hash))
        case .post(let id): return (1, Int32(truncatingIfNeeded: id))
        case .member(let id): return (3, Int32(truncatingIfNeeded: id))
        case .photoSpace: return (4, 0)
        }
    }
}

/// A connection inside a read or a write transaction.
public protocol SQLConnection: AnyObject {
    var dialect: SQLDialect { get }
    /// Runs a statement; returns the number of rows it changed.
    @discardableResult
    func execute(_ sql: String, _ arguments: [SQLValue]) throws -> Int
    /// Runs a query and hands each row to `body` (the row is valid only during the call).
    func forEachRow(_ sql: String, _ arguments: [SQLValue], _ body: (any SQLRow) throws -> Void) throws
    /// Locks `subject` until the transaction ends (PostgreSQL; SQLite's single writer holds
    /// everything already). Taken before the check reads what it counts.
    func lock(_ subject: LockSubject) throws
}

extension SQLConnection {
    public func lock(_ subject: LockSubject) throws {
        guard dialect == .postgres else { return }
        let (kind, id) = subject.keys
        try execute("SELECT pg_advisory_xact_lock(?, ?)", [.integer(Int64(kind)), .integer(Int64(id))])
    }
}

// The helpers map arguments with closures, not `\.sqlValue`: a key path through an existential is
// built at run time on every call.
extension SQLConnection {
    @discardableResult
    public func execute(_ sql: String, _ arguments: any SQLArgument...) throws -> Int {
        try execute(sql, arguments.map { $0.sqlValue })
    }

    /// Every row, made into a value by `make`.
    public func all<T>(_ sql: String, _ arguments: [any SQLArgument] = [], _ make: (any SQLRow) throws -> T) throws -> [T] {
        var values: [T] = []
        try forEachRow(sql, arguments.map { $0.sqlValue }) { values.append(try make($0)) }
        return values
    }

    /// The first row, made into a value by `make`.
    public func one<T>(_ sql: String, _ arguments: [any SQLArgument] = [], _ make: (any SQLRow) throws -> T) throws -> T? {
        var value: T?
        try forEachRow(sql, arguments.map { $0.sqlValue }) { row in
            if value == nil { value = try make(row) }
        }
        return value
    }

    /// Whether the query returns a row.
    public func exists(_ sql: String, _ arguments: any SQLArgument...) throws -> Bool {
        try one(sql, arguments) { _ in true } ?? false
    }

    /// The first column of the first row as an integer (0 when there is none or it is NULL).
    public func integer(_ sql: String, _ arguments: any SQLArgument...) throws -> Int {
        try one(sql, arguments) { $0.int(0) } ?? 0
    }
}

/// Errors from either engine, in the terms the application reacts to.
public struct SQLError: Error, CustomStringConvertible {
    /// What the site acts on, the same from either engine (nothing of GRDB's or libpq's own
    /// errors leaves the seam). `busy`: a lock was not granted in time (the write lock another
    /// writer holds, SQLite's busy timeout, a deadlock or serialisation failure); `timeout`: a
    /// statement ran out of its time; `connection`: the database cannot be reached or went away;
    /// `unavailable`: it answered but cannot do this now (read-only, out of connections, an I/O
    /// error); `full`: its disk is full. Those five are the site's temporary trouble, answered
    /// 503 (507 when full) with `Retry-After`.
    /// `conflict`: PostgreSQL ended the transaction to break a deadlock (or a serialisation
    /// failure); the engine tries the write again before anyone sees it.
    public enum Kind: Sendable { case uniqueViolation, constraintViolation, busy, conflict, timeout, connection, unavailable, full, other }
    public let kind: Kind
    public let message: String
    public var description: String { message }

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    /// Trouble that passes (the request may succeed if tried again later), not a fault of ours.
    public var isTemporary: Bool {
        switch kind {
        case .busy, .conflict, .timeout, .connection, .unavailable, .full: true
        case .uniqueViolation, .constraintViolation, .other: false
        }
    }
}

/// A database: SQLite through GRDB (the embedded default) or PostgreSQL through libpq.
public protocol SQLDatabase: Sendable {
    var dialect: SQLDialect { get }
    /// A consistent read of several statements.
    func read<T>(_ body: (any SQLConnection) throws -> T) throws -> T
    /// One statement's read, outside a transaction (cheaper; the statement is its own snapshot).
    func readStatement<T>(_ body: (any SQLConnection) throws -> T) throws -> T
    /// A write transaction. `.cluster`: no other write runs beside it. `.subjects`: other such
    /// writes run beside it, and each check locks its subject (`SQLConnection.lock`) before it
    /// reads. SQLite has one writer whatever is asked.
    func write<T>(_ locks: WriteLocks, _ body: (any SQLConnection) throws -> T) throws -> T
    /// Whether the database answers a trivial query.
    func isHealthy() -> Bool
    func close() throws
}

/// `?` and `?N` placeholders as PostgreSQL's `$N` (quoted text and identifiers are left alone).
enum Placeholders {
    static func postgres(_ sql: String) -> String {
        var out = ""
        out.reserveCapacity(sql.utf8.count + 16)
        var next = 1
        var quote: Character?
        var iterator = sql.makeIterator()
        var pending: Character? = nil
        while let c = pending ?? iterator.next() {
            pending = nil
            if let q = quote {
                out.append(c)
                if c == q { quote = nil }
                continue
            }
            if c == "'" || c == "\"" {
                quote = c
                out.append(c)
            } else if c == "?" {
                var digits = ""
                while let d = iterator.next() {
                    if d.isASCII && d.isNumber { digits.append(d) } else { pending = d; break }
                }
                if digits.isEmpty {
                    out.append("$\(next)")
                    next += 1
                } else {
                    out.append("$" + digits)
                }
            } else {
                out.append(c)
            }
        }
        return out
    }
}
