import Foundation
import Testing
import HTTPTestSupport
@testable import Weatherboard

/// Issue 45's rough edges: post numbers never come back, a blocked person does not reply under
/// the blocker's posts, answering in one's own conversation is not paced, Undo in Korean.
@Suite(.serialized, .onEveryEngine) struct BoardEdgesTests {
    @Test func aDeletedNewestPostsNumberIsNeverGivenAgain() throws {
        let app = try AppHarness()
        let writer = app.browser()
        try writer.signUp("writer")
        try writer.postOnBoard("seoul", "Sleet at noon")
        let newest = Int64(try app.count("SELECT max(id) FROM posts"))
        try writer.get("/posts/\(newest)")
        #expect(try writer.post("/posts/\(newest)/delete", []).0.status == 303)
        app.clock.advance(11)
        try writer.postOnBoard("seoul", "Now snow")
        let next = Int64(try app.count("SELECT max(id) FROM posts"))
        #expect(next > newest, "the deleted post's number \(newest) was given again")
        #expect(try app.get("/posts/\(newest)").status == 404, "an old link names nothing")
    }

    /// A notice taken back leaves its number to no one: a mail or a push queued about it then
    /// names nothing, never a newer notice (SQLite gave the deleted newest id again).
    @Test func aNoticeTakenBacksNumberIsNeverGivenAgain() throws {
        let app = try AppHarness()
        let author = app.browser(), friend = app.browser()
        try author.signUp("author")
        try friend.signUp("friend")
        try author.postOnBoard("seoul", "Hail on the river")
        let postID = Int64(try app.count("SELECT max(id) FROM posts"))
        try friend.get("/city/seoul")
        #expect(try friend.post("/posts/\(postID)/react", []).0.status == 303)
        let told = try app.count("SELECT max(id) FROM notifications")
        #expect(try friend.post("/posts/\(postID)/react", []).0.status == 303)
        #expect(try app.count("SELECT count(*) FROM notifications") == 0, "taking it back took the notice back")
        #expect(try friend.post("/posts/\(postID)/react", []).0.status == 303)
        #expect(try app.count("SELECT max(id) FROM notifications") > told, "the notice's number \(told) was given again")
    }

    @Test func someoneBlockedDoesNotReplyUnderTheBlockersPosts() throws {
        let app = try AppHarness()
        let author = app.browser(), pest = app.browser(), friend = app.browser()
        try author.signUp("author")
        try pest.signUp("pest")
        try friend.signUp("friend")
        try author.postOnBoard("seoul", "Hail on the river")
        let postID = Int64(try app.count("SELECT max(id) FROM posts"))
        try ConversationTests.reply(pest, to: postID, "Before the block")
        try author.get("/users/pest")
        #expect(try author.post("/users/pest/block", []).0.status == 303)

        let (_, page) = try pest.get("/posts/\(postID)")
        #expect(page.count("//form[@action='/posts/\(postID)/replies']") == 0, "the reply form is gone")
        #expect(page.text("//p[@class='replies-closed']") == "The author of this post has blocked you: you cannot reply under it.")
        let (forged, refused) = try pest.post("/posts/\(postID)/replies", [("body", "Forged after the block")])
        #expect(forged.status == 403)
        #expect(refused?.nodes("//textarea[@id='kept-reply']").first?.text == "Forged after the block", "the text is kept")
        #expect(try app.count("SELECT count(*) FROM posts WHERE parent_id = ?", [postID]) == 1)
        // Their earlier reply stays for others, and others reply as before.
        let (_, seen) = try friend.get("/posts/\(postID)")
        #expect(seen.text("//article[@data-post-id]//p[contains(., 'Before the block')]") != nil)
        #expect(try ConversationTests.reply(friend, to: postID, "Here too").0.status == 303)
    }

    @Test func answeringInOnesOwnConversationIsNotPaced() throws {
        let app = try AppHarness()
        let author = app.browser(), neighbour = app.browser()
        try author.signUp("author")
        try neighbour.signUp("neighbour")
        try author.postOnBoard("seoul", "Fog on the bridge")
        let postID = Int64(try app.count("SELECT max(id) FROM posts"))
        app.clock.advance(11)
        try ConversationTests.reply(neighbour, to: postID, "Thick here too")
        // Within 10 s of their own post: the author answers in their conversation.
        #expect(try ConversationTests.reply(author, to: postID, "Stay safe").0.status == 303)
        // The neighbour, in someone else's conversation, is still paced.
        #expect(try ConversationTests.reply(neighbour, to: postID, "And again").0.status == 429)
    }

    @Test func undoSaysUndoInKorean() throws {
        let app = try AppHarness()
        let quiet = app.browser(), noisy = app.browser()
        try quiet.signUp("quiet")
        try noisy.signUp("noisy")
        try quiet.postOnBoard("seoul", "Windy")
        quiet.acceptLanguage = "ko"
        try quiet.get("/users/noisy?lang=ko")
        let (_, afterBlock) = try quiet.post("/users/noisy/block", [("return_to", "/city/seoul")])
        let (_, page) = try quiet.get("/city/seoul?lang=ko")
        _ = afterBlock
        #expect(page.text("//div[@class='flash']//form[contains(@action, '/unblock')]/button") == "되돌리기")
        #expect(page.nodes("//form[contains(@class, 'delete-form')]").first?["data-undo"] == "되돌리기")
    }
}
