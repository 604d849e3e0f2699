import Foundation
import Testing
import HTTPTestSupport
@testable import Weatherboard

/// Small things a person trips over: each fails without its fix.
@Suite(.serialized, .onEveryEngine) struct PolishTests {
    @Test func theFaviconAddressLeadsToTheIcon() throws {
        let app = try AppHarness()
        let response = try app.get("/favicon.ico")
        #expect(response.status == 301)
        #expect(response.headers["Location"] == "/static/favicon.svg")
        #expect(response.headers["Set-Cookie"] == nil)
        #expect(try app.get("/static/favicon.svg").status == 200)
    }

    @Test func anEmptyBoardsFeedIsDatedNowNot1970() throws {
        let app = try AppHarness()
        let feed = try MarkupDocument(try app.get("/city/busan/feed.atom").body, as: .xml)
        let updated = try #require(feed.text("/*[local-name()='feed']/*[local-name()='updated']"))
        #expect(updated == DateFormatting.iso8601(AppHarness.fixedNow))
    }

    @Test func theLimitCountsWhatTheServerCountsSoEmojiPostsReachIt() throws {
        let app = try AppHarness()
        let writer = app.browser()
        try writer.signUp("writer")
        let (_, page) = try writer.get("/city/seoul")
        // No `maxlength`: browsers count UTF-16 units there, and stopped 500 emoji at 250.
        let box = try #require(page.nodes("//textarea[@id='post-body']").first)
        #expect(box["maxlength"] == nil && box["data-limit"] == "500")
        let emoji = String(repeating: "🌧", count: 500)
        #expect(try writer.postOnBoard("seoul", emoji).0.status == 303)
        app.clock.advance(11)
        let (refused, again) = try writer.postOnBoard("seoul", emoji + "☔")
        #expect(refused.status == 422)
        #expect(again?.text("//textarea[@id='post-body']") == emoji + "☔", "the text comes back")
        let id = try app.count("SELECT id FROM posts")
        #expect(try writer.get("/posts/\(id)/edit").1.nodes("//textarea[@id='edit-body']").first?["data-limit"] == "500")
    }

    @Test func theAdminPageOfABannedPersonSaysSoInReadableTimes() throws {
        let app = try AppHarness()
        let (admin, _, _, _) = try app.reportedPost("reported words")
        try admin.get("/admin/users/author")
        try admin.post("/admin/users/author/ban", [("duration", "7d"), ("reason", "spam again"), ("return_to", "/admin/users/author")])
        let (_, page) = try admin.get("/admin/users/author")
        #expect(page.text("//p[@class='ban-status']") == "Banned until 29 Nov 2026 05:45 UTC: spam again")
        #expect(page.text("//ul[@class='bans']/li")?.hasPrefix("22 Nov 2026 05:45 UTC → 29 Nov 2026 05:45 UTC") == true)
        #expect(page.text("//ul[@class='reports-received']/li")?.hasSuffix("Waiting for a moderator") == true)
        let (_, log) = try admin.get("/admin/log")
        let time = try #require(log.nodes("//tr[@class='log-entry']//time").first)
        #expect(time["datetime"] == "2026-11-22T05:45:00Z")
        #expect(time.text == "22 Nov 2026 05:45 UTC")
    }
}

/// After an action: back where it started, with a word about what happened (once).
@Suite(.serialized, .onEveryEngine) struct ConfirmationTests {
    @Test func aReportOnBoardPageTwoReturnsThereWithAConfirmationShownOnce() throws {
        let app = try AppHarness()
        let author = app.browser()
        try author.signUp("talker")
        try app.inGoodStanding("talker")
        for n in 0..<22 {
            try author.postOnBoard("seoul", "post number \(n)")
            app.clock.advance(11)
        }
        let reader = app.browser()
        try reader.signUp("reader")
        let (_, first) = try reader.get("/city/seoul")
        let older = try #require(first.nodes("//a[@rel='next' or contains(@class,'older')]").first?["href"])
        let (_, second) = try reader.get(older)
        let post = try #require(second.nodes("//article[contains(@class,'post')]").first?["data-post-id"])
        let returnTo = try #require(second.nodes("//article[@data-post-id='\(post)']//form[contains(@action,'/report')]//input[@name='return_to']").first?["value"])
        #expect(returnTo.hasPrefix("/city/seoul?before="))
        let (reported, _) = try reader.post("/posts/\(post)/report", [("reason", "spam"), ("return_to", returnTo)])
        #expect(reported.status == 303)
        let location = try #require(reported.headers["Location"])
        #expect(location == returnTo + "#post-\(post)")
        let (_, back) = try reader.get(location)
        #expect(back.text("//div[@class='flash']") == "Thank you: your report went to the moderators.")
        let (_, again) = try reader.get(location)
        #expect(again.count("//div[@class='flash']") == 0)
    }

