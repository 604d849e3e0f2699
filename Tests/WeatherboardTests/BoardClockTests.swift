import Foundation
import Testing
@testable import Weatherboard

/// Issue 38: a board's render does not change with the minute. A post's time is written in its
/// city's time (a page's script words it "5 min ago"), so a kept board, a member's own included,
/// is rendered again only when its rows change or when something it decided by the clock would
/// be decided otherwise: the edit window's end, a report's undo, a pin.
@Suite(.serialized, .onEveryEngine) struct BoardClockTests {
    @Test func aMembersOwnBoardIsNotRenderedAgainBecauseTheMinuteTurned() throws {
        let app = try AppHarness()
        let author = app.browser()
        try author.signUp("writer")
        try author.postOnBoard("seoul", "Fog on the river")
        let id = try app.count("SELECT id FROM posts")
        app.clock.advance(20 * 60) // past the edit window: nothing on the board reads the clock
        let (_, first) = try author.get("/city/seoul")
        let made = app.application.boards.made.load(ordering: .relaxed)
        // The harness's now is 22 Nov 2026 05:45 UTC: 14:45 in Seoul.
        let time = first.nodes("//article[@data-post-id='\(id)']//time").first
        #expect(time?.text == "22 Nov 14:45")
        #expect(time?["datetime"] == "2026-11-22T05:45:00Z" && time?["data-ago"] != nil)
        #expect(first.count("//article[@data-post-id='\(id)']//span[@data-mine]") == 1)
        app.clock.advance(7 * 60)
        let (_, later) = try author.get("/city/seoul")
        #expect(app.application.boards.made.load(ordering: .relaxed) == made, "rendered again when only the minute changed")
        #expect(later.text("//article[@data-post-id='\(id)']//time") == "22 Nov 14:45")
        // Every page showing posts words their times for the reader (times.js, with the page's words).
        for page in ["/city/seoul", "/posts/\(id)", "/users/writer"] {
            let (_, document) = try author.get(page)
            #expect(document.text("//article[@data-post-id='\(id)']//time") == "22 Nov 14:45", "\(page)")
            #expect(document.nodes("//script[@src='/static/js/times.js']").first?["data-minutes"] == "{n} min ago", "\(page)")
        }
        author.acceptLanguage = "ko"
        #expect(try author.get("/city/seoul").1.text("//article[@data-post-id='\(id)']//time") == "11월 22일 14:45")
    }

    @Test func aKeptBoardClosesTheEditWindowWhenItEnds() throws {
        let app = try AppHarness()
        let author = app.browser()
        try author.signUp("writer")
        try author.postOnBoard("seoul", "Fog on the river")
        let id = try app.count("SELECT id FROM posts")
        let edit = "//article[@data-post-id='\(id)']//a[@href='/posts/\(id)/edit']"
        app.clock.advance(3 * 60 + 10)
        #expect(try author.get("/city/seoul").1.text(edit) == "Edit · until 15:00")
        let made = app.application.boards.made.load(ordering: .relaxed)
        app.clock.advance(6 * 60) // within the kept rows' ten minutes (BoardSnapshots.maximumAge)
        #expect(try author.get("/city/seoul").1.text(edit) == "Edit · until 15:00")
        #expect(app.application.boards.made.load(ordering: .relaxed) == made, "rendered again within the window")
        app.clock.advance(5 * 60 + 49) // 14:59:59 in Seoul
        #expect(try author.get("/city/seoul").1.text(edit) == "Edit · until 15:00")
        app.clock.advance(1)
        #expect(try author.get("/city/seoul").1.count(edit) == 0)
    }

    @Test func aReportsUndoGoesWhenItsTenMinutesAreOver() throws {
        let app = try AppHarness()
        let author = app.browser(), reader = app.browser()
        try author.signUp("writer")
        try author.postOnBoard("seoul", "Buy cheap umbrellas at example.com")
        let id = try app.count("SELECT id FROM posts")
        try reader.signUp("reader")
        #expect(try reader.post("/posts/\(id)/report", [("reason", "spam"), ("return_to", "/city/seoul")]).0.status == 303)
        let undo = "//form[@action='/posts/\(id)/report/withdraw']"
        app.clock.advance(9 * 60)
        #expect(try reader.get("/city/seoul").1.count(undo) == 1)
        app.clock.advance(61)
        let (_, after) = try reader.get("/city/seoul")
        #expect(after.count(undo) == 0)
        #expect(after.count("//article[@data-post-id='\(id)']//p[@class='reported-placeholder']") == 1)
    }
}
