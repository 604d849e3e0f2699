import Foundation
import HTTPServer
import HTTPTestSupport
import Testing
@testable import Weatherboard

/// Issue 45 #4: a moderator pins up to two posts a board, with an expiry; pinned posts lead the
/// board for everyone, marked.
@Suite(.serialized, .onEveryEngine) struct PinTests {
    func boardIDs(_ browser: Browser) throws -> [(id: String, pinned: Bool)] {
        try browser.get("/city/seoul").1.nodes("//section[@id='board']//article[@data-post-id and not(@data-parent-id)]").map {
            ($0["data-post-id"] ?? "", $0["data-pinned"] != nil)
        }
    }

    @Test func pinnedPostsLeadTheBoardForEveryoneUntilTheyExpire() throws {
        let app = try AppHarness { $0.limits.secondsBetweenPosts = 0 }
        let chief = app.browser()
        try chief.signUp("chief")
        try app.promoteToAdmin("chief")
        let member = app.browser()
        try member.signUp("member")
        var ids: [Int64] = []
        for text in ["Umbrellas at the station", "Road closed by the river", "Fog this morning", "Newest of all"] {
            try member.postOnBoard("seoul", text)
            ids.append(Int64(try app.count("SELECT max(id) FROM posts")))
        }
        // Only an admin sees Pin; pinning the oldest two puts them first, marked, for everyone.
        #expect(try member.get("/city/seoul").1.nodes("//form[@class='inline pin-form']").isEmpty)
        try chief.get("/city/seoul")
        #expect(try chief.post("/admin/posts/\(ids[0])/pin", [("duration", "1d")]).0.status == 303)
        try chief.get("/city/seoul")
        #expect(try chief.post("/admin/posts/\(ids[1])/pin", [("duration", "permanent")]).0.status == 303)
        let guest = app.browser()
        let shown = try boardIDs(guest)
        #expect(shown.map(\.id) == [ids[1], ids[0], ids[3], ids[2]].map(String.init), "pinned first (newest pin first), then the rest, each once")
        #expect(shown.map(\.pinned) == [true, true, false, false])
        #expect(try boardIDs(member).map(\.id) == shown.map(\.id))
        // The feed keeps every post in its order, the pinned "until unpinned" one too.
        let feed = try MarkupDocument(try app.get("/city/seoul/feed.atom").body)
        #expect(feed.nodes("//*[local-name()='entry']/*[local-name()='id']").map(\.text)
                == ids.reversed().map { "tag:weatherboard,2026:post/\($0)" })
        // A third is refused while two are pinned.
        try chief.get("/city/seoul")
        #expect(try chief.post("/admin/posts/\(ids[2])/pin", [("duration", "7d")]).0.status == 409)
        // The first pin runs out a day later: the board read a minute before it shows it pinned,
        // a minute after it, in its place, though nothing was announced meanwhile.
        app.clock.advance(86_400 - 60)
        #expect(try boardIDs(guest).map(\.pinned) == [true, true, false, false])
        app.clock.advance(120)
        #expect(try boardIDs(guest).map(\.id) == [ids[1], ids[3], ids[2], ids[0]].map(String.init))
        #expect(try boardIDs(guest).map(\.pinned) == [true, false, false, false])
        try chief.get("/city/seoul")
        #expect(try chief.post("/admin/posts/\(ids[1])/unpin", []).0.status == 303)
        #expect(try boardIDs(guest).map(\.id) == [ids[3], ids[2], ids[1], ids[0]].map(String.init))
        // Members cannot pin.
        try member.get("/city/seoul")
        #expect(try member.post("/admin/posts/\(ids[2])/pin", [("duration", "7d")]).0.status == 404)
    }
}
