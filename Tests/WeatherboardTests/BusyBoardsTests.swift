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
        let korean = try app.page("/?lang=ko").1
        #expect(korean.text("//a[@data-map-link]") == "전국 지도: 어제보다 따뜻한 곳, 비 제보가 있는 곳")
    }
}
