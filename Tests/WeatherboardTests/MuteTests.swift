import Foundation
import HTTPServer
import HTTPTestSupport
import Testing
@testable import Weatherboard

/// Issue 45 #3: mute beside block. A member mutes a person for a day, a week or until they
/// unmute; that person's posts and replies come collapsed to them (`article[data-muted]` with a
/// `[data-show-muted]` button), they are told nothing by them, their posts neither stream to them
/// nor come up in their searches, and the muted person sees and does everything as before.
@Suite(.serialized, .onEveryEngine) struct MuteTests {
    /// Board articles of `path` as (id, muted, shows its body outside a hidden part).
    func articles(_ browser: Browser, _ path: String = "/city/seoul") throws -> [(id: String, muted: Bool, bodyShown: Bool)] {
        let page = try browser.get(path).1
        return page.nodes("//article[@data-post-id]").map { article in
            let id = article["data-post-id"] ?? ""
            let shown = page.count("//article[@data-post-id='\(id)']/p[@class='post-body']") == 1
            return (id, article["data-muted"] != nil, shown)
        }
    }

    func unread(_ browser: Browser) throws -> Int {
        let answer = try JSONSerialization.jsonObject(with: Data(try browser.get("/notifications/unread").0.body)) as? [String: Int]
        return answer?["unread"] ?? -1
    }

    /// Issue 65 #4: mute is in the post's More menu beside block, the duration said in the form,
    /// and it returns to the board with that person's posts collapsed; a muted person's post offers it no more.
    @Test func muteIsInThePostsMenuWithItsDurationSaid() throws {
        let app = try AppHarness { $0.limits.secondsBetweenPosts = 0 }
        let reader = app.browser(), loud = app.browser()
        try reader.signUp("reader")
        try loud.signUp("loud")
        try loud.postOnBoard("seoul", "BUY UMBRELLAS NOW cheap cheap")
        let loudPost = Int64(try app.count("SELECT max(id) FROM posts"))
        let (_, board) = try reader.get("/city/seoul")
        let menu = "//article[@data-post-id='\(loudPost)']//details[@class='post-menu']"
        #expect(board.count(menu + "//form[contains(@class,'block-form')]") == 1)
        let form = menu + "//form[@data-mute-form][@action='/users/loud/mute']"
        #expect(board.nodes(form + "//select[@name='duration']/option").map { $0["value"] ?? "" } == ["day", "week", "always"])
        #expect(board.text(form + "//label") == "Mute for")
        let returnTo = try #require(board.nodes(form + "//input[@name='return_to']").first?["value"])
        let (muted, _) = try reader.post("/users/loud/mute", [("return_to", returnTo), ("duration", "week")])
        #expect(muted.status == 303 && muted.headers["Location"] == "/city/seoul")
        let (_, after) = try reader.get("/city/seoul")
        #expect(after.nodes("//article[@data-post-id='\(loudPost)']").first?["data-muted"] != nil)
        #expect(after.count("//article[@data-post-id='\(loudPost)']//form[@data-mute-form]") == 0)
        #expect(try app.count("SELECT count(*) FROM mutes WHERE until IS NOT NULL") == 1)
    }

    @Test func aMutedPersonsPostsComeCollapsedToTheMuterAloneUntilTheMuteEnds() throws {
        let app = try AppHarness { $0.limits.secondsBetweenPosts = 0 }
        let reader = app.browser(), loud = app.browser(), other = app.browser()
        try reader.signUp("reader")
        try loud.signUp("loud")
        try other.signUp("other")
        try reader.postOnBoard("seoul", "Drizzle by the market")
        let readersPost = Int64(try app.count("SELECT max(id) FROM posts"))
        try loud.postOnBoard("seoul", "BUY UMBRELLAS NOW cheap cheap")
        let loudPost = Int64(try app.count("SELECT max(id) FROM posts"))
        try ConversationTests.reply(loud, to: readersPost, "Umbrellas for sale here")
        let loudReply = Int64(try app.count("SELECT max(id) FROM posts"))
        try reader.get("/city/seoul") // the board read before the mute, as a kept board would have it

        // The profile offers the three durations; a day's mute says until when, with Unmute.
        let profile = try reader.get("/users/loud").1
        #expect(profile.nodes("//form[@action='/users/loud/mute'][not(@data-mute-form)]//select[@name='duration']/option").compactMap { $0["value"] }
                == ["day", "week", "always"])
        let (muted, page) = try reader.post("/users/loud/mute", [("duration", "day")])
        #expect(muted.status == 303)
        let after = try reader.get(muted.headers["Location"] ?? "/users/loud").1
        #expect(after.nodes("//section[@class='profile']/form[@action='/users/loud/unmute']").count == 1)
        #expect(after.text("//*[@data-muted-until]")?.isEmpty == false)
        #expect(after.nodes("//div[contains(@class,'flash')]//form[@action='/users/loud/unmute']").count == 1, "the message's Undo unmutes")
        _ = page

