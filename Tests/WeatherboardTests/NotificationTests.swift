import Foundation
import HTTPTestSupport
import Testing
@testable import Weatherboard

/// Issue 22 #4: notifications — replies, mentions, agreement (grouped, never naming anyone),
/// decisions on reports, removals and restorations; nothing from a blocked person; the unread
/// count in every page's header; opening the list reads them; kept 90 days.
@Suite(.onEveryEngine) struct NotificationTests {
    static func unread(_ page: MarkupDocument) -> String? { page.nodes("//*[@data-unread]").first?["data-unread"] }

    static func notices(_ browser: Browser) throws -> [(kind: String, href: String, text: String)] {
        let (response, page) = try browser.get("/notifications")
        #expect(response.status == 200)
        let items = page.nodes("//li[@data-notification]"), links = page.nodes("//li[@data-notification]/a")
        #expect(items.count == links.count, "each notice links to what it is about")
        return zip(items, links).map { ($0["data-notification"] ?? "", $1["href"] ?? "", $1.text) }
    }

    @Test func aReplyAMentionAndAgreementAreToldAndOpeningTheListReadsThem() throws {
        let app = try AppHarness { $0.limits.secondsBetweenPosts = 0 }
        let (asker, postID) = try ConversationTests.question(app, "Is it this cold every November?")
        let friend = app.browser()
        try friend.signUp("friend")
        let answerer = app.browser()
        try answerer.signUp("answerer")
        #expect(Self.unread(try asker.get("/city/seoul").1) == "0")

        // A reply that also names the asker (told once, as a reply) and the friend (a mention).
        #expect(try ConversationTests.reply(answerer, to: postID, "Yes @asker, ask @friend too").0.status == 303)
        let replyID = Int64(try app.count("SELECT max(id) FROM posts"))
        #expect(Self.unread(try asker.get("/city/seoul").1) == "1")
        // Issue 61 #11: a link from another site opens the list and reads nothing.
        asker.fetchSite = "cross-site"
        let (fromElsewhere, elsewherePage) = try asker.get("/notifications")
        asker.fetchSite = "same-origin"
        #expect(fromElsewhere.status == 200 && elsewherePage.count("//li[@data-notification]") == 1)
        #expect(Self.unread(try asker.get("/city/seoul").1) == "1", "still unread after a cross-site GET")
        let askerNotices = try Self.notices(asker)
        #expect(askerNotices.map(\.kind) == ["reply"])
        #expect(askerNotices.first?.href == "/posts/\(postID)#post-\(replyID)")
        #expect(askerNotices.first?.text.contains("Answerer") == true)
        #expect(Self.unread(try asker.get("/city/seoul").1) == "0", "opening the list read them")
        #expect(try Self.notices(friend).map(\.kind) == ["mention"])
        // The mention links to the person's profile.
        let (_, conversation) = try app.page("/posts/\(postID)")
        #expect(conversation.nodes("//article[@data-post-id='\(replyID)']//a[@href='/users/friend']").count == 1)

        // Agreement, grouped per post while unread, naming nobody.
        try friend.get("/city/seoul")
        #expect(try friend.post("/posts/\(postID)/react", []).0.status == 303)
        try answerer.get("/city/seoul")
        #expect(try answerer.post("/posts/\(postID)/react", []).0.status == 303)
        #expect(Self.unread(try asker.get("/city/seoul").1) == "1")
        let agreed = try Self.notices(asker)
        #expect(agreed.first?.kind == "reaction")
        #expect(agreed.first?.text.hasPrefix("2 people agreed with your post in Seoul") == true)
        #expect(agreed.first?.text.contains("Friend") == false)

        // One's own reply tells nobody.
        try ConversationTests.reply(asker, to: postID, "Thanks both")
        #expect(Self.unread(try asker.get("/city/seoul").1) == "0")
        #expect(Self.unread(try answerer.get("/city/seoul").1) == "0", "a later reply to the same post is not the answerer's")
    }

