import Foundation
import HTTPTestSupport
import Testing
@testable import Weatherboard

/// Moving a site between engines, and backups taken while it serves.
@Suite(.serialized) struct MovingOverTests {
    /// Issue 37 #1: every table moves (agreements and notifications were left behind), each with
    /// its rows and their checksum equal.
    @Test func copyToMovesASQLiteSiteIntoPostgreSQLAndARetryChangesNothing() throws {
        guard TestEngine.enabled.contains(.postgres) else { return }
        let site = try TestEngine.$current.withValue(.sqlite) { try AppHarness { $0.limits.secondsBetweenPosts = 0 } }
        let scene = try site.withRowsInEveryTable()
        let postgres = try TestPostgres.require()
        let target = try postgres.emptyDatabase()
        defer { postgres.drop(target) }

        var copy = try WeatherboardCommand.parseAsRoot(["copy-to"] + site.databaseArguments + ["--database-url", target])
        try copy.run()
        let node = try AppHarness(sharedDatabase: target)
        #expect(try node.summaries() == site.summaries())
        #expect(try node.count("SELECT count(*) FROM reactions") == 1)
        #expect(try node.count("SELECT count(*) FROM notifications") >= 2)
        // Again: the rows are there, nothing changes.
        var again = try WeatherboardCommand.parseAsRoot(["copy-to"] + site.databaseArguments + ["--database-url", target])
        try again.run()
        #expect(try node.summaries() == site.summaries())

        // The moved site works: the same password signs in, the post is there, new ids follow the copied ones.
        let author = node.browser()
        try author.get("/login")
        #expect(try author.post("/login", [("username", "author"), ("password", "correct horse battery")]).0.status == 303)
        node.clock.advance(60)
        #expect(try author.postOnBoard("seoul", "Clear by noon").0.status == 303)
        #expect(try node.count("SELECT count(*) FROM posts WHERE id > ?", [scene.lastPostID]) == 1)
        #expect(try node.count("SELECT count(*) FROM moderation_log WHERE action = 'ban'") == 2)
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
    /// Issue 37 #1: a backup holds every table: each one's rows and checksum equal the site's.
    @Test func aBackupHoldsEveryTableRowForRow() throws {
        let site = try AppHarness { $0.limits.secondsBetweenPosts = 0 }
        try site.withRowsInEveryTable()
        let path = site.folder + "/everything.sqlite"
        var backup = try WeatherboardCommand.parseAsRoot(["backup", path] + site.databaseArguments)
        try backup.run()
        let restored = try TestEngine.$current.withValue(.sqlite) { try AppHarness { $0.databasePath = path } }
        #expect(try restored.summaries() == site.summaries())
        #expect(try restored.count("SELECT count(*) FROM reactions") == 1)
        #expect(try restored.count("SELECT count(*) FROM notifications") >= 2)
        // And the check says so, against the live site too.
        var verify = try WeatherboardCommand.parseAsRoot(["verify-backup", path, "--against-live"] + site.databaseArguments)
        try verify.run()
    }

    /// Issue 37 #2: a post edited after 200 later posts sits on disk after its reply (PostgreSQL
    /// writes the new version of a row at the end); every backup after that failed.
    @Test func aPostEditedAfterItsReplyIsBackedUp() throws {
        let site = try AppHarness { $0.limits.secondsBetweenPosts = 0 }
        let author = site.browser()
        try author.signUp("author")
        try author.postOnBoard("seoul", "Is it hail?")
        let postID = Int64(try site.count("SELECT max(id) FROM posts"))
        try author.get("/posts/\(postID)")
        #expect(try author.post("/posts/\(postID)/replies", [("body", "Yes, hail")]).0.status == 303)
        let seoul = try site.count("SELECT id FROM cities WHERE slug = 'seoul'")
        for number in 1...200 {
            try site.execute("INSERT INTO posts (city_id, user_id, body, created_at) VALUES (?, NULL, ?, ?)",
                             [seoul, "Filler \(number) with enough words to fill a page of the table on disk", Double(number)])
        }
        try author.get("/posts/\(postID)/edit")
        #expect(try author.post("/posts/\(postID)/edit", [("body", "Is it hail? (it was)")]).0.status == 303)

        let path = site.folder + "/after-edit.sqlite"
        var backup = try WeatherboardCommand.parseAsRoot(["backup", path] + site.databaseArguments)
        try backup.run()
        let restored = try TestEngine.$current.withValue(.sqlite) { try AppHarness { $0.databasePath = path } }
        #expect(try restored.summaries() == site.summaries())
        #expect(try restored.browser().get("/posts/\(postID)").1.text("//article[1]//p[@class='post-body']") == "Is it hail? (it was)")
    }

    /// Issue 37 #1: a backup that fails leaves nothing at its path (it left an empty migrated
    /// file, which the restore drill then served as the site), nor its temporary file.
    @Test func aFailedBackupLeavesNothing() throws {
        let site = try AppHarness()
        try site.browser().signUp("someone")
        // A row whose post is not there: refused by the backup's own foreign keys.
        try site.plantOrphanNotification()
        let path = site.folder + "/failed.sqlite"
        let before = Set(try FileManager.default.contentsOfDirectory(atPath: site.folder))
        var backup = try WeatherboardCommand.parseAsRoot(["backup", path] + site.databaseArguments)
        #expect(throws: ValidationErrorExit.self) { try backup.run() }
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: site.folder)) == before)
    }

    /// Issue 37 #1: `verify-backup` refuses what is not a whole backup: an empty migrated file
    /// (what a failed backup used to leave) against a live site with posts, and a damaged file.
    @Test func verifyBackupRefusesAnEmptyOrDamagedFile() throws {
        let site = try AppHarness()
        let writer = site.browser()
        try writer.signUp("writer")
        try writer.postOnBoard("seoul", "Sleet")
        let empty = site.folder + "/empty.sqlite"
        let (database, _) = try AppDatabase.open(.sqlite(path: empty), migrationsDirectory: AppConfiguration.repositoryFolder("Migrations"))
        try database.close()
        var alone = try WeatherboardCommand.parseAsRoot(["verify-backup", empty] + site.databaseArguments)
        try alone.run() // sound as a file: a new site's backup is empty too
        var against = try WeatherboardCommand.parseAsRoot(["verify-backup", empty, "--against-live"] + site.databaseArguments)
        #expect { try against.run() } throws: { error in
            let message = "\(error)"
            return message.contains("posts: no rows in the backup, 1 on the live site") && message.contains("users: no rows in the backup")
        }

        // Against a live site that is not there: refused, and no empty site made to compare with.
        let nowhere = site.folder + "/no-live-site.sqlite"
        var absent = try WeatherboardCommand.parseAsRoot(["verify-backup", empty, "--against-live", "--db", nowhere])
        #expect(throws: ValidationErrorExit.self) { try absent.run() }
        #expect(!FileManager.default.fileExists(atPath: nowhere))

        let damaged = site.folder + "/damaged.sqlite"
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: site.folder + "/empty.sqlite")))
        for index in stride(from: 4_096, to: bytes.count, by: 97) { bytes[index] ^= 0x5a }
        try Data(bytes).write(to: URL(fileURLWithPath: damaged))
        var check = try WeatherboardCommand.parseAsRoot(["verify-backup", damaged] + site.databaseArguments)
        #expect(throws: ValidationErrorExit.self) { try check.run() }
        var missing = try WeatherboardCommand.parseAsRoot(["verify-backup", site.folder + "/none.sqlite"] + site.databaseArguments)
        #expect(throws: ValidationErrorExit.self) { try missing.run() }
        #expect(!FileManager.default.fileExists(atPath: site.folder + "/none.sqlite"))
    }

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

