import Foundation
import GRDB
import GRDBSQLite
import Synchronization

/// Connections for one-statement reads (`SQLDatabase.readStatement`: a page's session, its board),
/// handed out from a short stack under a lock. GRDB's pool hands out a reader through two
/// dispatch queues and a semaphore, which cost more than reading the session took; a statement
/// outside a transaction needs none of that. Each connection is query-only, waits for locks as
/// the pool's do (`SQLiteDatabase.keepsWaiting`), and keeps its prepared statements. When every
/// one is in use the read goes to GRDB's pool.
final class StatementReaders: Sendable {
    /// One connection and its statements, used by one thread at a time (it is off the stack meanwhile).
    final class Reader: SQLConnection, @unchecked Sendable {
        let handle: SQLiteConnection
        private var statements: [String: SQLiteStatement] = [:]
        var dialect: SQLDialect { .sqlite }

        fileprivate init(handle: SQLiteConnection) { self.handle = handle }

        @discardableResult
        func execute(_ sql: String, _ arguments: [SQLValue]) throws -> Int {
            try GRDBConnection.run(try statement(sql), on: handle, sql, arguments) { _ in }
            return Int(sqlite3_changes(handle))
        }

        func forEachRow(_ sql: String, _ arguments: [SQLValue], _ body: (any SQLRow) throws -> Void) throws {
            try GRDBConnection.run(try statement(sql), on: handle, sql, arguments) { try body(SQLiteRow(statement: $0)) }
        }

        private func statement(_ sql: String) throws -> SQLiteStatement {
            if let kept = statements[sql] { return kept }
            var prepared: SQLiteStatement?
            let code = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &prepared, nil)
            guard code == SQLITE_OK, let prepared else {
                sqlite3_finalize(prepared)
                throw GRDBConnection.failure(code, handle, sql)
            }
            statements[sql] = prepared
            return prepared
        }

        fileprivate func close() {
            for statement in statements.values { sqlite3_finalize(statement) }
            statements = [:]
            sqlite3_close_v2(handle)
        }
    }

    private struct State: ~Copyable {
        var idle: [Reader] = []
        var opened = 0
        var closed = false
    }
    private let state = Mutex(State())
    private let path: String
    private let most: Int

    /// Readers on the database at `path` (migrated already), at most `most` of them.
    init(path: String, most: Int) {
        self.path = path
        self.most = most
    }

    /// `body` on an idle reader, or on a new one; nil when all `most` are busy (or closed).
    func withReader<T>(_ body: (any SQLConnection) throws -> T) throws -> T? {
        guard let reader = try take() else { return nil }
        defer {
            let keep = state.withLock { state in
                if state.closed { state.opened -= 1; return false }
                state.idle.append(reader)
                return true
            }
            if !keep { reader.close() }
        }
        return try body(reader)
    }

    private func take() throws -> Reader? {
        let (idle, mayOpen) = state.withLock { state -> (Reader?, Bool) in
            if state.closed { return (nil, false) }
            if let reader = state.idle.popLast() { return (reader, false) }
            guard state.opened < most else { return (nil, false) }
            state.opened += 1
            return (nil, true)
        }
        if let idle { return idle }
        guard mayOpen else { return nil }
        do {
            return try open()
        } catch {
            state.withLock { $0.opened -= 1 }
            throw error
        }
    }

    private func open() throws -> Reader {
        var handle: SQLiteConnection?
        let code = sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nil)
        guard code == SQLITE_OK, let handle else {
            let error = GRDBConnection.failure(code, handle, "open")
            sqlite3_close_v2(handle)
            throw error
        }
        sqlite3_extended_result_codes(handle, 1)
        sqlite3_busy_handler(handle, { _, tries in SQLiteDatabase.keepsWaiting(Int(tries)) ? 1 : 0 }, nil)
        let reader = Reader(handle: handle)
        do {
            try reader.execute("PRAGMA query_only = ON", [])
            // As the pool's connections are: a read here is `read`'s too (one snapshot, same settings).
            try reader.execute("PRAGMA foreign_keys = ON", [])
        } catch {
            reader.close()
            throw error
        }
        return reader
    }

    /// Closes the idle readers, and each busy one as it comes back.
    func close() {
        let idle = state.withLock { state in
            state.closed = true
            defer { state.opened -= state.idle.count; state.idle = [] }
            return state.idle
        }
        for reader in idle { reader.close() }
    }
}
