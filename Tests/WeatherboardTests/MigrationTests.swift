import Foundation
import Testing
@testable import Weatherboard

@Suite(.onEveryEngine) struct MigrationTests {
    let folder: String
    let engine = TestEngine.current
    /// An empty database of the test's engine.
    let location: AppDatabase.Location

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("migrations-\(UUID().uuidString)").path
        let migrations = folder + "/m/" + engine.rawValue
        try FileManager.default.createDirectory(atPath: migrations, withIntermediateDirectories: true)
        try "CREATE TABLE a (id INTEGER PRIMARY KEY);".write(toFile: migrations + "/0001_a.sql", atomically: true, encoding: .utf8)
        try "CREATE TABLE b (id INTEGER PRIMARY KEY); INSERT INTO b VALUES (1);".write(toFile: migrations + "/0002_b.sql", atomically: true, encoding: .utf8)
        switch engine {
        case .sqlite: location = .sqlite(path: folder + "/db.sqlite")
        case .postgres: location = .postgres(url: try TestPostgres.require().emptyDatabase())
        }
    }

    func tables(_ database: AppDatabase) throws -> [String] {
        let sql = switch engine {
        case .sqlite: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'grdb%' ORDER BY name"
        case .postgres: "SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tablename <> 'schema_migrations' ORDER BY tablename"
        }
        return try database.read { try $0.all(sql) { $0.string(0) } }
    }

    @Test func freshDatabaseGetsEveryMigrationAndARerunIsANoOp() throws {
        let (database, applied) = try AppDatabase.open(location, migrationsDirectory: folder + "/m")
        #expect(applied == ["0001_a", "0002_b"])
        #expect(try tables(database) == ["a", "b"])
        if engine == .sqlite {
            #expect(try database.read { try $0.one("PRAGMA journal_mode") { $0.string(0) } } == "wal")
            #expect(try database.read { try $0.integer("PRAGMA foreign_keys") } == 1)
        }
        let (_, again) = try AppDatabase.open(location, migrationsDirectory: folder + "/m")
        #expect(again.isEmpty)
    }

    @Test func aBrokenMigrationIsRefusedAndLeavesNothingBehind() throws {
        try "CREATE TABLE c (id INTEGER PRIMARY KEY); INSERT INTO nowhere VALUES (1);"
            .write(toFile: folder + "/m/\(engine.rawValue)/0003_broken.sql", atomically: true, encoding: .utf8)
        do {
            _ = try AppDatabase.open(location, migrationsDirectory: folder + "/m")
            Issue.record("a broken migration was accepted")
        } catch let error as MigrationError {
            #expect(error.description.contains("0003_broken.sql"))
            #expect(error.description.contains("nowhere"))
        }
        try FileManager.default.removeItem(atPath: folder + "/m/\(engine.rawValue)/0003_broken.sql")
        let (database, _) = try AppDatabase.open(location, migrationsDirectory: folder + "/m")
        #expect(try !tables(database).contains("c"), "the broken migration's first statement was rolled back")
    }

    @Test func aDatabaseFromANewerVersionIsRefused() throws {
        _ = try AppDatabase.open(location, migrationsDirectory: folder + "/m")
        try FileManager.default.removeItem(atPath: folder + "/m/\(engine.rawValue)/0002_b.sql")
        #expect(throws: MigrationError.self) {
            try AppDatabase.open(location, migrationsDirectory: folder + "/m")
        }
    }

    @Test func theShippedMigrationsApply() throws {
        let (database, applied) = try AppDatabase.open(location, migrationsDirectory: AppConfiguration.repositoryFolder("Migrations"))
        #expect(applied == (try Migrations.files(in: AppConfiguration.repositoryFolder("Migrations/sqlite")).map(Migrations.identifier)))
        // The append-only log holds in either engine.
        try database.write { db in
            try db.execute("INSERT INTO moderation_log (admin_username, action, reason, created_at) VALUES ('root', 'ban', 'spam', 0)")
        }
        #expect(throws: (any Error).self) { try database.write { try $0.execute("UPDATE moderation_log SET reason = 'nothing'") } }
        #expect(throws: (any Error).self) { try database.write { try $0.execute("DELETE FROM moderation_log") } }
        #expect(try database.read { try $0.integer("SELECT count(*) FROM moderation_log WHERE reason = 'spam'") } == 1)
    }

    /// Both engines' migrations are numbered alike: the same files, the same meaning.
    @Test func bothEnginesHaveTheSameMigrations() throws {
        let sqlite = try Migrations.files(in: AppConfiguration.repositoryFolder("Migrations/sqlite"))
        let postgres = try Migrations.files(in: AppConfiguration.repositoryFolder("Migrations/postgres"))
        #expect(sqlite == postgres)
    }
}