        // To the reader: the post and the reply collapsed, each with its Show button and its body
        // in a hidden part; their own post as it was.
        let seen = try articles(reader)
        let byID = Dictionary(seen.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        #expect(byID[String(loudPost)]?.muted == true && byID[String(loudPost)]?.bodyShown == false)
        #expect(byID[String(loudReply)]?.muted == true)
        #expect(byID[String(readersPost)]?.muted == false && byID[String(readersPost)]?.bodyShown == true)
        let board = try reader.get("/city/seoul").1
        #expect(board.nodes("//article[@data-post-id='\(loudPost)']//button[@data-show-muted][@aria-controls='post-\(loudPost)-muted']").count == 1)
        #expect(board.nodes("//article[@data-post-id='\(loudPost)']//div[@id='post-\(loudPost)-muted'][@hidden]//p[@class='post-body']").count == 1)
        // The post's own page collapses the reply too.
        #expect(try articles(reader, "/posts/\(readersPost)").first { $0.id == String(loudReply) }?.muted == true)
        // Nobody else is affected: another member, a guest, and the muted person.
        for browser in [other, app.browser(), loud] {
            #expect(try articles(browser).allSatisfy { !$0.muted })
        }

        // They tell the reader nothing meanwhile: a reply, a mention, an agreement.
        let before = try unread(reader)
        try ConversationTests.reply(loud, to: readersPost, "@reader still selling")
        try loud.get("/city/seoul")
        #expect(try loud.post("/posts/\(readersPost)/react", []).0.status == 303)
        #expect(try unread(reader) == before)
        // Others still are told of the reader's... and the muted person still hears from the reader.
        try ConversationTests.reply(reader, to: loudPost, "No thanks @loud")
        #expect(try unread(loud) >= 1)

        // Searches leave them out; the muted person's own searches are untouched.
        #expect(try reader.get("/search/posts?q=umbrellas").1.nodes("//article[@data-post-id='\(loudPost)']").isEmpty)
        #expect(try other.get("/search/posts?q=umbrellas").1.nodes("//article[@data-post-id='\(loudPost)']").count == 1)

        // A day later the mute has ended by itself: the posts are shown again, and tell again.
        app.clock.advance(86_400 + 60)
        #expect(try articles(reader).allSatisfy { !$0.muted && ($0.bodyShown || $0.id != String(loudPost)) })
        #expect(try reader.get("/search/posts?q=umbrellas").1.nodes("//article[@data-post-id='\(loudPost)']").count == 1)
        #expect(try reader.get("/users/loud").1.nodes("//form[@action='/users/loud/mute'][not(@data-mute-form)]").count == 1)
        let quiet = try unread(reader)
        try ConversationTests.reply(loud, to: readersPost, "Back again")
        #expect(try unread(reader) == quiet + 1)
    }

    @Test func aMuteUntilUnmutedLastsAndUnmutingShowsThePostsAtOnce() throws {
        let app = try AppHarness { $0.limits.secondsBetweenPosts = 0 }
        let reader = app.browser(), loud = app.browser()
        try reader.signUp("reader")
        try loud.signUp("loud")
        try loud.postOnBoard("seoul", "Sunshine all week")
        try reader.get("/users/loud")
        #expect(try reader.post("/users/loud/mute", [("duration", "always")]).0.status == 303)
        for _ in 0..<15 { // a year and more, the reader coming back within their session's idle limit (30 days)
            app.clock.advance(25 * 86_400)
            #expect(try articles(reader).map(\.muted) == [true])
        }
        #expect(try reader.get("/users/loud").1.text("//*[@data-muted-until]")?.isEmpty == false)
        // Muting again for a day sets the new end.
        try reader.get("/users/loud")
        #expect(try reader.post("/users/loud/mute", [("duration", "week")]).0.status == 303)
        app.clock.advance(8 * 86_400)
        #expect(try articles(reader).map(\.muted) == [false])
        try reader.get("/users/loud")
        #expect(try reader.post("/users/loud/mute", [("duration", "week")]).0.status == 303)
        #expect(try articles(reader).map(\.muted) == [true])
        try reader.get("/users/loud")
        #expect(try reader.post("/users/loud/unmute", []).0.status == 303)
        #expect(try articles(reader).map(\.muted) == [false])
    }

    @Test func aMuteIsRefusedWithAReasonWhereItCannotBe() throws {
        let app = try AppHarness()
        let reader = app.browser(), chief = app.browser(), loud = app.browser()
        try reader.signUp("reader")
        try chief.signUp("chief")
        try app.promoteToAdmin("chief")
        try loud.signUp("loud")
        try reader.get("/users/loud")
        #expect(try reader.post("/users/loud/mute", [("duration", "forever")]).0.status == 422)
        #expect(try reader.post("/users/reader/mute", [("duration", "day")]).0.status == 400)
        #expect(try reader.post("/users/chief/mute", [("duration", "day")]).0.status == 403)
        #expect(try reader.get("/users/chief").1.nodes("//form[@action='/users/chief/mute']").isEmpty)
        #expect(try reader.get("/users/reader").1.nodes("//form[contains(@action,'/mute')]").isEmpty)
        #expect(try app.browser().get("/users/loud").1.nodes("//form[contains(@action,'/mute')]").isEmpty, "not for guests")
        #expect(try app.count("SELECT count(*) FROM mutes") == 0)
    }

    /// A muted person's new posts are not announced on the muter's open board; others' are.
    @Test func aMutedPersonsPostsDoNotStreamToTheMuter() throws {
        let app = try AppHarness { $0.limits.secondsBetweenPosts = 0 }
        let reader = app.browser(), loud = app.browser(), other = app.browser()
        try reader.signUp("reader")
        try loud.signUp("loud")
        try other.signUp("other")
        try reader.get("/users/loud")
        #expect(try reader.post("/users/loud/mute", [("duration", "day")]).0.status == 303)
        let muting = try reader.listen("/city/seoul/live")
        let guest = try app.browser().listen("/city/seoul/live")
        try loud.postOnBoard("seoul", "Hail!")
        let loudPost = #"{"type":"post","id":\#(try LiveTests.newest(app))}"#
        try other.postOnBoard("seoul", "Clear in Mapo")
        let marker = #"{"type":"post","id":\#(try LiveTests.newest(app))}"#
        #expect(try muting.events(through: marker) == [marker])
        #expect(try guest.events(through: marker) == [loudPost, marker])
    }
}