    @Test func blockingSaysSoAndOffersUndo() throws {
        let app = try AppHarness()
        let author = app.browser()
        try author.signUp("noisy")
        try author.postOnBoard("seoul", "loud words")
        let reader = app.browser()
        try reader.signUp("reader")
        try reader.get("/city/seoul")
        let (blocked, _) = try reader.post("/users/noisy/block", [("return_to", "/city/seoul")])
        let (_, page) = try reader.get(try #require(blocked.headers["Location"]))
        #expect(page.text("//div[@class='flash']/span") == "You blocked noisy: their posts are hidden from you.")
        #expect(page.count("//article[@data-author='noisy']") == 0)
        // Undo comes back to the page the block was made on (issue 26 #5), not to the person's profile.
        let undoFields = page.nodes("//div[@class='flash']//form[@action='/users/noisy/unblock']//input").map { ($0["name"] ?? "", $0["value"] ?? "") }
        #expect(undoFields.first { $0.0 == "return_to" }?.1 == "/city/seoul")
        let (undone, _) = try reader.post("/users/noisy/unblock", undoFields.filter { $0.0 == "return_to" })
        #expect(undone.headers["Location"] == "/city/seoul")
        let (_, after) = try reader.get(try #require(undone.headers["Location"]))
        #expect(after.text("//div[@class='flash']/span") == "You unblocked noisy.")
        #expect(try reader.get("/city/seoul").1.count("//article[@data-author='noisy']") == 1)
    }
}

/// Destructive actions ask first, on a page that works without JavaScript.
@Suite(.serialized, .onEveryEngine) struct AskFirstTests {
    @Test func deletingAPostAsksFirstThenDeletes() throws {
        let app = try AppHarness()
        let author = app.browser()
        try author.signUp("author")
        try author.postOnBoard("seoul", "soon gone")
        let id = try app.count("SELECT id FROM posts")
        let (_, board) = try author.get("/city/seoul")
        let form = try #require(board.nodes("//article[@data-post-id='\(id)']//form[@action='/posts/\(id)/delete']").first)
        #expect(form["method"] == "get") // the button leads to the question, it does not delete
        let (_, question) = try author.get("/posts/\(id)/delete")
        #expect(question.text("//blockquote[@class='confirm-quote']") == "soon gone")
        #expect(question.nodes("//form[@class='confirm-form']").first?["method"] == "post")
        #expect(try app.count("SELECT count(*) FROM posts") == 1)
        let (deleted, _) = try author.post("/posts/\(id)/delete", [])
        #expect(deleted.status == 303)
        #expect(try app.count("SELECT count(*) FROM posts") == 0)
        // someone else's post has no such page
        #expect(try app.browser().get("/posts/\(id)/delete").0.status != 200)
    }

    @Test func banningAsksFirstWithWhatWasTyped() throws {
        let app = try AppHarness()
        let admin = app.browser()
        try admin.signUp("chief")
        try app.promoteToAdmin("chief")
        let target = app.browser()
        try target.signUp("target")
        let (_, question) = try admin.get("/admin/users/target/ban?duration=7d&reason=spam%20again&return_to=/admin/users/target")
        #expect(question.nodes("//p[@class='confirm-detail']").map(\.text) == ["Duration: 7 days", "Reason: spam again"])
        let fields = Dictionary(uniqueKeysWithValues: question.nodes("//form[@class='confirm-form']/input[@type='hidden']").compactMap { node in
            node["name"].map { ($0, node["value"] ?? "") }
        })
        #expect(fields["duration"] == "7d" && fields["reason"] == "spam again" && fields["return_to"] == "/admin/users/target")
        #expect(try app.count("SELECT count(*) FROM bans") == 0)
        let (banned, _) = try admin.post("/admin/users/target/ban", [("duration", "7d"), ("reason", "spam again")])
        #expect(banned.status == 303)
        #expect(try app.count("SELECT count(*) FROM bans") == 1)
    }
}

/// Issue 26 #11: the smaller things a newcomer and a moderator trip over.
@Suite(.serialized, .onEveryEngine) struct SmallerThingsTests {
    @Test func editSaysHowLongItIsStillAllowed() throws {
        let app = try AppHarness()
        let author = app.browser()
        try author.signUp("writer")
        try author.postOnBoard("seoul", "Fog on the river")
        let id = try app.count("SELECT id FROM posts")
        app.clock.advance(3 * 60 + 10)
        let (_, board) = try author.get("/city/seoul")
        // Posted at 14:45 in Seoul: the board says until when (the same at every minute); a
        // page's script counts it down (BrowserJourneyTests).
        #expect(board.text("//article[@data-post-id='\(id)']//a[@href='/posts/\(id)/edit']") == "Edit · until 15:00")
        #expect(board.nodes("//span[@class='edit-left']").first?["data-edit-ends"] == "2026-11-22T06:00:00Z")
        let (_, edit) = try author.get("/posts/\(id)/edit")
        #expect(edit.text("//p[@id='edit-left']") == "You can edit this post for 12 more min.")
        #expect(edit.nodes("//textarea[@id='edit-body']").first?["data-count"] == "edit-count")
        #expect(edit.count("//span[@id='edit-count']") == 1)
        #expect(edit.count("//script[@src='/static/js/board.js']") == 1)
        author.acceptLanguage = "ko"
        #expect(try author.get("/city/seoul").1.text("//a[@href='/posts/\(id)/edit']") == "수정 · 15:00까지")
    }

    @Test func minutesLeftNeverTrapOnAStoredTimeFarOff() {
        let now = AppHarness.fixedNow
        #expect(PostingRules.editMinutesLeft(postedAt: now.addingTimeInterval(-60), now: now) == 14)
        #expect(PostingRules.editMinutesLeft(postedAt: Date(timeIntervalSince1970: 1e300), now: now) == 15)
        #expect(PostingRules.editMinutesLeft(postedAt: Date(timeIntervalSince1970: .nan), now: now) == 1)
        #expect(PostingRules.editMinutesLeft(postedAt: Date(timeIntervalSince1970: -1e300), now: now) == 1)
    }

    @Test func theQueueAndTheLogTellAModeratorWhatTheyNeed() throws {
        let app = try AppHarness()
        let (admin, author, _, postID) = try app.reportedPost("Cheap umbrellas at the station, best prices in Seoul today only")
        app.clock.advance(120)
        try author.postOnBoard("seoul", "Second advert")
        let (_, queue) = try admin.get("/admin")
        #expect(queue.text("//article[@data-post-id='\(postID)']//p[@data-author-history]") == "Their record: 2 posts in 2 min · 1 reported")
        // times become the moderator's own (the UTC text stays without scripts)
        #expect(queue.count("//article[@data-post-id='\(postID)']//time[@data-local-time]") == 3)
        #expect(queue.count("//script[@src='/static/js/local-time.js']") == 1)
        #expect(queue.nodes("//article[@data-post-id='\(postID)']//a[@class='in-place']").first?["href"] == "/city/seoul#post-\(postID)")
        try admin.post("/admin/users/author/ban", [("duration", "7d"), ("reason", "adverts"), ("return_to", "/admin")])
        #expect(try admin.get("/admin").1.text("//p[@data-author-history]")?.hasSuffix(" · banned now") == true)
        try admin.get("/admin/posts/\(postID)/remove?reason=Advertising")
        try admin.post("/admin/posts/\(postID)/remove", [("reason", "Advertising")])
        let (_, log) = try admin.get("/admin/log")
        let removal = try #require(log.nodes("//tr[@data-action='remove']").first)
        #expect(removal.text.contains("“Cheap umbrellas at the station, best prices in Seoul today only”"))
        #expect(log.nodes("//tr[@data-action='remove']//a[@href='/city/seoul']").first?.text == "Seoul")
        admin.acceptLanguage = "ko"
        #expect(try admin.get("/admin/log").1.nodes("//tr[@data-action='remove']//a[@href='/city/seoul']").first?.text == "서울")
    }
}
