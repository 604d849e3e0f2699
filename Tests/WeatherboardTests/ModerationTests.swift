import ArgumentParser
import Foundation
import Testing
import HTTPTestSupport
@testable import Weatherboard

/// Given: an admin, an author with a post on Seoul's board, and three people who reported it.
struct ModerationScene {
    let app: AppHarness
    let admin: Browser
    let author: Browser
    let reporters: [Browser]
    let postID: Int

    init() throws {
        app = try AppHarness()
        admin = app.browser()
        try admin.signUp("overseer")
        try app.promoteToAdmin("overseer")
        author = app.browser()
        try author.signUp("spammer")
        try author.postOnBoard("seoul", "cheap watches here")
        let id = try app.count("SELECT max(id) FROM posts")
        postID = id
        var reporters: [Browser] = []
        for n in 1...3 {
            let reporter = app.browser()
            try reporter.signUp("witness\(n)")
            try app.inGoodStanding("witness\(n)")
            try reporter.get("/city/seoul")
            try reporter.post("/posts/\(id)/report", [("reason", "spam")])
            reporters.append(reporter)
        }
        self.reporters = reporters
    }

    func visibleOnBoard(to browser: Browser) throws -> Bool {
        try browser.get("/city/seoul").1.count("//article[@data-post-id='\(postID)']//p[@class='post-body']") == 1
    }
}

@Suite(.serialized, .onEveryEngine) struct ModerationTests {
    @Test func everyAdminRouteIsHiddenFromNonAdminsAndSignedOutVisitorsAreSentToSignIn() throws {
        let app = try AppHarness()
        let routes = app.application.router.routes.filter { $0.path.hasPrefix("/admin") }
        #expect(routes.count >= 7)
        let member = app.browser()
        try member.signUp("nosy")
        for route in routes {
            let target = route.path.replacingOccurrences(of: "{id}", with: "1").replacingOccurrences(of: "{username}", with: "nosy")
            if route.method == "GET" {
                #expect(try member.get(target).0.status == 404, "\(route.method) \(route.path)")
                let guest = try app.browser().get(target).0
                #expect(guest.status == 303 && guest.headers["Location"]?.hasPrefix("/login") == true, "\(route.path)")
            } else {
                try member.get("/")
                #expect(try member.post(target, [("reason", "x"), ("duration", "1d")]).0.status == 404, "\(route.method) \(route.path)")
            }
        }
    }

    @Test func theQueueGroupsReportsByPostAndActionsNeedTheirToken() throws {
        let scene = try ModerationScene()
        let (_, queue) = try scene.admin.get("/admin")
        let group = try #require(queue.nodes("//article[@class='report-group']").first)
        #expect(group["data-post-id"] == String(scene.postID))
        #expect(queue.nodes("//article[@class='report-group']//span[@class='reporters']").first?["data-count"] == "3")
        #expect(queue.text("//article[@class='report-group']//ul[@class='reasons']/li") == "Spam × 3")
        #expect(queue.count("//form[@action='/admin/posts/\(scene.postID)/remove']//input[@name='reason']") == 1)
        scene.admin.fetchSite = "cross-site"
        #expect(try scene.admin.post("/admin/posts/\(scene.postID)/remove", [("reason", "spam")]).0.status == 403)
        scene.admin.fetchSite = nil
        // Neither header: asked first, nothing done yet.
        let (asked, question) = try scene.admin.post("/admin/posts/\(scene.postID)/remove", [("reason", "spam")])
        #expect(asked.status == 200 && question?.count("//form[contains(@class,'confirm-form')]") == 1)
        scene.admin.fetchSite = "same-origin"
        #expect(try scene.app.count("SELECT count(*) FROM moderation_log") == 0)
    }

