import Foundation
import HTTPServer
import HTTPTestSupport
import Testing
@testable import Weatherboard

/// Issue 45 #6: removals, bans and "remove everything and ban" could not be taken back from the
/// interface, and moderators saw no count of waiting reports.
@Suite(.serialized, .onEveryEngine) struct UndoModerationTests {
    /// The posts' texts on Seoul's board, as a guest sees it.
    func board(_ app: AppHarness) throws -> [String] {
        try app.page("/city/seoul").1.nodes("//p[@class='post-body']").map(\.text)
    }

    /// The log entry's undo form, filled with `reason` and sent.
    func undo(_ admin: Browser, action: String, username: String, reason: String) throws -> WireResponse {
        let (_, log) = try admin.get("/admin/log")
        let form = try #require(log.nodes("//tr[@data-action='\(action)'][.//a[text()='\(username)']]//form[@class='undo-form']").first)
        let action = try #require(form["action"])
        return try admin.post(action, [("reason", reason)]).0
    }

    /// Issue 65 #5: the header's number counts photos waiting for a look too, each post once.
    @Test func photosWaitingCountInTheHeadersNumber() throws {
        let app = try AppHarness()
        let scene = try app.reportedPost("Fog at dawn over the river")
        let waiting = { try scene.admin.get("/admin").1.nodes("//*[@data-reports-waiting]").first?["data-reports-waiting"] }
        #expect(try waiting() == "1")
        try app.execute("UPDATE posts SET photo_state = 'waiting' WHERE id = ?", [scene.postID])
        #expect(try waiting() == "1", "the reported post with its photo waiting is one post")
        app.clock.advance(60) // past the pause between posts
        try scene.author.postOnBoard("seoul", "Sunset over the bridge")
        try app.execute("UPDATE posts SET photo_state = 'waiting' WHERE id = (SELECT max(id) FROM posts)")
        #expect(try waiting() == "2")
    }

    @Test func aRemovalIsUndoneFromItsLogEntryAndTheUndoIsLogged() throws {
        let app = try AppHarness()
        let scene = try app.reportedPost("Fog at dawn over the river")
        // The header counts the post waiting, on every admin page.
        #expect(try scene.admin.get("/city/seoul").1.nodes("//*[@data-reports-waiting]").first?["data-reports-waiting"] == "1")
        #expect(try scene.author.get("/city/seoul").1.nodes("//*[@data-reports-waiting]").isEmpty, "only admins see it")
        try scene.admin.get("/admin")
        #expect(try scene.admin.post("/admin/posts/\(scene.postID)/remove", [("reason", "Off topic")]).0.status == 303)
        #expect(try scene.admin.get("/admin").1.nodes("//*[@data-reports-waiting]").first?["data-reports-waiting"] == "0")
        #expect(!(try board(app).contains("Fog at dawn over the river")))

        #expect(try undo(scene.admin, action: "remove", username: "author", reason: "It was about the weather after all").status == 303)
        #expect(try board(app).contains("Fog at dawn over the river"))
        #expect(try app.count("SELECT count(*) FROM moderation_log WHERE action = 'restore' AND reason = 'It was about the weather after all'") == 1)
        // Undone once: a second time changes nothing.
        #expect(try undo(scene.admin, action: "remove", username: "author", reason: "again").status == 303)
        #expect(try app.count("SELECT count(*) FROM moderation_log WHERE action = 'restore'") == 1)
        // Without a reason, nothing happens.
        let (_, log) = try scene.admin.get("/admin/log")
        let action = try #require(log.nodes("//tr[@data-action='remove']//form[@class='undo-form']").first?["action"])
        #expect(try scene.admin.post(action, [("reason", "")]).0.status == 422)
    }

    @Test func removeEverythingAndBanIsUndoneWholeFromTheBansEntry() throws {
        let app = try AppHarness { $0.limits.secondsBetweenPosts = 0 }
        let chief = app.browser()
        try chief.signUp("chief")
        try app.promoteToAdmin("chief")
        let pest = app.browser()
        try pest.signUp("pest")
        for text in ["First loud post", "Second loud post", "Third loud post"] { try pest.postOnBoard("seoul", text) }
        try chief.get("/admin/users/pest")
        #expect(try chief.post("/admin/users/pest/purge", [("duration", "permanent"), ("reason", "Spam")]).0.status == 303)
        #expect(try app.count("SELECT count(*) FROM posts WHERE removed_at IS NOT NULL") == 3)
        #expect(try app.count("SELECT count(*) FROM bans WHERE lifted_at IS NULL") == 1)

        #expect(try undo(chief, action: "ban", username: "pest", reason: "Wrong person").status == 303)
        #expect(try app.count("SELECT count(*) FROM posts WHERE removed_at IS NOT NULL") == 0, "every post is back")
        #expect(try app.count("SELECT count(*) FROM bans WHERE lifted_at IS NULL") == 0, "the ban is lifted")
        #expect(try app.count("SELECT count(*) FROM moderation_log WHERE action = 'restore' AND reason = 'Wrong person'") == 3)
        #expect(try app.count("SELECT count(*) FROM moderation_log WHERE action = 'unban' AND reason = 'Wrong person'") == 1)
        let shown = try board(app)
        #expect(shown.contains("First loud post") && shown.contains("Third loud post"))
    }
}
