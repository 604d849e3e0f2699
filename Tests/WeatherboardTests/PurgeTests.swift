import Foundation
import HTTPTestSupport
import Testing
@testable import Weatherboard

/// Issue 22 #6: "remove everything and ban" — a spam wave ended in one step.
@Suite(.onEveryEngine) struct PurgeTests {
    @Test func everyPostAndReplyGoesEachLoggedReportsDecidedTheBanAppliedAndASecondRunChangesNothing() throws {
        let app = try AppHarness { $0.limits.secondsBetweenPosts = 0 }
        let (asker, question) = try ConversationTests.question(app, "Anyone seen the fog at Namsan?")
        let spammer = app.browser()
        try spammer.signUp("spammer")
        for (city, text) in [("seoul", "Cheap umbrellas 1"), ("seoul", "Cheap umbrellas 2"), ("seoul", "Cheap umbrellas 3"), ("busan", "Cheap umbrellas 4")] {
            #expect(try spammer.postOnBoard(city, text).0.status == 303)
        }
        try ConversationTests.reply(spammer, to: question, "Cheap umbrellas here")
        try ConversationTests.reply(spammer, to: question, "Cheap umbrellas there")
        let reported = Int64(try app.count("SELECT min(id) FROM posts WHERE body = 'Cheap umbrellas 1'"))
        try asker.get("/city/seoul")
        #expect(try asker.post("/posts/\(reported)/report", [("reason", "spam")]).0.status == 303)
        // A guest's page of Seoul, kept in the cache.
        #expect(try app.page("/city/seoul").1.count("//article[@data-author='spammer']") == 5)

        let chief = app.browser()
        try chief.signUp("chief")
        try app.promoteToAdmin("chief")
        let (_, person) = try chief.get("/admin/users/spammer")
        let form = try #require(person.nodes("//form[contains(@action,'purge')]").first)
        #expect(form["action"] == "/admin/users/spammer/purge")
        #expect(person.count("//form[contains(@action,'purge')]//select[@name='duration']") == 1)
        #expect(person.count("//form[contains(@action,'purge')]//input[@name='reason']") == 1)
        #expect(person.count("//datalist[@id='removal-reasons']/option[@value='Spam']") == 1)
        let proof = try #require(person.nodes("//form[contains(@action,'purge')]//input[@name='from']").first?["value"])

        let (shown, confirm) = try chief.get("/admin/users/spammer/purge?duration=permanent&reason=Spam+wave&from=\(proof)")
        #expect(shown.status == 200)
        #expect(confirm.nodes("//p[contains(@class,'confirm-warning')]").isEmpty, "the admin's own form")
        let details = confirm.nodes("//p[@class='confirm-detail']").map(\.text).joined(separator: " | ")
        #expect(details.contains("4 posts and 2 replies will be removed"), "\(details)")
        #expect(details.contains("Seoul (5)") && details.contains("Busan (1)"), "\(details)")
        #expect(try chief.post("/admin/users/spammer/purge", [("duration", "permanent"), ("reason", "Spam wave")]).0.status == 303)

        #expect(try app.count("SELECT count(*) FROM posts p JOIN users u ON u.id = p.user_id WHERE u.username = 'spammer' AND p.removed_at IS NULL") == 0)
        #expect(try app.page("/city/seoul").1.count("//article[@data-author='spammer']") == 0, "gone from the kept page too")
        #expect(try app.page("/city/busan").1.count("//article[@data-author='spammer']") == 0)
        #expect(try app.page("/posts/\(question)").1.count("//article[@data-author='spammer']") == 0)
        #expect(try app.count("SELECT count(*) FROM moderation_log WHERE action = 'remove' AND username = 'spammer' AND reason = 'Spam wave'") == 6)
        #expect(try app.count("SELECT count(*) FROM moderation_log WHERE action = 'ban' AND username = 'spammer'") == 1)
        #expect(try app.count("SELECT count(*) FROM reports WHERE outcome = 'pending'") == 0)
        #expect(try app.count("SELECT count(*) FROM reports WHERE outcome = 'removed'") == 1)
        #expect(try NotificationTests.notices(asker).map(\.kind).contains("report_decided"))
        #expect(try spammer.postOnBoard("seoul", "Back again").0.headers["Location"]?.hasPrefix("/login") == true, "signed out")

        // Again: nothing left, a ban in force — nothing changes.
        let log = try app.count("SELECT count(*) FROM moderation_log")
        let bans = try app.count("SELECT count(*) FROM bans")
        try chief.get("/admin/users/spammer")
        #expect(try chief.post("/admin/users/spammer/purge", [("duration", "7d"), ("reason", "Spam wave")]).0.status == 303)
        #expect(try app.count("SELECT count(*) FROM moderation_log") == log)
        #expect(try app.count("SELECT count(*) FROM bans") == bans)
    }

    @Test func notAnAdminNotOneselfAndNotWithoutAReason() throws {
        let app = try AppHarness()
        let chief = app.browser()
        try chief.signUp("chief")
        try app.promoteToAdmin("chief")
        let deputy = app.browser()
        try deputy.signUp("deputy")
        try app.promoteToAdmin("deputy")
        let member = app.browser()
        try member.signUp("member")
        try chief.get("/admin/users/member")
        try member.get("/city/seoul")
        #expect(try chief.post("/admin/users/deputy/purge", [("duration", "7d"), ("reason", "x")]).0.status == 422)
        #expect(try chief.post("/admin/users/chief/purge", [("duration", "7d"), ("reason", "x")]).0.status == 422)
        #expect(try chief.post("/admin/users/member/purge", [("duration", "7d"), ("reason", " ")]).0.status == 422)
        #expect(try chief.post("/admin/users/member/purge", [("duration", "forever"), ("reason", "x")]).0.status == 422)
        #expect(try member.post("/admin/users/member/purge", [("duration", "7d"), ("reason", "x")]).0.status == 404, "members do not see the admin area")
        #expect(try app.count("SELECT count(*) FROM bans") == 0)
    }
}
