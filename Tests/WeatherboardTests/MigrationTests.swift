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
        try database.write(.cluster) { db in
            try db.execute("INSERT INTO moderation_log (admin_username, action, reason, created_at) VALUES ('root', 'ban', 'spam', 0)")
        }
        #expect(throws: (any Error).self) { try database.write(.cluster) { try $0.execute("UPDATE moderation_log SET reason = 'nothing'") } }
        #expect(throws: (any Error).self) { try database.write(.cluster) { try $0.execute("DELETE FROM moderation_log") } }
        #expect(try database.read { try $0.integer("SELECT count(*) FROM moderation_log WHERE reason = 'spam'") } == 1)
    }

    /// 0018 rebuilds `notifications` on SQLite (a notice may be about a rain alert, not a post):
    /// the notices and the pushes waiting for them are all still there, and still tied.
    @Test func rainAlertsMigrationKeepsNoticesAndTheirPushes() throws {
        let shipped = AppConfiguration.repositoryFolder("Migrations")
        let before = folder + "/upto17/" + engine.rawValue
        try FileManager.default.createDirectory(atPath: before, withIntermediateDirectories: true)
        for file in try Migrations.files(in: shipped + "/" + engine.rawValue) where file < "0018" {
            try FileManager.default.copyItem(atPath: shipped + "/\(engine.rawValue)/" + file, toPath: before + "/" + file)
        }
        let (old, _) = try AppDatabase.open(location, migrationsDirectory: folder + "/upto17")
        try old.write(.cluster) { db in
            try db.execute("INSERT INTO cities (id, slug, name_en, country, latitude, longitude, timezone) VALUES (1, 'x', 'X', 'KR', 37, 127, 'Asia/Seoul')")
            try db.execute("INSERT INTO users (id, username, username_key, display_name, password_hash, created_at) VALUES (1, 'ann', 'ann', 'Ann', 'h', 0)")
            try db.execute("INSERT INTO posts (id, city_id, user_id, body, created_at) VALUES (1, 1, 1, 'Fog', 0)")
            try db.execute("INSERT INTO notifications (id, user_id, kind, post_id, created_at) VALUES (7, 1, 'reply', 1, 0)")
            try db.execute("INSERT INTO push_subscriptions (id, user_id, endpoint, p256dh, auth, browser, created_at) VALUES (1, 1, 'https://e', 'k', 'a', 'b', 0)")
            try db.execute("INSERT INTO push_queue (subscription_id, notification_id, created_at, expires_at, next_attempt_at) VALUES (1, 7, 0, 1, 0)")
        }
        try old.close()
        let (database, applied) = try AppDatabase.open(location, migrationsDirectory: shipped)
        #expect(applied.contains("0018_rain_alerts"))
        #expect(try database.read { try $0.integer("SELECT count(*) FROM notifications WHERE id = 7 AND post_id = 1 AND alert_id IS NULL") } == 1)
        #expect(try database.read { try $0.integer("SELECT count(*) FROM push_queue WHERE notification_id = 7") } == 1)
        try database.write(.cluster) { try $0.execute("DELETE FROM posts WHERE id = 1") }
        #expect(try database.read { try $0.integer("SELECT count(*) FROM push_queue") } == 0, "the cascade still runs from posts to pushes")
    }

    /// Migration 0027 rebuilds the moderation log on SQLite (a CHECK changes): every entry is
    /// kept, it stays append-only, and it takes the levels a moderator sets.
    @Test func standingMigrationKeepsTheLogAppendOnly() throws {
        let shipped = AppConfiguration.repositoryFolder("Migrations")
        let before = folder + "/upto26/" + engine.rawValue
        try FileManager.default.createDirectory(atPath: before, withIntermediateDirectories: true)
        for file in try Migrations.files(in: shipped + "/" + engine.rawValue) where file < "0027" {
            try FileManager.default.copyItem(atPath: shipped + "/\(engine.rawValue)/" + file, toPath: before + "/" + file)
        }
        let (old, _) = try AppDatabase.open(location, migrationsDirectory: folder + "/upto26")
        try old.write(.cluster) { db in
            try db.execute("INSERT INTO users (id, username, username_key, display_name, password_hash, created_at) VALUES (1, 'ann', 'ann', 'Ann', 'h', 0)")
            try db.execute("INSERT INTO moderation_log (id, admin_id, admin_username, action, user_id, username, reason, created_at) VALUES (5, 1, 'ann', 'ban', 1, 'ann', 'Spam', 0)")
        }
        try old.close()
        let (database, applied) = try AppDatabase.open(location, migrationsDirectory: shipped)
        #expect(applied.contains("0027_standing"))
        #expect(try database.read { try $0.integer("SELECT count(*) FROM moderation_log WHERE id = 5 AND action = 'ban' AND reason = 'Spam'") } == 1)
        #expect(try database.read { try $0.integer("SELECT level FROM users WHERE id = 1") } == 0)
        try database.write(.cluster) { try $0.execute("INSERT INTO moderation_log (admin_username, action, user_id, reason, created_at) VALUES ('ann', 'level_2', 1, 'x', 1)") }
        #expect(throws: (any Error).self) { try database.write(.cluster) { try $0.execute("UPDATE moderation_log SET reason = 'changed' WHERE id = 5") } }
        #expect(throws: (any Error).self) { try database.write(.cluster) { try $0.execute("DELETE FROM moderation_log WHERE id = 5") } }
        #expect(throws: (any Error).self) { try database.write(.cluster) { try $0.execute("INSERT INTO moderation_log (admin_username, action, reason, created_at) VALUES ('a', 'level_9', '', 1)") } }
    }

    /// Both engines' migrations are numbered alike: the same files, the same meaning.
    @Test func bothEnginesHaveTheSameMigrations() throws {
        let sqlite = try Migrations.files(in: AppConfiguration.repositoryFolder("Migrations/sqlite"))
        let postgres = try Migrations.files(in: AppConfiguration.repositoryFolder("Migrations/postgres"))
        #expect(sqlite == postgres)
    }
}