    @Test func removingAPostTakesItOffEveryPublicViewAndTellsTheAuthorWhy() throws {
        let scene = try ModerationScene()
        try scene.admin.get("/admin")
        let (missing, page) = try scene.admin.post("/admin/posts/\(scene.postID)/remove", [("reason", "  ")])
        #expect(missing.status == 422)
        #expect(page?.text("//article[@data-post-id='\(scene.postID)']//p[@class='form-error']") == "A reason is required.")
        let (removed, _) = try scene.admin.post("/admin/posts/\(scene.postID)/remove", [("reason", "Advertising")])
        #expect(removed.status == 303)
        // gone for everyone, the author included, on the board and in the feed
        #expect(try !scene.visibleOnBoard(to: scene.app.browser()))
        #expect(try !scene.visibleOnBoard(to: scene.author))
        let feed = try MarkupDocument(scene.app.get("/city/seoul/feed.atom").body, as: .xml)
        #expect(feed.count("//*[local-name()='entry']") == 0)
        #expect(try scene.app.browser().get("/users/spammer").1.count("//article[contains(@class,'post')]") == 0)
        // the author sees the reason on their own profile
        let (_, own) = try scene.author.get("/users/spammer")
        #expect(own.text("//p[@class='removed-notice']") == "Removed by a moderator: Advertising")
        // reporters see the outcome
        let (_, reports) = try scene.reporters[0].get("/settings/reports")
        #expect(reports.nodes("//li[@class='my-report']").first?["data-outcome"] == "removed")
        // the public log names the author and the reason, never the reporters or the text
        let (_, log) = try scene.app.browser().get("/city/seoul/moderation")
        let entry = try #require(log.nodes("//li[@class='moderation-entry']").first)
        #expect(entry["data-action"] == "remove")
        #expect(entry.text.hasPrefix("A post by Spammer (@spammer) was removed: Advertising, ")) // as the boards name people
        #expect(!log.nodes("//main").first!.text.contains("witness"))
        #expect(!log.nodes("//main").first!.text.contains("cheap watches"))
        // and the queue is empty again
        #expect(try scene.admin.get("/admin").1.count("//article[@class='report-group']") == 0)
        #expect(try scene.app.count("SELECT count(*) FROM moderation_log WHERE action = 'remove' AND reason = 'Advertising'") == 1)
    }

    @Test func restoringShowsThePostAgainAndTheSameReportersCannotHideItAgain() throws {
        let scene = try ModerationScene()
        #expect(try !scene.visibleOnBoard(to: scene.app.browser()))
        try scene.admin.get("/admin")
        #expect(try scene.admin.post("/admin/posts/\(scene.postID)/restore", []).0.status == 303)
        #expect(try scene.visibleOnBoard(to: scene.app.browser()))
        let (_, reports) = try scene.reporters[1].get("/settings/reports")
        #expect(reports.nodes("//li[@class='my-report']").first?["data-outcome"] == "no_violation")
        for reporter in scene.reporters {
            try reporter.get("/city/seoul")
            try reporter.post("/posts/\(scene.postID)/report", [("reason", "spam")])
        }
        #expect(try scene.visibleOnBoard(to: scene.app.browser()))
        #expect(try scene.app.count("SELECT count(*) FROM moderation_log WHERE action = 'restore'") == 1)
    }

