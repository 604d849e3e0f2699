import Foundation
import HTTPTestSupport
import Testing
@testable import Weatherboard

/// Issue 21 #1: each store operation that changes what pages show emits the change once its
/// transaction commits; consumers (the page cache's versions, other nodes) hear it from there,
/// not from controllers remembering to tell them.
@Suite(.onEveryEngine) struct ChangeStreamTests {
    /// The changes this node committed since the last look (forecasts left out unless asked for:
    /// viewing a city fetches its weather).
    final class Heard: Sendable {
        private let changes = Locked<[PageChange]>([])

        init(_ database: AppDatabase) {
            database.changes.subscribe { [changes] change, origin in
                #expect(origin == .here)
                changes.update { $0.append(change) }
            }
        }

        func take(weather: Bool = false) -> [PageChange] {
            var taken: [PageChange] = []
            changes.update { taken = $0; $0 = [] }
            // A post's event is a change of its board (what it says live pages hear: LiveTests).
            var boards: [PageChange] = []
            for change in taken {
                let page: PageChange = if case .post(let event) = change { .city(event.city) } else { change }
                if !boards.contains(page) { boards.append(page) }
            }
            return weather ? boards : boards.filter { if case .weather = $0 { false } else { true } }
        }
    }

    @Test func everyWriteAPageShowsIsEmittedOnceCommittedAndNothingElseIs() throws {
        let app = try AppHarness { $0.limits.secondsBetweenPosts = 0; $0.limits.reportThreshold = 1 }
        let heard = Heard(app.application.database)
        let seoul = Int64(try app.count("SELECT id FROM cities WHERE slug = 'seoul'"))
        let busan = Int64(try app.count("SELECT id FROM cities WHERE slug = 'busan'"))

        let alice = app.browser()
        try alice.signUp("alice")
        #expect(heard.take() == [], "signing up changes no page a guest sees")
        try alice.get("/city/seoul")
        #expect(try alice.post("/city/seoul/posts", [("body", "   ")]).0.status == 422)
        #expect(heard.take() == [], "a refused post commits nothing")
        #expect(try alice.postOnBoard("seoul", "Drizzle over Jongno").0.status == 303)
        #expect(heard.take() == [.city(seoul)])
        let postID = Int64(try app.count("SELECT max(id) FROM posts"))
        try alice.get("/posts/\(postID)/edit")
        #expect(try alice.post("/posts/\(postID)/edit", [("body", "Drizzle over Jongno, then sun")]).0.status == 303)
        #expect(heard.take() == [.city(seoul)])
        #expect(try alice.postOnBoard("busan", "Windy at Haeundae").0.status == 303)
        #expect(heard.take() == [.city(busan)])
        try alice.get("/settings")
        #expect(try alice.post("/settings/profile", [("display_name", "Alice K")]).0.status == 303)
        #expect(Set(heard.take()) == [.city(seoul), .city(busan)], "a new name changes the boards showing the person's posts")

        // A report that hides the post (threshold 1 here), and its withdrawal that shows it again.
        let bob = app.browser()
        try bob.signUp("bob")
        try app.inGoodStanding("bob")
        _ = heard.take() // the Given step's own announcement
        try bob.get("/city/seoul")
        #expect(try bob.post("/posts/\(postID)/report", [("reason", "spam")]).0.status == 303)
        #expect(heard.take() == [.city(seoul)])
        try bob.get("/settings/reports")
        #expect(try bob.post("/posts/\(postID)/report/withdraw", []).0.status == 303)
        #expect(heard.take() == [.city(seoul)])
        try bob.get("/city/seoul")
        #expect(try bob.post("/posts/\(postID)/report", [("reason", "spam")]).0.status == 303)
        _ = heard.take()

        // Moderation.
        let chief = app.browser()
        try chief.signUp("chief")
        try app.promoteToAdmin("chief")
        _ = heard.take()
        try chief.get("/admin")
        // Each decision also tells people (the author, the reporters): a notice to each, for their open pages' counts.
        let author = Int64(try app.count("SELECT user_id FROM posts WHERE id = ?", [postID]))
        let reporter = Int64(try app.count("SELECT id FROM users WHERE username = 'bob'"))
        #expect(try chief.post("/admin/posts/\(postID)/restore", []).0.status == 303)
        #expect(heard.take() == [.city(seoul), .notice(author), .notice(reporter)])
        try chief.get("/admin")
        #expect(try chief.post("/admin/posts/\(postID)/remove", [("reason", "Off topic")]).0.status == 303)
        #expect(heard.take() == [.city(seoul), .notice(author)])
        try chief.get("/admin/users/bob")
        #expect(try chief.post("/admin/users/bob/ban", [("duration", "7d"), ("reason", "Spam wave")]).0.status == 303)
        #expect(heard.take() == [.everything])
        try chief.get("/admin/users/bob")
        #expect(try chief.post("/admin/users/bob/unban", [("reason", "Appeal accepted")]).0.status == 303)
        #expect(heard.take() == [.everything])

        // The author's own delete, then the account.
        let busanPost = Int64(try app.count("SELECT id FROM posts WHERE city_id = ?", [busan]))
        try alice.get("/posts/\(busanPost)/delete")
        #expect(try alice.post("/posts/\(busanPost)/delete", []).0.status == 303)
        #expect(heard.take() == [.city(busan)])
        try alice.get("/settings")
        #expect(try alice.post("/settings/delete", [("password", "correct horse battery")]).0.status == 303)
        #expect(heard.take() == [.everything])

        // The command line's stores emit too (an admin's posts carry a badge).
        let accounts = AccountStore(database: app.application.database)
        try accounts.promote(username: "bob")
        #expect(heard.take() == [.everything])
        try accounts.promote(username: "nobody-here")
        #expect(heard.take() == [], "promoting nobody changes nothing")

        // A new forecast.
        try ForecastStore(database: app.application.database).save(
            Forecast(source: "demo", fetchedAt: app.clock.read(), current: nil, daily: [], hourly: []),
            for: try #require(app.application.cities.city(id: seoul)), payload: "{}")
        #expect(heard.take(weather: true) == [.weather(seoul)])

        // A transaction that fails after emitting emits nothing.
        struct Abandoned: Error {}
        #expect(throws: Abandoned.self) {
            try app.application.database.write(.cluster) { db, changes in
                try changes.emit(.city(seoul))
                try db.execute("UPDATE posts SET body = 'never' WHERE city_id = ?", seoul)
                throw Abandoned()
            }
        }
        #expect(heard.take() == [])
        #expect(try app.count("SELECT count(*) FROM posts WHERE body = 'never'") == 0)
    }
}

/// Issue 38 #6: a write made beside a serving SQLite node (the command line, another process)
/// reached nothing the node kept: a guest's page went on without it until it expired.
@Suite struct OtherWritersTests {
    @Test func aRoleGivenByTheCommandLineReachesTheServingNode() throws {
        let app = try TestEngine.$current.withValue(.sqlite) { try AppHarness() }
        let author = app.browser()
        try author.signUp("author")
        try author.postOnBoard("seoul", "Morning fog")
        app.clock.advance(11)
        let guest = app.browser()
        func badges() throws -> Int { try guest.get("/city/seoul").1.nodes("//span[@class='admin-badge']").count }
        #expect(try badges() == 0)
        #expect(try badges() == 0) // and kept
        var promote = try WeatherboardCommand.parseAsRoot(["create-admin", "author"] + app.databaseArguments)
        try promote.run()
        try waitUntil("the guest's page shows the new admin's badge", timeout: 5) { try badges() == 1 }
        try author.get("/admin")
        #expect(author.lastPage?.nodes("//h1").isEmpty == false)
        #expect(try author.get("/admin").0.status == 200)
    }
}
