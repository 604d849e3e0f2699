import Crypto
import Foundation

/// Copies a whole site from one database to another: SQLite to PostgreSQL when a site moves to
/// several nodes (`copy-to`), either engine to a new SQLite file for a backup (`backup`). What is
/// copied is every table the migrations made, read from the source's schema, in an order its
/// foreign keys allow; nothing is listed by hand. The source is read in one snapshot and the
/// target written in one transaction, and before that transaction commits every table's row
/// count and checksum in the target must equal the source's: a copy that fails leaves the target
/// as it was, and running it again is safe (an empty target is filled, a target that already
/// holds the same rows is left alone).
enum DatabaseCopy {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// What a copy did: each table's rows and checksum, and whether the target already held them.
    struct Outcome {
        var tables: [TableSummary]
        var alreadyCopied: Bool
    }

    /// A table's contents in brief: its rows, and a checksum of them that does not depend on the
    /// order they are read in (engines order text keys by different collations).
    struct TableSummary: Equatable, CustomStringConvertible {
        let table: String
        let rows: Int
        let checksum: String
        var description: String { "\(table): \(rows) rows, checksum \(checksum)" }
    }

    static func copy(from source: AppDatabase, to target: AppDatabase) throws -> Outcome {
        try source.read { from in
            let tables = try Schema.tables(from)
            let expected = try summaries(of: tables, in: from)
            return try target.write(.cluster) { to in  // a whole site copied
                try Schema.requireSameTables(tables, in: to)
                let present = try tables.map { try to.integer("SELECT count(*) FROM \($0.name)") }
                guard present.allSatisfy({ $0 == 0 }) else {
                    let found = try summaries(of: tables, in: to)
                    if found == expected { return Outcome(tables: expected, alreadyCopied: true) }
                    throw Failure(description: "the target database already holds other data (\(differences(expected, found))); "
                        + "copy into an empty database")
                }
                for table in tables { try copyRows(of: table, from, to) }
                if to.dialect == .postgres { try Schema.continueGeneratedIDs(to) }
                let written = try summaries(of: tables, in: to)
                guard written == expected else {
                    throw Failure(description: "the copy differs from the source (\(differences(expected, written))); nothing was kept")
                }
                return Outcome(tables: expected, alreadyCopied: false)
            }
        }
    }

    /// Every table's rows and checksum, as `db` sees them.
    static func summaries(of tables: [Schema.Table], in db: any SQLConnection) throws -> [TableSummary] {
        try tables.map { table in
            var checksum = RowChecksum()
            var rows = 0
            try db.forEachRow("SELECT \(table.columnList) FROM \(table.name)", []) { row in
                checksum.add(table.values(of: row))
                rows += 1
            }
            return TableSummary(table: table.name, rows: rows, checksum: checksum.hex)
        }
    }

    private static func differences(_ expected: [TableSummary], _ found: [TableSummary]) -> String {
        zip(expected, found).filter { $0 != $1 }.map { source, target in
            source.rows == target.rows
                ? "\(source.table): \(source.rows) rows each, but their contents differ"
                : "\(source.table): \(source.rows) rows in the source, \(target.rows) in the target"
        }.joined(separator: "; ")
    }

    /// Inserts the rows in batches; a table that refers to itself (a reply to its post) is read
    /// parents first, whatever order the rows sit in on disk.
    private static func copyRows(of table: Schema.Table, _ from: any SQLConnection, _ to: any SQLConnection) throws {
        let rowMarks = "(" + sqlMarks(table.columns.count) + ")"
        let batchSize = max(1, 2_000 / table.columns.count)
        var batch: [SQLValue] = []
        var rowsInBatch = 0
        func flush() throws {
            guard rowsInBatch > 0 else { return }
            let marks = Array(repeating: rowMarks, count: rowsInBatch).joined(separator: ", ")
            try to.execute("INSERT INTO \(table.name) (\(table.columnList)) VALUES \(marks)", batch)
            batch.removeAll(keepingCapacity: true)
            rowsInBatch = 0
        }
        try from.forEachRow(table.parentsFirstQuery, []) { row in
            batch.append(contentsOf: table.values(of: row))
            rowsInBatch += 1
            if rowsInBatch == batchSize { try flush() } // source and target are different connections
        }
        try flush()
    }
}

/// An order-independent checksum of rows: the sum of each row's SHA-256 (its first 128 bits),
/// over an encoding that tells the kinds of value apart.
struct RowChecksum {
    private var high: UInt64 = 0
    private var low: UInt64 = 0
    private var encoded: [UInt8] = []

    mutating func add(_ values: [SQLValue]) {
        encoded.removeAll(keepingCapacity: true)
        for value in values {
            switch value {
            case .null: encoded.append(0)
            case .integer(let number):
                encoded.append(1)
                withUnsafeBytes(of: number.littleEndian) { encoded.append(contentsOf: $0) }
            case .real(let number):
                encoded.append(2)
                withUnsafeBytes(of: number.bitPattern.littleEndian) { encoded.append(contentsOf: $0) }
            case .text(let text):
                encoded.append(3)
                let bytes = Array(text.utf8)
                withUnsafeBytes(of: UInt64(bytes.count).littleEndian) { encoded.append(contentsOf: $0) }
                encoded.append(contentsOf: bytes)
            case .blob(let bytes):
                encoded.append(4)
                withUnsafeBytes(of: UInt64(bytes.count).littleEndian) { encoded.append(contentsOf: $0) }
                encoded.append(contentsOf: bytes)
            }
        }
        let digest = Array(SHA256.hash(data: encoded))
        high &+= digest[0..<8].reduce(0) { $0 << 8 | UInt64($1) }
        low &+= digest[8..<16].reduce(0) { $0 << 8 | UInt64($1) }
    }

    var hex: String { String(format: "%016llx%016llx", high, low) }
}
