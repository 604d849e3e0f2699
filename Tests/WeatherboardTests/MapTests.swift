import Foundation
import Testing
import HTTPTestSupport
@testable import Weatherboard

/// Issue 67 #3: the map of Korea: marks with the city pages' own figures, no number without a
/// kept forecast, regions shaded by reports (blocks applied), small enough for a phone.
@Suite(.serialized, .onEveryEngine) struct MapTests {
    @Test func theMapsFiguresAreTheCityPages() throws {
        let app = try AppHarness()
        var (response, page) = try app.page("/map")
        #expect(response.status == 200)
        let marks = page.nodes("//svg[@data-map]//*[@data-map-city]")
        #expect(marks.count >= 17, "a city in each 시/도 at least")
        #expect(marks.allSatisfy { $0["data-high"] == nil }, "nothing fetched yet: no numbers rather than a fetch per mark")
        #expect(page.nodes("//*[@data-map-list]/li").count == marks.count)
        // Each city page opened keeps its forecast; the map then shows the pages' figures.
        let slugs = marks.compactMap { $0["data-slug"] }
        for slug in slugs { _ = try app.get("/city/\(slug)") }
        (_, page) = try app.page("/map")
        for slug in slugs {
            let mark = try #require(page.nodes("//svg[@data-map]//*[@data-map-city][@data-slug='\(slug)']").first)
            let (_, city) = try app.page("/city/\(slug)")
            let today = try #require(city.nodes("//section[@data-day='today']").first?["data-high"].flatMap(Double.init))
            let yesterday = try #require(city.nodes("//section[@data-day='yesterday']").first?["data-high"].flatMap(Double.init))
            #expect(mark["data-high"] == String(Comparison.wholeDegrees(today)), "\(slug)")
            #expect(mark["data-diff"] == String(Comparison.wholeDegrees(today) - Comparison.wholeDegrees(yesterday)), "\(slug)")
            #expect(page.nodes("//*[@data-map-list]/li[@data-slug='\(slug)']").first?["data-high"] == mark["data-high"])
        }
        let seoul = try #require(page.nodes("//svg[@data-map]//*[@data-map-city][@data-slug='seoul']").first)
        let label = try #require(seoul.text.split(separator: "°").first)
        #expect(label == "Seoul \(seoul["data-high"] ?? "")")
        #expect(try app.page("/map?lang=ko").1.nodes("//*[@data-map-city][@data-slug='seoul']").first?.text.hasPrefix("서울 ") == true)
        // Small enough for a phone at once, gzip as browsers ask.
        let packed = try app.get("/map", headers: [("Accept-Encoding", "gzip")])
        #expect(packed.headers["Content-Encoding"] == "gzip" && packed.body.count < 40_000, "\(packed.body.count) bytes")
        #expect(try app.get("/map?hours=5").status == 400)
        #expect(try app.page("/").1.nodes("//a[@data-map-link][@href='/map']").count == 1)
        #expect(try app.page("/city/busan").1.nodes("//a[@data-map-link]").count == 1)
        #expect(try app.page("/city/tokyo").1.nodes("//a[@data-map-link]").isEmpty)
    }

    @Test func regionsAreShadedByReportsWithoutThePeopleAMemberBlocked() throws {
        let app = try AppHarness { $0.limits.secondsBetweenPosts = 0 }
        let reporter = app.browser()
        try reporter.signUp("reporter")
        try reporter.get("/city/busan")
        #expect(try reporter.post("/city/busan/posts", [("body", "Pouring at Haeundae"), ("sky", "rain")]).0.status == 303)
        func busan(_ page: MarkupDocument) -> String? { page.nodes("//svg[@data-map]//*[@data-region='26']").first?["data-reports"] }
        #expect(busan(try app.page("/map").1) == "1")
        #expect(busan(try app.page("/map?hours=1").1) == "1")
        app.clock.advance(2 * 3600)
        #expect(busan(try app.page("/map?hours=1").1) == "0", "an hour's switch counts the last hour")
        #expect(busan(try app.page("/map?hours=3").1) == "1")
        let blocker = app.browser()
        try blocker.signUp("blocker")
        try blocker.get("/users/reporter")
        #expect(try blocker.post("/users/reporter/block", []).0.status == 303)
        #expect(busan(try blocker.get("/map").1) == "0", "not the people a member blocked")
    }
}
