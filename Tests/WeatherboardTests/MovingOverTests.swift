import Foundation
import HTTPTestSupport
import Testing
@testable import Weatherboard

/// Moving a site between engines, and backups taken while it serves.
@Suite(.serialized) struct MovingOverTests {
    @Test func copyToMovesASQLiteSiteIntoPostgreSQLAndARetryChangesNothing() throws {
        guard TestEngine.enabled.contains(.postgres) else { return }
        let site = try TestEngine.$current.withValue(.sqlite) { try AppHarness() }
        let scene = try site.reportedPost("Fog at dawn")
        try scene.admin.get("/admin/users/reporter")
        try scene.admin.post("/admin/users/reporter/ban", [("duration", "1d"), ("reason", "testing the copy")])
        let postgres = try TestPostgres.require()
        let target = try postgres.emptyDatabase()
        defer { postgres.drop(target) }

        var copy = try WeatherboardCommand.parseAsRoot(["copy-to"] + site.databaseArguments + ["--database-url", target])
        try copy.run()
        let node = try AppHarness(sharedDatabase: target)
        for table in DatabaseCopy.tables {
            #expect(try node.count("SELECT count(*) FROM \(table)") == site.count("SELECT count(*) FROM \(table)"), "\(table)")
        }
        // Again: the rows are there, nothing changes.
        var again = try WeatherboardCommand.parseAsRoot(["copy-to"] + site.databaseArguments + ["--database-url", target])
        try again.run()
        #expect(try node.count("SELECT count(*) FROM posts") == 1)

        // The moved site works: the same password signs in, the post is there, new ids follow the copied ones.
        let author = node.browser()
        try author.get("/login")
        #expect(try author.post("/login", [("username", "author"), ("password", "correct horse battery")]).0.status == 303)
        node.clock.advance(60)
        #expect(try author.postOnBoard("seoul", "Clear by noon").0.status == 303)
        #expect(try node.count("SELECT count(*) FROM posts WHERE id > ?", [scene.postID]) == 1)
        #expect(try node.count("SELECT count(*) FROM moderation_log WHERE action = 'ban'") == 1)
    }

    @Test func copyToRefusesATargetHoldingAnotherSite() throws {
        guard TestEngine.enabled.contains(.postgres) else { return }
        let site = try TestEngine.$current.withValue(.sqlite) { try AppHarness() }
        try site.browser().signUp("someone")
        let other = try TestEngine.$current.withValue(.postgres) { try AppHarness() }
        try other.browser().signUp("another")
        var copy = try WeatherboardCommand.parseAsRoot(["copy-to"] + site.databaseArguments + other.databaseArguments)
        #expect(throws: ValidationErrorExit.self) { try copy.run() }
        #expect(try other.count("SELECT count(*) FROM users") == 1)
    }
}

/// `weatherboard backup PATH` on either engine, while the site serves.
@Suite(.serialized, .onEveryEngine) struct BackupTests {
    @Test func aBackupTakenWhileServingHoldsTheSiteAndOpensAsASite() throws {
        let site = try AppHarness()
        let writer = site.browser()
        try writer.signUp("writer")
        try writer.postOnBoard("seoul", "Hail, briefly")
        let path = site.folder + "/backup.sqlite"
        var backup = try WeatherboardCommand.parseAsRoot(["backup", path] + site.databaseArguments)
        try backup.run()
        // A second backup never overwrites the first.
        var overwrite = try WeatherboardCommand.parseAsRoot(["backup", path] + site.databaseArguments)
        #expect(throws: ValidationErrorExit.self) { try overwrite.run() }

        let (database, applied) = try AppDatabase.open(.sqlite(path: path), migrationsDirectory: AppConfiguration.repositoryFolder("Migrations"))
        #expect(applied.isEmpty, "the backup is a migrated site")
        #expect(try database.read { try $0.integer("SELECT count(*) FROM cities") } == site.count("SELECT count(*) FROM cities"))
        try database.close()
        // Served, the backup is the site as it was.
        let restored = try TestEngine.$current.withValue(.sqlite) { try AppHarness { $0.databasePath = path } }
        #expect(try restored.browser().get("/city/seoul").1.text("//article[1]//p[@class='post-body']") == "Hail, briefly")
    }

    /// Issue 20 #12: a backup holds password hashes and session digests: mode 0600, and a planted
    /// symbolic link at its path is refused, not followed. The live SQLite file is private too.
    @Test func backupsAndTheLiveDatabaseArePrivateAndLinksAreNotFollowed() throws {
        let site = try AppHarness()
        func mode(_ path: String) throws -> Int {
            (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)?.intValue ?? -1
        }
        let path = site.folder + "/private.sqlite"
        var backup = try WeatherboardCommand.parseAsRoot(["backup", path] + site.databaseArguments)
        try backup.run()
        #expect(try mode(path) == 0o600)
        if site.engine == .sqlite { #expect(try mode(site.application.configuration.databasePath) & 0o077 == 0) }

        let victim = site.folder + "/victim.txt"
        try "keep me".write(toFile: victim, atomically: true, encoding: .utf8)
        let link = site.folder + "/planted.sqlite"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: victim)
        var planted = try WeatherboardCommand.parseAsRoot(["backup", link] + site.databaseArguments)
        #expect(throws: ValidationErrorExit.self) { try planted.run() }
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "keep me")
        // A dangling link (to where a file would be created) is not followed either.
        let target = site.folder + "/made-through-a-link.sqlite"
        let dangling = site.folder + "/dangling.sqlite"
        try FileManager.default.createSymbolicLink(atPath: dangling, withDestinationPath: target)
        var throughLink = try WeatherboardCommand.parseAsRoot(["backup", dangling] + site.databaseArguments)
        #expect(throws: ValidationErrorExit.self) { try throughLink.run() }
        #expect(!FileManager.default.fileExists(atPath: target))
    }
}
