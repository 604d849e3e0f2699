import Foundation
import HTTPServer
import HTTPTestSupport
import Testing
@testable import Weatherboard

/// Issue 45 #2: standing that is earned (docs/standing.md), with a controlled clock, at each
/// boundary.
@Suite(.serialized, .onEveryEngine) struct StandingTests {
    func level(_ app: AppHarness, _ username: String) throws -> Int {
        try app.count("SELECT level FROM users WHERE username = ?", [username])
    }

    func profileLevel(_ browser: Browser, _ username: String) throws -> String? {
        try browser.get("/users/\(username)").1.nodes("//section[@class='profile']//*[@data-level]").first?["data-level"]
    }

    @Test func aNewMembersLinkIsRefusedWithTheReasonUntilADayAndAKeptPost() throws {
        let app = try AppHarness { $0.limits.secondsBetweenPosts = 10 }
        let newcomer = app.browser()
        try newcomer.signUp("newcomer")
        #expect(try profileLevel(app.browser(), "newcomer") == "0")
        // A link is refused with the reason, the text kept.
        let (refused, page) = try newcomer.postOnBoard("seoul", "Radar: https://radar.example/seoul")
        #expect(refused.status == 422)
        #expect(page?.text("//textarea[@name='body']") == "Radar: https://radar.example/seoul")
        #expect(page?.text("//*[@role='alert']")?.contains("link") == true)
        // Without a link it posts, marked new; the pause is three times the site's.
        #expect(try newcomer.postOnBoard("seoul", "Light rain in Mapo").0.status == 303)
        let board = try app.browser().get("/city/seoul").1
        #expect(board.nodes("//article[@data-author='newcomer']//a[@class='author'][@data-level='0']").count == 1)
        #expect(board.nodes("//article[@data-author='newcomer']//span[@class='new-badge']").count == 1)
        app.clock.advance(11)
        #expect(try newcomer.postOnBoard("seoul", "Heavier now").0.status == 429)
        app.clock.advance(20)
        #expect(try newcomer.postOnBoard("seoul", "Heavier now").0.status == 303)
        // A day less a minute: still new. A day: a member, and the link goes through.
        app.clock.advance(86_400 - 31 - 60)
        #expect(try newcomer.postOnBoard("seoul", "Radar: https://radar.example/seoul").0.status == 422)
        app.clock.advance(60)
        #expect(try newcomer.postOnBoard("seoul", "Radar: https://radar.example/seoul").0.status == 303)
        #expect(try level(app, "newcomer") == 1)
        #expect(try profileLevel(app.browser(), "newcomer") == "1")
        #expect(try app.browser().get("/city/seoul").1.nodes("//article[@data-author='newcomer']//a[@class='author'][@data-level='1']").count >= 1,
                "the kept board follows the promotion")
    }

    @Test func aDayWithoutAKeptPostIsNotEnough() throws {
        let app = try AppHarness()
        let quiet = app.browser(), chief = app.browser()
        try quiet.signUp("quiet")
        try chief.signUp("chief")
        try app.promoteToAdmin("chief")
        try quiet.postOnBoard("seoul", "Only post")
        let postID = Int64(try app.count("SELECT max(id) FROM posts"))
        // Removed by a moderator: no kept post, so a day later the member is still new.
        try chief.get("/admin")
        #expect(try chief.post("/admin/posts/\(postID)/remove", [("reason", "Off topic")]).0.status == 303)
        app.clock.advance(86_400 + 60)
        #expect(try quiet.postOnBoard("seoul", "See https://example.com/x").0.status == 422)
        #expect(try level(app, "quiet") == 0)
    }

    /// Reports weigh by standing: three members hide a post; three new members do not, six do.
    @Test func aNewMembersReportWeighsHalf() throws {
        let app = try AppHarness { $0.limits.secondsBetweenPosts = 0; $0.limits.signUpsPerHour = 100 }
        let author = app.browser()
        try author.signUp("author")
        try author.postOnBoard("seoul", "Questionable post")
        let postID = Int64(try app.count("SELECT max(id) FROM posts"))
        func hidden() throws -> Bool { try app.count("SELECT count(*) FROM posts WHERE id = ? AND hidden_at IS NOT NULL", [postID]) == 1 }
        for number in 1...6 {
            let reporter = app.browser()
            try reporter.signUp("fresh\(number)")
            try reporter.get("/city/seoul")
            #expect(try reporter.post("/posts/\(postID)/report", [("reason", "spam")]).0.status == 303)
            #expect(try hidden() == (number >= 6), "after \(number) new members' reports")
        }
        // A second post: members (a day and a kept post) hide it with three.
        try author.postOnBoard("seoul", "Another questionable post")
        let second = Int64(try app.count("SELECT max(id) FROM posts"))
        var members: [Browser] = []
        for number in 1...3 {
            let member = app.browser()
            try member.signUp("member\(number)")
            try member.postOnBoard("busan", "Hello from Busan \(number)")
            members.append(member)
        }
        app.clock.advance(86_400 + 60)
        for (index, member) in members.enumerated() {
            try member.get("/city/seoul")
            #expect(try member.post("/posts/\(second)/report", [("reason", "spam")]).0.status == 303)
            #expect(try app.count("SELECT count(*) FROM posts WHERE id = ? AND hidden_at IS NOT NULL", [second]) == (index == 2 ? 1 : 0))
        }
    }

    @Test func aNewMemberHasFewerReportsADay() throws {
        let app = try AppHarness { $0.limits.secondsBetweenPosts = 0; $0.limits.reportsPerDay = 9; $0.limits.reportThreshold = 100 }
        let author = app.browser(), newcomer = app.browser()
        try author.signUp("author")
        try newcomer.signUp("newcomer")
        var ids: [Int64] = []
        for number in 1...4 {
            try author.postOnBoard("seoul", "Post number \(number)")
            ids.append(Int64(try app.count("SELECT max(id) FROM posts")))
        }
        try newcomer.get("/city/seoul")
        for id in ids.prefix(3) { #expect(try newcomer.post("/posts/\(id)/report", [("reason", "spam")]).0.status == 303) }
        #expect(try newcomer.post("/posts/\(ids[3])/report", [("reason", "spam")]).0.status == 429, "a third of 9")
    }

    @Test func trustedAfterWeeksOfGoodStandingAndAModeratorCanSetALevelLogged() throws {
        let app = try AppHarness { $0.limits.secondsBetweenPosts = 0; $0.limits.signUpsPerHour = 100 }
        let regular = app.browser(), chief = app.browser()
        try regular.signUp("regular")
        try chief.signUp("chief")
        try app.promoteToAdmin("chief")
        var fans: [Browser] = []
        for number in 1...10 {
            let fan = app.browser()
            try fan.signUp("fan\(number)")
            fans.append(fan)
        }
        // 10 kept posts, 10 agreements, a visit on each of 7 days, 21 days.
        for day in 0..<21 {
            if day < 10 { try regular.postOnBoard("seoul", "Day \(day): the sky") }
            try regular.get("/settings")
            app.clock.advance(86_400)
        }
        #expect(try level(app, "regular") == 1, "no agreement yet")
        let first = Int64(try app.count("SELECT min(id) FROM posts WHERE user_id = (SELECT id FROM users WHERE username = 'regular')"))
        for fan in fans.prefix(9) {
            try fan.get("/posts/\(first)")
            #expect(try fan.post("/posts/\(first)/react", []).0.status == 303)
        }
        #expect(try level(app, "regular") == 1, "nine agreements")
        try fans[9].get("/posts/\(first)")
        #expect(try fans[9].post("/posts/\(first)/react", []).0.status == 303)
        #expect(try level(app, "regular") == 2)
        #expect(try profileLevel(app.browser(), "regular") == "2")

        // A moderator sets it to 0 by hand, with a reason (logged); it holds, then goes back to earned.
        try chief.get("/admin/users/regular")
        #expect(try chief.post("/admin/users/regular/level", [("level", "0"), ("reason", "")]).0.status == 422, "a reason is required")
        #expect(try chief.post("/admin/users/regular/level", [("level", "7"), ("reason", "x")]).0.status == 422)
        try chief.get("/admin/users/regular")
        #expect(try chief.post("/admin/users/regular/level", [("level", "0"), ("reason", "Spam links lately")]).0.status == 303)
        #expect(try level(app, "regular") == 0)
        #expect(try regular.postOnBoard("seoul", "See https://example.com/y").0.status == 422)
        #expect(try app.count("SELECT count(*) FROM moderation_log WHERE action = 'level_0' AND reason = 'Spam links lately'") == 1)
        #expect(try chief.get("/admin/log").1.nodes("//*[contains(., 'Spam links lately')]").count >= 1)
        try chief.get("/admin/users/regular")
        #expect(try chief.post("/admin/users/regular/level", [("level", "earned"), ("reason", "Sorted out")]).0.status == 303)
        #expect(try level(app, "regular") == 2)
        #expect(try app.count("SELECT count(*) FROM moderation_log WHERE action = 'level_earned'") == 1)
        // Members cannot.
        try regular.get("/users/fan1")
        #expect(try regular.post("/admin/users/fan1/level", [("level", "2"), ("reason", "me")]).0.status == 404)
    }
}
