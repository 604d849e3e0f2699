import Foundation
import Testing
import HTTPTestSupport
@testable import Weatherboard

/// Issue 67 #4: the home page shows where people are talking: the boards busy now, with what the
/// latest report said, without the people a member blocked; useful with no post yet.
@Suite(.serialized, .onEveryEngine) struct BusyBoardsTests {
    @Test func theHomePageShowsTheBoardsBusyNow() throws {
        let app = try AppHarness { $0.limits.secondsBetweenPosts = 0 }
        var (_, home) = try app.page("/")
        #expect(home.nodes("//*[@data-busy-boards]//*[@data-busy-city]").isEmpty)
        #expect(home.text("//*[@data-busy-boards]/p") == "Nobody has reported the sky in the last three hours yet. Open a city's board and say what you see.")
        for (name, city, sky) in [("ann", "busan", "rain"), ("bob", "busan", "rain"), ("cho", "seoul", "clear")] {
            let member = app.browser()
            try member.signUp(name)
            try member.get("/city/\(city)")
            #expect(try member.post("/city/\(city)/posts", [("body", "Out on the street now"), ("sky", sky), ("feels", "colder")]).0.status == 303)
            app.clock.advance(60)
        }
        app.clock.advance(31) // past a kept page's 30 s
        (_, home) = try app.page("/")
        let boards = home.nodes("//*[@data-busy-boards]//*[@data-busy-city]")
        #expect(boards.map { $0["data-slug"] } == ["seoul", "busan"], "the latest report first")
        #expect(boards.map { $0["data-reports"] } == ["1", "2"])
        #expect(boards.last?.text.hasPrefix("Busan Rain · Colder than forecast · 2 people reported · ") == true, "\(boards.last?.text ?? "")")
        let blocker = app.browser()
        try blocker.signUp("blocker")
        try blocker.get("/users/cho")
        #expect(try blocker.post("/users/cho/block", []).0.status == 303)
        #expect(try blocker.get("/").1.nodes("//*[@data-busy-city]").compactMap { $0["data-slug"] } == ["busan"], "not the people a member blocked")
        // The map of Korea on the page for a Korean reader, its figures the map page's; not on an
        // English reader's with no Korean bookmark.
        let korean = try app.page("/?lang=ko").1
        #expect(korean.text("//a[@data-map-link]") == "전국 지도: 어제보다 따뜻한 곳, 비 제보가 있는 곳")
        let marks = korean.nodes("//svg[@data-map]//*[@data-map-city]")
        #expect(marks.count >= 17)
        let mapPage = try app.page("/map?lang=ko").1
        #expect(marks.map { [$0["data-slug"], $0["data-high"], $0["data-diff"]] }
                == mapPage.nodes("//svg[@data-map]//*[@data-map-city]").map { [$0["data-slug"], $0["data-high"], $0["data-diff"]] })
        #expect(korean.nodes("//svg[@data-map]//*[@data-region='26']").first?["data-reports"] == "2")
        #expect(try app.page("/").1.nodes("//svg[@data-map]").isEmpty)
        let packed = try app.get("/?lang=ko", headers: [("Accept-Encoding", "gzip")])
        #expect(packed.body.count < 40_000, "the Korean home page with its map: \(packed.body.count) bytes gzipped")
    }
}