    @Test func aBanStopsPostingEndsSessionsExplainsItselfAndExpires() throws {
        let scene = try ModerationScene()
        let oldToken = try #require(scene.author.cookies["session"])
        try scene.admin.get("/admin")
        #expect(try scene.admin.post("/admin/users/spammer/ban", [("duration", "7d"), ("reason", ""), ("post_id", String(scene.postID))]).0.status == 422)
        #expect(try scene.admin.post("/admin/users/overseer/ban", [("duration", "7d"), ("reason", "x")]).0.status == 422)
        #expect(try scene.admin.post("/admin/users/spammer/ban", [("duration", "7d"), ("reason", "Spam wave"), ("post_id", String(scene.postID))]).0.status == 303)
        #expect(try scene.app.count("SELECT count(*) FROM sessions WHERE user_id = (SELECT id FROM users WHERE username = 'spammer')") == 0)
        // the old session no longer works
        let replay = scene.app.browser()
        replay.cookies["session"] = oldToken
        #expect(try replay.get("/settings").0.status == 303)
        // signing in again is allowed for reading, and the page says why and until when
        let author = scene.app.browser()
        try author.get("/login")
        let (signedIn, page) = try author.post("/login", [("username", "spammer"), ("password", "correct horse battery")])
        #expect(signedIn.status == 200)
        #expect(page?.text("//p[@class='ban-notice']") == "You can read, but not post, edit, report or block until 29 Nov 2026 05:45 UTC. Reason: Spam wave")
        // the end is an instant the reader's browser shows in their own zone (local-time.js)
        #expect(page?.nodes("//p[@class='ban-notice']/time[@data-local-time]").first?["datetime"]?.hasPrefix("2026-11-29T05:45") == true)
        #expect(page?.count("//script[@src='/static/js/local-time.js']") == 1)
        // every change is refused with that message, and nothing is written
        let posts = try scene.app.count("SELECT count(*) FROM posts")
        let (refused, refusal) = try author.postOnBoard("busan", "I am back")
        #expect(refused.status == 403)
        #expect(refusal?.text("//section[@class='error-page']/p[1]")?.hasPrefix("You can read, but not post") == true)
        #expect(refusal?.count("//section[@class='error-page']/p[1]/time[@data-local-time]") == 1)
        #expect(refusal?.count("//script[@src='/static/js/local-time.js']") == 1)
        try author.get("/users/witness1")
        #expect(try author.post("/users/witness1/block", []).0.status == 403)
        #expect(try scene.app.count("SELECT count(*) FROM posts") == posts)
        #expect(try scene.app.count("SELECT count(*) FROM blocks") == 0)
        // the public log shows the ban on Seoul's page
        #expect(try scene.app.browser().get("/city/seoul/moderation").1.nodes("//li[@data-action='ban']").first?.text
            .hasPrefix("Spammer (@spammer) was banned: Spam wave") == true)
        // seven days later the ban is over
        scene.app.clock.advance(7 * 86400 + 1)
        #expect(try author.postOnBoard("busan", "I am back").0.status == 303)
    }

    @Test func unbanNeedsAReasonAndEveryActionIsLogged() throws {
        let scene = try ModerationScene()
        try scene.admin.get("/admin/users/spammer")
        try scene.admin.post("/admin/users/spammer/ban", [("duration", "permanent"), ("reason", "Repeat offender")])
        let (_, lookUp) = try scene.admin.get("/admin/users/spammer")
        #expect(lookUp.count("//form[@action='/admin/users/spammer/unban']") == 1)
        #expect(lookUp.nodes("//p[@class='blocks-received']").first?["data-count"] == "0")
        #expect(try scene.admin.post("/admin/users/spammer/unban", [("reason", "")]).0.status == 422)
        try scene.admin.get("/admin/users/spammer")
        #expect(try scene.admin.post("/admin/users/spammer/unban", [("reason", "Appeal accepted")]).0.status == 303)
        try scene.admin.get("/admin")
        try scene.admin.post("/admin/posts/\(scene.postID)/restore", [])
        let (_, log) = try scene.admin.get("/admin/log")
        #expect(log.nodes("//tr[@class='log-entry']").map { $0["data-action"] } == ["restore", "unban", "ban"])
        #expect(log.nodes("//tr[@class='log-entry']").allSatisfy { $0["data-admin"] == "overseer" })
        let (_, filtered) = try scene.admin.get("/admin/log?action=ban")
        #expect(filtered.nodes("//tr[@class='log-entry']").map { $0["data-action"] } == ["ban"])
        // the log is append-only, even for SQL
        #expect(throws: (any Error).self) {
            try scene.app.execute("DELETE FROM moderation_log")
        }
    }

    /// A deleted account's number goes to no one else: the public record goes on naming the
    /// person it was about, never whoever signed up next (SQLite gave the newest id again).
    @Test func theRecordOfADeletedAccountNamesNoNewcomer() throws {
        let app = try AppHarness()
        let admin = app.browser()
        try admin.signUp("overseer")
        try app.promoteToAdmin("overseer")
        let author = app.browser()
        try author.signUp("leaver", displayName: "Leaver")
        try author.postOnBoard("seoul", "cheap watches here")
        let postID = try app.count("SELECT max(id) FROM posts")
        try admin.get("/admin")
        #expect(try admin.post("/admin/posts/\(postID)/remove", [("reason", "Advertising")]).0.status == 303)
        try author.get("/settings")
        #expect(try author.post("/settings/delete", [("password", "correct horse battery")]).0.status == 303)
        try app.browser().signUp("newcomer", displayName: "Newcomer")
        let (_, log) = try app.browser().get("/city/seoul/moderation")
        let entry = try #require(log.nodes("//li[@class='moderation-entry']").first)
        #expect(entry.text.hasPrefix("A post by leaver was removed: Advertising, "), "\(entry.text)")
        #expect(!entry.text.contains("Newcomer"))
    }

    @Test func peopleBlockedByFiveOrMoreAreListedAsASignal() throws {
        let app = try AppHarness()
        let admin = app.browser()
        try admin.signUp("overseer")
        try app.promoteToAdmin("overseer")
        try app.browser().signUp("pest")
        for n in 0..<5 {
            let browser = app.browser()
            try browser.signUp("annoyed\(n)")
            try browser.get("/users/pest")
            try browser.post("/users/pest/block", [])
        }
        let (_, queue) = try admin.get("/admin")
        #expect(queue.nodes("//ul[@class='block-signals']/li").first?["data-username"] == "pest")
    }
}