extension AppHarness {
    /// Given a site with rows in every table its migrations made: posts and a reply, an agreement,
    /// notifications, a report, blocks, a bookmark, recovery codes, queued mail and a mailed link, a passkey and a ceremony under way, a push subscription with a push waiting, a ban (and one lifted), a deleted account
    /// (its name retired, its ban kept as history, its posts hidden from who blocked it), a
    /// forecast, a refresh lease. Fails if a table is still empty: a table a migration adds
    /// needs a row here, so that the copies are proven to carry it.
    @discardableResult
    func withRowsInEveryTable() throws -> (admin: Browser, author: Browser, lastPostID: Int64) {
        let scene = try reportedPost("Fog at dawn")
        try scene.reporter.get("/posts/\(scene.postID)")
        #expect(try scene.reporter.post("/posts/\(scene.postID)/replies", [("body", "Thick here too @author")]).0.status == 303)
        try scene.reporter.get("/posts/\(scene.postID)")
        #expect(try scene.reporter.post("/posts/\(scene.postID)/react", []).0.status == 303)
        #expect(try scene.reporter.post("/bookmarks/seoul", []).0.status == 303)

        let pest = browser()
        try pest.signUp("pest")
        try pest.postOnBoard("seoul", "Buy my umbrellas")
        try scene.author.get("/users/pest")
        #expect(try scene.author.post("/users/pest/block", []).0.status == 303)
        try scene.admin.get("/admin/users/pest")
        #expect(try scene.admin.post("/admin/users/pest/ban", [("duration", "1d"), ("reason", "Spam")]).0.status == 303)
        try scene.admin.get("/admin/users/pest")
        #expect(try scene.admin.post("/admin/users/pest/unban", [("reason", "One more chance")]).0.status == 303)
        try pest.get("/login")
        try pest.post("/login", [("username", "pest"), ("password", "correct horse battery")])
        try pest.get("/settings")
        #expect(try pest.post("/settings/delete", [("password", "correct horse battery")]).0.status == 303)

        let loud = browser()
        try loud.signUp("loud")
        try scene.reporter.get("/users/loud")
        #expect(try scene.reporter.post("/users/loud/block", []).0.status == 303)
        try scene.author.get("/users/loud")
        #expect(try scene.author.post("/users/loud/mute", [("duration", "week")]).0.status == 303)

        try loud.get("/settings/notifications")
        #expect(try loud.post("/settings/notifications", [("replies_site", "on"), ("mentions_site", "on")]).0.status == 303)
        try loud.get("/settings/recovery")
        #expect(try loud.post("/settings/recovery", [("password", "correct horse battery")]).0.status == 200)

        try scene.admin.get("/admin/users/reporter")
        #expect(try scene.admin.post("/admin/users/reporter/ban", [("duration", "1d"), ("reason", "testing the copy")]).0.status == 303)
        try execute("INSERT INTO weather_refresh_leases (city_id, holder, until) SELECT id, 'a node', 0 FROM cities WHERE slug = 'busan'")
        // Mail waiting for a relay, and a link out (a site without a relay configured has none).
        try execute("UPDATE users SET email = 'loud@example.org', email_key = 'loud@example.org', language = 'ko' WHERE username = 'loud'")
        try execute("""
            INSERT INTO mail_queue (user_id, kind, address, language, created_at, expires_at, next_attempt_at)
            SELECT id, 'reset', 'loud@example.org', 'ko', 0, 1e12, 0 FROM users WHERE username = 'loud'
            """)
        // The site's VAPID key, a browser's push subscription and a push waiting for it.
        try execute("INSERT INTO push_keys (id, private_key, public_key, created_at) VALUES (1, 'c2VjcmV0', 'BPub', 0)")
        try execute("""
            INSERT INTO push_subscriptions (user_id, endpoint, p256dh, auth, browser, created_at, last_used_at)
            SELECT id, 'https://fcm.googleapis.com/fcm/send/abc', 'BKey', 'YXV0aA', 'Chrome on Android', 0.5, 1.5 FROM users WHERE username = 'author'
            """)
        try execute("""
            INSERT INTO push_queue (subscription_id, notification_id, created_at, expires_at, next_attempt_at)
            SELECT (SELECT min(id) FROM push_subscriptions), min(id), 0, 1e12, 0 FROM notifications
            """)
        // A passkey (its key as a browser sent it, base64url) and a ceremony under way.
        try execute("UPDATE users SET passkey_handle = 'x9Ht1Qv' WHERE username = 'loud'")
        try execute("""
            INSERT INTO passkeys (user_id, credential_id, public_key, algorithm, sign_count, name, created_at, last_used_at)
            SELECT id, 'q2W3bE1r', 'pQECAyYgASFYIA', -7, 12, '내 휴대폰', 1.5, 2.5 FROM users WHERE username = 'loud'
            """)
        try execute("""
            INSERT INTO webauthn_challenges (challenge_hash, binding, purpose, user_id, name, expires_at)
            SELECT 'a digest', 'a binding', 'register', id, 'Laptop', 1e12 FROM users WHERE username = 'loud'
            """)
        try execute("INSERT INTO form_confirmations (token_hash, holder, action, expires_at) VALUES ('a digest', 's:a session', 'POST /logout', 1e12)")
        // A provider's identity, an attempt under way and a first sign-in waiting for its name.
        try execute("""
            INSERT INTO oidc_identities (issuer, subject, user_id, provider, created_at)
            SELECT 'https://accounts.example', 'sub-1', id, 'example', 1.5 FROM users WHERE username = 'loud'
            """)
        try execute("""
            INSERT INTO oidc_attempts (state_hash, binding, provider, nonce, verifier, next, user_id, expires_at)
            VALUES ('a digest', 'a binding', 'example', 'a nonce', 'a verifier', '/', NULL, 1e12)
            """)
        try execute("""
            INSERT INTO oidc_pending (token_hash, issuer, subject, provider, name, email, next, expires_at)
            VALUES ('a digest', 'https://accounts.example', 'sub-2', 'example', '김하늘', NULL, '/city/seoul', 1e12)
            """)
        try execute("""
            INSERT INTO email_tokens (token_hash, user_id, purpose, address, created_at, expires_at)
            SELECT 'a digest', id, 'verify', 'loud2@example.org', 0, 1e12 FROM users WHERE username = 'loud'
            """)

        // A rain window on the reporter's bookmark of Seoul, and what one of its days was told.
        try execute("""
            INSERT INTO rain_windows (user_id, city_id, days, start_minute, end_minute, lead_minutes, created_at)
            SELECT user_id, city_id, 'weekdays', 420, 540, 60, 1.5 FROM bookmarks LIMIT 1
            """)
        try execute("""
            INSERT INTO rain_alerts (window_id, day, state, kind, spell_from, spell_to, stops_at, told_at)
            SELECT id, '2026-11-23', 'cleared', 'snow', '2026-11-23T07:00', '2026-11-23T09:00', NULL, ? FROM rain_windows
            """, [clock.read().timeIntervalSince1970]) // recent: the purge that any sign-in may run keeps it
        try execute("""
            INSERT INTO notifications (user_id, kind, alert_id, created_at)
            SELECT w.user_id, 'rain_cleared', a.id, ? FROM rain_alerts a JOIN rain_windows w ON w.id = a.window_id
            """, [clock.read().timeIntervalSince1970])

        // A city's normals for one date (a whole year's are 366 such rows).
        try execute("""
            INSERT INTO climate_normals (city_id, month_day, high, low, source, fetched_at)
            SELECT id, 1122, 8.5, -0.5, 'open-meteo-era5', 2.5 FROM cities WHERE slug = 'seoul'
            """)

        // An official warning in force in Seoul until lifted, in two languages (its words and dates as a source gave them).
        try execute("""
            INSERT INTO warnings (id, source, event, severity, urgency, sent, onset, expires, ends_when_lifted)
            VALUES ('kma:2026-11-22-1', 'kma', '호우주의보', 'moderate', 'immediate', 1.5, 2.5, 1e12, 1)
            """)
        try execute("""
            INSERT INTO warning_texts (warning_id, language, headline, description)
            VALUES ('kma:2026-11-22-1', 'ko', '서울 호우주의보', '시간당 20mm'), ('kma:2026-11-22-1', 'en', 'Heavy rain advisory', '30 mm an hour')
            """)
        try execute("INSERT INTO warning_cities (warning_id, city_id) SELECT 'kma:2026-11-22-1', id FROM cities WHERE slug = 'seoul'")
        // The reporter told of it (a bookmark of Seoul), and a subscription to Busan's warnings alone.
        try execute("""
            INSERT INTO warning_alerts (warning_id, user_id, city_id, event, severity, expires, ends_when_lifted, state, told_at)
            SELECT 'kma:2026-11-22-1', user_id, city_id, '호우주의보', 'moderate', 1e12, 1, 'started', ? FROM bookmarks LIMIT 1
            """, [clock.read().timeIntervalSince1970])
        try execute("""
            INSERT INTO notifications (user_id, kind, warning_alert_id, created_at)
            SELECT user_id, 'warning', id, ? FROM warning_alerts
            """, [clock.read().timeIntervalSince1970])
        try execute("INSERT INTO warning_subscriptions (user_id, city_id, created_at) SELECT b.user_id, c.id, 2.5 FROM bookmarks b, cities c WHERE c.slug = 'busan' LIMIT 1")

        // A post with a photo (its three files as bytes), and a removed photo's likeness.
        #expect(try PhotoTests.post(scene.author, "The sky as it was", photo: "photo.webp", alt: "Clouds").0.status == 303)
        try execute("INSERT INTO removed_photos (difference_hash, removed_at) VALUES (-6148914691236517206, 4.5)")

        // A browser that signed in to an account before (within the time kept: the janitor keeps it).
        let hourAgo = AppHarness.fixedNow.timeIntervalSince1970 - 3600.5
        try execute("INSERT INTO known_devices (token_hash, user_id, created_at, last_used_at) SELECT 'a digest', id, ?, ? FROM users WHERE username = 'loud'",
                    [hourAgo - 1, hourAgo])

        // A digest wanted weekly, and a sent digest's unsubscribe link.
        try execute("UPDATE users SET digest = 'weekly', digest_handled_at = 4.5 WHERE username = 'loud'")
        try execute("INSERT INTO unsubscribe_links (token_hash, user_id, created_at) SELECT 'a digest', id, ? FROM users WHERE username = 'loud'", [hourAgo])

        let empty = try application.database.read { db in
            try Schema.tableNames(db).filter { try db.integer("SELECT count(*) FROM \($0)") == 0 }
        }
        #expect(empty.isEmpty, "tables with no rows in the scene: \(empty)")
        return (scene.admin, scene.author, Int64(try count("SELECT max(id) FROM posts")))
    }

