import Foundation
import GRDB
import Testing
@testable import Weatherboard

@Suite struct MigrationTests {
    let folder: String

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("migrations-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder + "/m", withIntermediateDirectories: true)
        try "CREATE TABLE a (id INTEGER PRIMARY KEY);".write(toFile: folder + "/m/0001_a.sql", atomically: true, encoding: .utf8)
        try "CREATE TABLE b (id INTEGER PRIMARY KEY); INSERT INTO b VALUES (1);".write(toFile: folder + "/m/0002_b.sql", atomically: true, encoding: .utf8)
    }

    func tables(_ database: AppDatabase) throws -> [String] {
        try database.pool.read { db in
            try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'grdb%' ORDER BY name")
        }
    }

    @Test func freshDatabaseGetsEveryMigrationAndARerunIsANoOp() throws {
        let (database, applied) = try AppDatabase.open(path: folder + "/db.sqlite", migrationsDirectory: folder + "/m")
        #expect(applied == ["0001_a", "0002_b"])
        #expect(try tables(database) == ["a", "b"])
        let mode = try database.pool.read { try String.fetchOne($0, sql: "PRAGMA journal_mode") }
        #expect(mode == "wal")
        let foreignKeys = try database.pool.read { try Int.fetchOne($0, sql: "PRAGMA foreign_keys") }
        #expect(foreignKeys == 1)
        let (_, again) = try AppDatabase.open(path: folder + "/db.sqlite", migrationsDirectory: folder + "/m")
        #expect(again.isEmpty)
    }

    @Test func aBrokenMigrationIsRefusedAndLeavesNothingBehind() throws {
        try "CREATE TABLE c (id INTEGER PRIMARY KEY); INSERT INTO nowhere VALUES (1);"
            .write(toFile: folder + "/m/0003_broken.sql", atomically: true, encoding: .utf8)
        do {
            _ = try AppDatabase.open(path: folder + "/db.sqlite", migrationsDirectory: folder + "/m")
            Issue.record("a broken migration was accepted")
        } catch let error as MigrationError {
            #expect(error.description.contains("0003_broken.sql"))
            #expect(error.description.contains("no such table: nowhere"))
        }
        let pool = try DatabasePool(path: folder + "/db.sqlite")
        let names = try pool.read { try String.fetchAll($0, sql: "SELECT name FROM sqlite_master WHERE type = 'table'") }
        #expect(!names.contains("c"), "the broken migration's first statement was rolled back")
    }

    @Test func aDatabaseFromANewerVersionIsRefused() throws {
        _ = try AppDatabase.open(path: folder + "/db.sqlite", migrationsDirectory: folder + "/m")
        try FileManager.default.removeItem(atPath: folder + "/m/0002_b.sql")
        #expect(throws: MigrationError.self) {
            try AppDatabase.open(path: folder + "/db.sqlite", migrationsDirectory: folder + "/m")
        }
    }

    @Test func theShippedMigrationsApply() throws {
        let (_, applied) = try AppDatabase.open(path: folder + "/shipped.sqlite",
                                                migrationsDirectory: AppConfiguration.repositoryFolder("Migrations"))
        #expect(!applied.isEmpty)
    }
}
