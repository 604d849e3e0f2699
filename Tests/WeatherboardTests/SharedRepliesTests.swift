import Foundation
import HTTPTestSupport
import Testing
@testable import Weatherboard

/// Issue 46 #1: a new reply reaches open pages without each of them rendering a page. live.js
/// fetches `GET /posts/{id}/replies?after=` (the replies after the last one it shows); that
/// fragment is rendered once for everyone with no part in the replies, and apart for a reader
/// with one (their own reply, someone they blocked, a moderator).
@Suite(.serialized, .onEveryEngine) struct SharedRepliesTests {
    /// The articles of a fragment, as bytes (what live.js puts on the page).
    static func articles(_ body: [UInt8]) -> [UInt8] {
        let text = String(decoding: body, as: UTF8.self)
        guard let start = text.range(of: "<div id=\"replies\">"), let end = text.range(of: "</div>", options: .backwards) else { return [] }
        return Array(text[start.upperBound..<end.lowerBound].utf8)
    }

    @Test func aNewReplyIsRenderedOnceForEveryoneWithNoPartInIt() throws {
        let app = try AppHarness { $0.limits.secondsBetweenPosts = 0; $0.limits.signUpsPerHour = 100 }
        let (asker, postID) = try ConversationTests.question(app)
        try ConversationTests.reply(asker, to: postID, "Anyone out there?")
        let first = Int64(try app.count("SELECT max(id) FROM posts"))
        let replier = app.browser()
        try replier.signUp("replier")
        try app.inGoodStanding("replier")
        try ConversationTests.reply(replier, to: postID, "Stopped in Mapo ten minutes ago")
        let reply = Int64(try app.count("SELECT max(id) FROM posts"))
        let address = "/posts/\(postID)/replies?after=\(first)"
        let shared = app.application.sharedReplies
        let before = shared.renders.load(ordering: .relaxed)

        // Ten guests and ten members with no part in it, as their open pages fetch it.
        var fragments: [String: Set<[UInt8]>] = ["guest": [], "member": []]
        for n in 0..<20 {
            let reader = app.browser()
            if n >= 10 { try reader.signUp("reader\(n)") }
            let (response, page) = try reader.get(address)
            #expect(response.status == 200)
            #expect(page.nodes("//div[@id='replies']/article[@data-post-id]").map { $0["data-post-id"] } == [String(reply)])
            fragments[n < 10 ? "guest" : "member", default: []].insert(response.body)
        }
        #expect(shared.renders.load(ordering: .relaxed) == before + 2, "one render for the guests, one for the members")
        #expect(fragments["guest"]?.count == 1 && fragments["member"]?.count == 1)

        // The very articles a guest's post page shows after the first reply.
        let guestPage = try app.browser().get("/posts/\(postID)?after=\(first)").0.body
        let guestArticles = Self.articles(try #require(fragments["guest"]?.first))
        #expect(!guestArticles.isEmpty && guestPage.firstRange(of: guestArticles) != nil)

        // Its author gets their own (with Delete); a moderator theirs; neither is the shared one.
        let own = try replier.get(address).1
        #expect(own.nodes("//article[@data-post-id='\(reply)']//form[contains(@class,'delete-form')]").count == 1)
        #expect(try app.browser().get(address).1.nodes("//form[contains(@class,'delete-form')]").isEmpty)
        let chief = app.browser()
        try chief.signUp("chief")
        try app.promoteToAdmin("chief")
        #expect(try chief.get(address).0.status == 200)
        #expect(shared.renders.load(ordering: .relaxed) == before + 4)

        // Someone who blocked its author never gets it.
        let blocker = app.browser()
        try blocker.signUp("blocker")
        try blocker.get("/users/replier")
        #expect(try blocker.post("/users/replier/block", []).0.status == 303)
        #expect(try blocker.get(address).1.nodes("//article[@data-post-id='\(reply)']").isEmpty)

        // A reply's own address is no conversation; nor is a post that is not there.
        #expect(try app.browser().get("/posts/\(reply)/replies").0.status == 404)
        #expect(try app.browser().get("/posts/999999/replies").0.status == 404)
    }
    /// What live.js fetches for each reply event now: the one reply as a bystander sees it,
    /// kept under its board's version. A second fetch reads nothing (no session, no rows); a
    /// change to the board (an agreement) makes the next one read again; what a bystander may
    /// not see is not there.
    @Test func aReplyAloneIsKeptForBystandersAndReadsNothingWhenKept() throws {
        let app = try AppHarness { $0.limits.secondsBetweenPosts = 0; $0.limits.signUpsPerHour = 100 }
        let (asker, postID) = try ConversationTests.question(app)
        let replier = app.browser()
        try replier.signUp("replier")
        try app.inGoodStanding("replier")
        try ConversationTests.reply(replier, to: postID, "Stopped in Mapo ten minutes ago")
        let reply = Int64(try app.count("SELECT max(id) FROM posts"))
        let seoul = Int64(try app.count("SELECT id FROM cities WHERE slug = 'seoul'"))
        let address = "/shared/cities/\(seoul)/replies/\(reply)"
        let member = app.browser()
        try member.signUp("bystander")
        let guest = app.browser()

        let (first, guestPage) = try guest.get(address)
        #expect(first.status == 200)
        #expect(guestPage.nodes("//div[@id='replies']/article[@data-post-id]").map { $0["data-post-id"] } == [String(reply)])
        #expect(guestPage.nodes("//form[contains(@class,'react')]").isEmpty, "a guest's form has no agree button")
        let memberPage = try member.get(address + "?as=member").1
        #expect(memberPage.nodes("//article[@data-post-id='\(reply)']//form[contains(@class,'react')]").count == 1)
        #expect(memberPage.nodes("//input[@name='csrf_token']").isEmpty && memberPage.nodes("//form[contains(@class,'delete-form')]").isEmpty)

        // Kept: the next fetches read nothing, with a session or without.
        let statements = app.application.database.statements.load(ordering: .relaxed)
        let renders = app.application.sharedReplies.renders.load(ordering: .relaxed)
        #expect(try guest.get(address).0.body == first.body)
        #expect(try member.get(address + "?as=member").0.status == 200)
        #expect(try asker.get(address + "?as=member").0.status == 200)
        #expect(app.application.database.statements.load(ordering: .relaxed) == statements)
        #expect(app.application.sharedReplies.renders.load(ordering: .relaxed) == renders)

        // An agreement changes the board: the next fetch shows the count.
        try member.get("/posts/\(postID)")
        #expect(try member.post("/posts/\(reply)/react", []).0.status == 303)
        #expect(try guest.get(address).1.text("//article[@data-post-id='\(reply)']//*[@data-reactions]") == "1")

        // Not in that city, not a reply, or hidden from bystanders: not there.
        let busan = Int64(try app.count("SELECT id FROM cities WHERE slug = 'busan'"))
        #expect(try guest.get("/shared/cities/\(busan)/replies/\(reply)").0.status == 404)
        #expect(try guest.get("/shared/cities/\(seoul)/replies/\(postID)").0.status == 404)
        try app.execute("UPDATE posts SET hidden_at = 1 WHERE id = ?", [reply])
        app.application.pageVersions.apply(.city(seoul)) // as the hiding write emits it
        #expect(try guest.get(address).0.status == 404)
    }
}