    /// Every table's rows and checksum, as the copies compare them.
    func summaries() throws -> [DatabaseCopy.TableSummary] {
        try application.database.read { db in try DatabaseCopy.summaries(of: Schema.tables(db), in: db) }
    }

    /// A notification whose post is not there, written past the foreign keys (as a damaged or
    /// hand-edited database could hold): SQLite's own shell with them off, PostgreSQL as replica.
    func plantOrphanNotification() throws {
        let user = try count("SELECT min(id) FROM users")
        switch engine {
        case .sqlite:
            let sql = "PRAGMA foreign_keys = OFF; INSERT INTO notifications (user_id, kind, post_id, created_at) VALUES (\(user), 'reply', 999999, 0);"
            let status = try ChildProcess(shell: "sqlite3 '\(application.configuration.databasePath)' \"\(sql)\"").wait()
            #expect(status == 0, "sqlite3 (apt-get install sqlite3) wrote the row")
        case .postgres:
            try application.database.write(.cluster) { db in
                try db.execute("SET LOCAL session_replication_role = replica", [])
                try db.execute("INSERT INTO notifications (user_id, kind, post_id, created_at) VALUES (?, 'reply', 999999, 0)", [.integer(Int64(user))])
            }
        }
        #expect(try count("SELECT count(*) FROM notifications WHERE post_id = 999999") == 1)
    }
}