@Suite(.serialized, .onEveryEngine) struct AdminCommandTests {
    @Test func createAdminTakesThePasswordFromTheEnvironmentNeverFromArguments() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("cli-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let db = folder + "/db.sqlite"
        #expect(throws: (any Error).self) {
            _ = try WeatherboardCommand.parseAsRoot(["create-admin", "chief", "--password", "hunter2hunter2", "--db", db])
        }
        setenv("WEATHERBOARD_ADMIN_PASSWORD", "a long admin secret", 1)
        defer { unsetenv("WEATHERBOARD_ADMIN_PASSWORD") }
        var create = try WeatherboardCommand.parseAsRoot(["create-admin", "chief", "--db", db])
        try create.run()
        var second = try WeatherboardCommand.parseAsRoot(["create-admin", "deputy", "--db", db])
        try second.run()
        let (database, _) = try AppDatabase.open(.sqlite(path: db), migrationsDirectory: AppConfiguration.repositoryFolder("Migrations"))
        let chief = try #require(try database.read { try User.find(username: "chief", $0) })
        #expect(chief.isAdmin)
        let hash = try database.read { try $0.one("SELECT password_hash FROM users WHERE id = ?", [chief.id]) { $0.string(0) } }
        #expect(try PasswordHasher().verify("a long admin secret", against: try #require(hash)))

        var demote = try WeatherboardCommand.parseAsRoot(["demote-admin", "deputy", "--db", db])
        try demote.run()
        var last = try WeatherboardCommand.parseAsRoot(["demote-admin", "chief", "--db", db])
        #expect(throws: ValidationErrorExit.self) { try last.run() }
        #expect(try database.read { try User.find(username: "chief", $0) }?.isAdmin == true)
        // promoting an existing user needs no password
        unsetenv("WEATHERBOARD_ADMIN_PASSWORD")
        var promote = try WeatherboardCommand.parseAsRoot(["create-admin", "DEPUTY", "--db", db])
        try promote.run()
        #expect(try database.read { try User.find(username: "deputy", $0) }?.isAdmin == true)
    }
}
