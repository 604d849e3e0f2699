import Foundation
import Testing
import HTTPTestSupport
@testable import Weatherboard

/// Issue 68 #4 and issue 65 #10: in a storm the page speaks with one voice: a dry sentence says
/// the warning in force, or the people reporting rain now, and the numbers on the bars say what
/// they count.
@Suite(.serialized, .onEveryEngine) struct StormVoiceTests {
    /// A dry forecast (10 % every hour) for `slug` from a stub Open-Meteo.
    static func site(_ slug: String, configure: @escaping (inout AppConfiguration) -> Void = { _ in }) throws -> (AppHarness, UpstreamStub) {
        let city = try #require(CityIndexTests.index.city(slug: slug))
        let stub = try UpstreamStub()
        stub.mode = .answer(try ThanYesterdayTests.answer(for: city, now: AppHarness.fixedNow, current: 10, feels: 10, yesterday: { _ in 10 }))
        let app = try AppHarness { configuration in
            configuration.weatherProviders = ["open-meteo"]
            configuration.openMeteoURL = stub.url
            configure(&configuration)
        }
        return (app, stub)
    }

    @Test func aWarningInForceTempersNoRain() throws {
        let nws = try NWSStub()
        try nws.alerts([])
        let (app, _) = try Self.site("los-angeles") { $0.warningsNWSURL = nws.url; $0.warningsEvery = 3600 }
        WarningTests.firstPoll(app)
        #expect(try app.page("/city/los-angeles").1.text("//*[@data-rain-summary]") == "No rain expected for the rest of today.")
        try nws.alerts([WarningAlertTests.flood()])
        app.application.warnings.poll()
        #expect(try app.page("/city/los-angeles").1.text("//*[@data-rain-summary]")
                == "No rain expected for the rest of today. Not in the forecast, but a Flash Flood Warning is in force.")
        #expect(try app.page("/city/los-angeles?lang=ko").1.text("//*[@data-rain-summary]")?
            .hasSuffix("예보엔 없지만 특보가 발효 중이에요: Flash Flood Warning.") == true)
    }

    @Test func peopleReportingRainNowTemperNoRainAndTheBarsSayWhatTheyCount() throws {
        let (app, _) = try Self.site("seoul")
        var (_, page) = try app.page("/city/seoul")
        #expect(page.text("//*[@data-rain-summary]") == "No rain expected for the rest of today.")
        #expect(page.nodes("//*[@class='rain-legend']").isEmpty)
        for name in ["wet_a", "wet_b", "wet_c"] {
            #expect(try app.browser().signUp(name).status == 303)
            // At 14:40 in Seoul: this hour's bar.
            try app.execute("""
                INSERT INTO posts (city_id, user_id, body, created_at, sky) SELECT c.id, u.id, 'Pouring here', ?, 'rain' FROM cities c, users u
                WHERE c.slug = 'seoul' AND u.username = ?
                """, [AppHarness.fixedNow.timeIntervalSince1970 - 300, name])
        }
        app.clock.advance(Surges.keptFor)
        (_, page) = try app.page("/city/seoul")
        #expect(page.text("//*[@data-rain-summary]") == "No rain expected for the rest of today. Not in the forecast, but 3 people report rain now.")
        #expect(page.text("//div[@data-day='today']//*[@class='rain-legend']") == "Numbers on the bars: people who reported rain or snow in that hour.")
    }
}
