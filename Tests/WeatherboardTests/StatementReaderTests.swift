import Foundation
import Synchronization
import Testing
@testable import Weatherboard

/// SQLite's one-statement reads go through connections of their own (`StatementReaders`), not
/// GRDB's pool: they see every commit, refuse to write, let more reads run than they have
/// connections (the rest go to the pool), and close with the database.
@Suite struct StatementReaderTests {
    static func open() throws -> (SQLiteDatabase, String) {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("readers-\(UUID().uuidString).sqlite").path
        try FileManager.default.copyItem(atPath: AppHarness.templateDatabase, toPath: path)
        return (try SQLiteDatabase.open(path: path, migrationsDirectory: AppConfiguration.repositoryFolder("Migrations") + "/sqlite").0, path)
    }

    static func cities(_ database: SQLiteDatabase) throws -> Int {
        try database.readStatement { try $0.one("SELECT count(*) FROM cities WHERE slug LIKE 'reader-%'", []) { $0.int(0) } ?? -1 }
    }

    @Test func aReadSeesEachCommitAndCannotWrite() throws {
        let (database, path) = try Self.open()
        defer { try? database.close(); try? FileManager.default.removeItem(atPath: path) }
        #expect(try Self.cities(database) == 0)
        for n in 1...3 {
            _ = try database.write(.cluster) { db in
                try db.execute("""
                    INSERT INTO cities (slug, name_en, country, latitude, longitude, timezone) VALUES (?, 'Reader', 'KR', 37, 127, 'Asia/Seoul')
                    """, [.text("reader-\(n)")])
            }
            #expect(try Self.cities(database) == n, "the reader's next statement sees the commit")
        }
        #expect(throws: (any Error).self) {
            try database.readStatement { try $0.execute("DELETE FROM cities WHERE slug LIKE 'reader-%'", []) }
        }
        #expect(try Self.cities(database) == 3, "nothing written through a reader")
    }

    /// More reads at once than there are readers: each is answered (the rest by GRDB's pool),
    /// and once the database is closed a read fails cleanly.
    @Test func moreReadsThanReadersAreAllAnsweredAndNoneAfterClosing() throws {
        let (database, path) = try Self.open()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let reads = 12
        let inside = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let answered = Atomic(0)
        let group = DispatchGroup()
        for _ in 0..<reads {
            DispatchQueue.global().async(group: group) {
                let count = try? database.readStatement { db -> Int in
                    inside.signal()
                    release.wait() // all held at once
                    return try db.one("SELECT count(*) FROM cities", []) { $0.int(0) } ?? 0
                }
                if (count ?? 0) > 0 { answered.add(1, ordering: .relaxed) }
            }
        }
        // GRDB's pool lets 4 in at once; the readers another 4; the rest wait in the pool's queue.
        for _ in 0..<8 { #expect(inside.wait(timeout: .now() + 10) == .success) }
        for _ in 0..<reads { release.signal() }
        #expect(group.wait(timeout: .now() + 10) == .success)
        #expect(answered.load(ordering: .relaxed) == reads)
        try database.close()
        #expect(throws: (any Error).self) { try Self.cities(database) }
    }
}