    /// Found by a hostile tester: a notice kept the text of a post removed or hidden since, and
    /// agreement toggled on and off counted each "on" as another person.
    @Test func aNoticeShowsOnlyWhatItsReaderMayReadAndAgreementAsItStands() throws {
        let app = try AppHarness { $0.limits.secondsBetweenPosts = 0 }
        let friend = app.browser()
        try friend.signUp("friend")
        let (asker, postID) = try ConversationTests.question(app, "Secret text, mentioning @friend")
        try asker.postOnBoard("seoul", "Another, mentioning @friend")
        let second = Int64(try app.count("SELECT max(id) FROM posts"))
        try asker.postOnBoard("seoul", "A third, mentioning @friend")
        let (_, before) = try friend.get("/notifications")
        #expect(before.nodes("//li[@data-notification='mention']//p[contains(@class,'excerpt')]").map(\.text).contains("Secret text, mentioning @friend"))
        // Removed by a moderator; hidden by reports (threshold 3).
        let chief = app.browser()
        try chief.signUp("chief")
        try app.promoteToAdmin("chief")
        try chief.get("/admin")
        #expect(try chief.post("/admin/posts/\(postID)/remove", [("reason", "Spam")]).0.status == 303)
        try app.execute("UPDATE posts SET hidden_at = created_at WHERE id = ?", [second])
        let excerpts = try friend.get("/notifications").1.nodes("//li[@data-notification='mention']//p[contains(@class,'excerpt')]").map(\.text)
        #expect(excerpts.sorted() == ["", "", "A third, mentioning @friend"], "\(excerpts)")

        // One person agreeing on, off and on is one person; taking the last agreement back takes the notice back.
        let third = Int64(try app.count("SELECT max(id) FROM posts"))
        try friend.get("/city/seoul")
        for _ in 0..<3 { #expect(try friend.post("/posts/\(third)/react", []).0.status == 303) }
        #expect(try Self.notices(asker).first { $0.kind == "reaction" }?.text.hasPrefix("1 person agreed") == true)
        #expect(try friend.post("/posts/\(third)/react", []).0.status == 303)
        #expect(try friend.post("/posts/\(third)/react", []).0.status == 303)
        #expect(try friend.post("/posts/\(third)/react", []).0.status == 303) // off
        #expect(Self.unread(try asker.get("/city/seoul").1) == "0")
        #expect(try Self.notices(asker).filter { $0.kind == "reaction" }.isEmpty, "nobody agrees now")
    }

    @Test func nothingFromABlockedPersonAndBlockingRemovesWhatTheyCaused() throws {
        let app = try AppHarness { $0.limits.secondsBetweenPosts = 0 }
        let (asker, postID) = try ConversationTests.question(app)
        let pest = app.browser()
        try pest.signUp("pest")
        try ConversationTests.reply(pest, to: postID, "First")
        #expect(Self.unread(try asker.get("/city/seoul").1) == "1")
        try asker.get("/users/pest")
        #expect(try asker.post("/users/pest/block", []).0.status == 303)
        #expect(Self.unread(try asker.get("/city/seoul").1) == "0", "blocking took back what they caused")
        try ConversationTests.reply(pest, to: postID, "Second, @asker")
        try pest.get("/city/seoul")
        #expect(try pest.post("/posts/\(postID)/react", []).0.status == 303)
        #expect(try app.count("SELECT count(*) FROM reactions") == 1, "a blocked person's agreement still counts")
        #expect(Self.unread(try asker.get("/city/seoul").1) == "0")
        #expect(try Self.notices(asker).isEmpty)
    }

    @Test func decisionsAreToldToTheAuthorAndTheReportersAndNoticesAreKept90Days() throws {
        let app = try AppHarness()
        let scene = try app.reportedPost("Buy cheap umbrellas at example.com")
        try scene.admin.get("/admin")
        #expect(try scene.admin.post("/admin/posts/\(scene.postID)/remove", [("reason", "Advertising")]).0.status == 303)
        #expect(try Self.notices(scene.author).map(\.kind) == ["removed"])
        let reporterNotices = try Self.notices(scene.reporter)
        #expect(reporterNotices.map(\.kind) == ["report_decided"])
        #expect(reporterNotices.first?.href == "/posts/\(scene.postID)")
        try scene.admin.get("/admin")
        #expect(try scene.admin.post("/admin/posts/\(scene.postID)/restore", []).0.status == 303)
        #expect(try Self.notices(scene.author).map(\.kind) == ["restored", "removed"])

        for _ in 0..<4 { // 92 days, the author coming back often enough to stay signed in
            app.clock.advance(23 * 86_400)
            try scene.author.get("/settings")
        }
        #expect(try Self.notices(scene.author).isEmpty, "kept 90 days")
        #expect(try app.get("/notifications").status == 303, "members only")
    }
}
