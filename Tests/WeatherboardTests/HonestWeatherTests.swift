import Foundation
import Testing
import HTTPTestSupport
@testable import Weatherboard

/// What the weather part of a page claims must hold: differences between the numbers shown,
/// gaps that look like gaps, no answer of nulls taken for a forecast, old data said to be old.
/// The stub Open-Meteo answers the recorded Seoul forecast (local days 2026-11-21…26; the
/// harness's clock is 2026-11-22 14:45 in Seoul) with the values each test changes.
@Suite(.serialized, .onEveryEngine) struct HonestWeatherTests {
    /// The recorded answer with its first daily highs (and lows) replaced, index 0 = yesterday.
    static func answer(highs: [Double?], lows: [Double?] = []) throws -> [UInt8] {
        try UpstreamStub.recorded { object in
            var daily = object["daily"] as? [String: Any] ?? [:]
            for (field, values) in [("temperature_2m_max", highs), ("temperature_2m_min", lows)] {
                var column = daily[field] as? [Any] ?? []
                for (index, value) in values.enumerated() where index < column.count { column[index] = value as Any? ?? NSNull() }
                daily[field] = column
            }
            object["daily"] = daily
        }
    }

    @Test func theHeadlineComparesTheNumbersTheCardsShow() throws {
        let stub = try UpstreamStub()
        // yesterday 11.6 → 12, today 12.4 → 12: the same, though the raw figures differ by 0.8;
        // tomorrow 12.5 → 13 (halves away from zero): one warmer, though 0.1 apart.
        stub.mode = .answer(try Self.answer(highs: [11.6, 12.4, 12.5, 6, 5, 4]))
        let app = try AppHarness { $0.weatherProviders = ["open-meteo"]; $0.openMeteoURL = stub.url }
        let (_, page) = try app.page("/city/seoul")
        #expect(page.text("//section[@data-day='yesterday']//span[@class='high']") == "High 12°")
        #expect(page.text("//section[@data-day='today']//span[@class='high']") == "High 12°")
        #expect(page.text("//section[@data-day='tomorrow']//span[@class='high']") == "High 13°")
        #expect(page.text("//p[@class='headline']") == "About the same as yesterday")
        // the recorded tomorrow has rain at 80 %, today none: the line says so (issue 25 #1)
        #expect(page.text("//p[@class='tomorrow-line']") == "Tomorrow: 1° warmer than today, with rain likely")
    }

    @Test func belowZeroHalvesRoundAwayFromZero() {
        #expect(Comparison.wholeDegrees(-0.5) == -1)
        #expect(Comparison.wholeDegrees(-0.4) == 0)
        #expect(Comparison.wholeDegrees(2.5) == 3)
        #expect(Comparison.phrase(today: -0.5, reference: 0.4) == ("compare_colder", 1))
    }

    @Test func anAnswerOfNullsIsAFailureNotAForecast() throws {
        let stub = try UpstreamStub()
        stub.mode = .answer(try Self.answer(highs: Array(repeating: nil, count: 9), lows: Array(repeating: nil, count: 9)))
        let alone = try AppHarness { $0.weatherProviders = ["open-meteo"]; $0.openMeteoURL = stub.url }
        let (_, page) = try alone.page("/city/seoul")
        #expect(page.count("//p[@class='weather-unavailable']") == 1)
        #expect(try alone.count("SELECT count(*) FROM weather_cache") == 0) // nothing cached to block a retry
        let withFallback = try AppHarness { $0.weatherProviders = ["open-meteo", "demo"]; $0.openMeteoURL = stub.url }
        let (_, fallbackPage) = try withFallback.page("/city/seoul")
        #expect(fallbackPage.nodes("//p[@class='provenance']").first?["data-source"] == "demo")
    }

    @Test func aMissingValueHasTheNeutralColourNotZeroDegrees() throws {
        let stub = try UpstreamStub()
        stub.mode = .answer(try Self.answer(highs: [9, 12.5, 8.2, nil, 5, 4]))
        let app = try AppHarness { $0.weatherProviders = ["open-meteo"]; $0.openMeteoURL = stub.url }
        let (_, page) = try app.page("/city/seoul")
        let gap = try #require(page.nodes("//section[@class='strip']//li[@data-date='2026-11-24']").first)
        #expect(gap.text.contains("–°"))
        #expect(page.nodes("//section[@class='strip']//li[@data-date='2026-11-24']/span[contains(@class,'chip')]").first?["class"] == "chip chip-none")
        #expect(String(decoding: try app.get("/palette.css").body, as: UTF8.self).contains(".chip-none{background:#B8BEC6}"))
    }

    @Test func oldDataSaysHowOldAndIsNotShownAsNow() throws {
        let stub = try UpstreamStub()
        let app = try AppHarness { $0.weatherProviders = ["open-meteo"]; $0.openMeteoURL = stub.url }
        // Each look at another page of the board (`?before=`): a guest's kept copy is not reused.
        var look = 1_000_000
        func another() -> String { look += 1; return "/city/seoul?before=\(look)" }
        let (_, fresh) = try app.page(another())
        #expect(fresh.text("//p[@class='provenance']")?.hasPrefix("Open-Meteo · updated 14:45") == true)
        #expect(fresh.count("//section[@data-day='today']//p[@class='now']") == 1)
        // The next morning in Seoul, the provider down: the last data, said to be 20 hours old,
        // and no "now" reading from yesterday afternoon.
        stub.mode = .unavailable
        app.clock.advance(20 * 3600)
        _ = try app.page(another()) // starts the refresh that fails
        try waitUntil("the failed refresh is known") {
            try app.page(another()).1.nodes("//p[@class='provenance']").first?["data-source"] == "cache"
        }
        let (_, stale) = try app.page(another())
        #expect(stale.text("//p[@class='provenance']")?.hasPrefix("Open-Meteo · last updated 20 h ago") == true)
        #expect(stale.count("//section[@data-day='today']//p[@class='now']") == 0)
        // Past a day, old data is not shown at all.
        app.clock.advance(5 * 3600)
        let (_, gone) = try app.page(another())
        #expect(gone.count("//p[@class='weather-unavailable']") == 1)
    }
}

@Suite(.serialized, .onEveryEngine) struct HonestHomePageTests {
    @Test func everyFigureOnTheHomePageSaysWhereItCameFromAndDemoSaysDemo() throws {
        let stub = try UpstreamStub()
        // Seoul answers from the provider; the cities after it get the demo fallback once the
        // provider fails.
        let app = try AppHarness { $0.weatherProviders = ["open-meteo", "demo"]; $0.openMeteoURL = stub.url }
        _ = try app.page("/city/seoul")
        stub.mode = .unavailable
        let (_, page) = try app.page("/")
        let seoul = try #require(page.nodes("//li[@data-slug='seoul']/p[contains(@class,'city-source')]").first)
        #expect(seoul["data-source"] == "open-meteo")
        #expect(seoul.text.hasPrefix("Open-Meteo · updated 14:45"))
        #expect(page.text("//li[@data-slug='seoul']//span[@class='city-temp-label']") == "now")
        let demoRows = page.nodes("//li[@class='city-row']/p[contains(@class,'city-source')][@data-source='demo']")
        #expect(demoRows.count == 4)
        #expect(demoRows.allSatisfy { $0["class"] == "city-source demo" && $0.text.hasPrefix("Demo data") })
        // the footer credits what this site can show: Open-Meteo and demo figures, not the KMA
        let footer = try #require(page.text("//footer"))
        #expect(footer.contains("Open-Meteo") && footer.contains("Demo data") && !footer.contains("Korea Meteorological"))
    }

    /// Issue 25 #6 and #2: when the weather service is down the home page says so in words (not
    /// grey dots alone) and a city page waiting for its first forecast is marked to look again;
    /// beside "now", the day's change says it compares the highs.
    @Test func weatherDownIsSaidInWordsAndTheChangeSaysWhatItCompares() throws {
        let stub = try UpstreamStub()
        stub.mode = .unavailable
        let down = try AppHarness { $0.weatherProviders = ["open-meteo"]; $0.openMeteoURL = stub.url }
        let (_, home) = try down.page("/")
        let rows = home.nodes("//li[@class='city-row']")
        #expect(rows.count == 5)
        #expect(home.nodes("//li[@class='city-row']//span[@class='city-temp missing']").map(\.text).allSatisfy { $0 == "No weather right now" })
        #expect(home.count("//li[@class='city-row']//span[@class='city-temp missing']") == 5)
        let (_, korean) = try down.page("/?lang=ko")
        #expect(korean.text("//li[@data-slug='seoul']//span[@class='city-temp missing']") == "지금은 날씨를 가져오지 못했어요")
        let (_, city) = try down.page("/city/busan")
        #expect(city.count("//p[@class='weather-unavailable'][@data-weather-pending]") == 1)

        let up = try AppHarness()
        let (_, fine) = try up.page("/")
        #expect(fine.count("//span[@class='city-temp missing']") == 0)
        #expect(fine.text("//li[@data-slug='seoul']//span[@class='city-change']")?.hasSuffix("(daily highs)") == true)
        let (_, seoul) = try up.page("/city/seoul")
        #expect(seoul.count("//*[@data-weather-pending]") == 0)
    }

    @Test func withoutAFreshReadingTheHomePageShowsTodaysHighAndSaysSo() throws {
        let stub = try UpstreamStub()
        stub.mode = .answer(try UpstreamStub.recorded { $0["current"] = nil })
        let app = try AppHarness { $0.weatherProviders = ["open-meteo"]; $0.openMeteoURL = stub.url }
        let (_, page) = try app.page("/")
        #expect(page.text("//li[@data-slug='seoul']//span[@class='city-temp-label']") == "High")
        #expect(page.text("//li[@data-slug='seoul']//span[@class='city-temp']") == "High 13°")
    }
}

/// Which failures stop the service asking a provider, and how long fallback data stands.
extension WeatherServiceTests {
    @Test func oneCitysUnusableAnswerDoesNotStopTheProviderForOthers() throws {
        let stub = try UpstreamStub()
        let weather = try service(stub, clock: TestClock(AppHarness.fixedNow))
        stub.mode = .answer(try HonestWeatherTests.answer(highs: Array(repeating: nil, count: 9)))
        #expect(weather.report(for: seoul)?.source == "demo") // Seoul's answer was nulls: the fallback
        stub.mode = .ok
        #expect(weather.report(for: busan)?.source == "open-meteo") // the provider was still asked
    }

    @Test func anAnswerForAnotherTimeZoneIsRefused() throws {
        let stub = try UpstreamStub()
        stub.mode = .answer(try UpstreamStub.recorded { $0["utc_offset_seconds"] = 0 })
        let weather = try service(stub, fallback: false, clock: TestClock(AppHarness.fixedNow))
        #expect(weather.report(for: seoul) == nil) // Seoul is UTC+9: these local days would be wrong
    }

    /// Issue 62 #5: one city's unusable answer was asked for again on nearly every view (2,349
    /// calls in 13 minutes). The city is not asked of that provider again until a back-off ends,
    /// 1 min, then 2, 4 … at most an hour; a usable answer ends it; other cities are asked as usual.
    @Test func aCitysUnusableAnswerIsAskedForAgainOnlyAfterAGrowingBackOff() throws {
        let stub = try UpstreamStub()
        stub.mode = .answer(try UpstreamStub.recorded { $0["utc_offset_seconds"] = 0 })
        let clock = TestClock(AppHarness.fixedNow)
        let weather = try service(stub, fallback: false, clock: clock)
        func views(_ count: Int) throws {
            for _ in 0..<count {
                _ = weather.report(for: seoul)
                try waitUntil("the fetch landed") { !weather.isFetching(seoul) }
            }
        }
        try views(20)
        #expect(stub.hits == 1, "one call, then the back-off")
        clock.advance(61)
        try views(20)
        #expect(stub.hits == 2)
        clock.advance(61) // the second back-off is two minutes
        try views(5)
        #expect(stub.hits == 2)
        clock.advance(60)
        try views(5)
        #expect(stub.hits == 3)
        // Another city is asked as usual meanwhile (its answer is usable: Busan's offset is Seoul's).
        stub.mode = .ok
        #expect(weather.report(for: busan)?.source == "open-meteo")
        #expect(stub.hits == 4)
        // Past the back-off a usable answer ends it.
        clock.advance(241)
        #expect(weather.report(for: seoul)?.source == "open-meteo")
        #expect(stub.hits == 5)
    }

    @Test func fallbackDataGivesWayToThePreferredProviderSoonAfterItRecovers() throws {
        let stub = try UpstreamStub()
        stub.mode = .unavailable
        let clock = TestClock(AppHarness.fixedNow)
        let weather = try service(stub, clock: clock)
        #expect(weather.report(for: seoul)?.source == "demo")
        stub.mode = .ok
        clock.advance(WeatherService.fallbackFreshFor + 1) // well inside the 30 minutes preferred data stays fresh
        try waitUntil("the preferred provider's data replaces the demo figures") { weather.report(for: seoul)?.source == "open-meteo" }
    }

    /// Issue 37 #3: one timeout used to replace a city's real (stale) forecast with demo figures.
    /// Through an outage of hours the city keeps its last real forecast, said to be from the cache.
    @Test func aRealForecastOutlivesAnOutageAndDemoFiguresNeverReplaceIt() throws {
        let stub = try UpstreamStub()
        let clock = TestClock(AppHarness.fixedNow)
        let weather = try service(stub, clock: clock)
        let real = try #require(weather.report(for: seoul))
        #expect(real.source == "open-meteo")
        stub.mode = .unavailable
        for _ in 0..<6 { // 6 × 31 minutes: every visit finds it stale and starts a refresh that fails
            clock.advance(31 * 60)
            _ = weather.report(for: seoul)
            try waitUntil("the refresh has landed") { !weather.isFetching(seoul) }
            let shown = try #require(weather.report(for: seoul))
            #expect(shown.source == "cache")
            #expect(shown.forecast.fetchedAt == real.forecast.fetchedAt, "the real forecast, with its age")
        }
        // A city that never had real data gets demo figures in the same outage.
        clock.advance(61)
        #expect(weather.report(for: busan)?.source == "demo")
    }

    /// Issue 37 #3: demo figures stayed until the first visit 5 minutes after they were made,
    /// even once the upstream was back; now the next refresh after the breaker's minute asks it.
    @Test func demoFiguresGiveWayToTheFirstRefreshAfterTheUpstreamRecovers() throws {
        let stub = try UpstreamStub()
        stub.mode = .unavailable
        let clock = TestClock(AppHarness.fixedNow)
        let weather = try service(stub, clock: clock)
        #expect(weather.report(for: seoul)?.source == "demo")
        // Still failing a minute later: the demo figures are kept, not made and stored again.
        clock.advance(WeatherService.demoFreshFor + 1)
        _ = weather.report(for: seoul)
        try waitUntil("the refresh has landed") { !weather.isFetching(seoul) }
        #expect(stub.hits == 2)
        #expect(weather.report(for: seoul)?.source == "demo")
        // Back, and the next visit after the breaker's minute (well inside 5 minutes) brings it.
        stub.mode = .ok
        clock.advance(WeatherService.demoFreshFor + 1)
        try waitUntil("the preferred provider's data replaces the demo figures") { weather.report(for: seoul)?.source == "open-meteo" }
    }
}

/// Demo figures must look like weather: late November in each city within what its climate
/// gives, and days that swing like real days.
@Suite(.onEveryEngine) struct PlausibleDemoTests {
    @Test("late November", arguments: [
        // slug, lowest plausible low, highest plausible high
        ("london", -4.0, 16.0), ("dubai", 16.0, 34.0), ("seoul", -10.0, 18.0), ("singapore", 21.0, 34.0),
        ("sydney", 12.0, 32.0), ("yakutsk", -50.0, -10.0), ("new-york-city", -8.0, 18.0),
        ("reykjavik", -12.0, 10.0), ("buenos-aires", 10.0, 32.0), ("mumbai", 18.0, 38.0), ("cape-town", 10.0, 32.0),
    ])
    func demoFiguresLookLikeTheClimate(_ slug: String, _ lowest: Double, _ highest: Double) throws {
        let city = try #require(CityIndexTests.index.city(slug: slug))
        let forecast = try DemoProvider().forecast(for: city, now: AppHarness.fixedNow)
        for day in forecast.daily {
            let high = try #require(day.high), low = try #require(day.low)
            #expect(low >= lowest && high <= highest, "\(slug) \(day.date): \(low)…\(high)")
            #expect((4.0...10.0).contains(high - low), "\(slug) \(day.date) swings \(high - low)")
        }
    }
}

extension HonestWeatherTests {
    @Test func aDayWithoutHourlyValuesHasNoLineAndNoLegendEntry() throws {
        let stub = try UpstreamStub()
        stub.mode = .answer(try UpstreamStub.recorded { object in
            var hourly = object["hourly"] as? [String: Any] ?? [:]
            let times = hourly["time"] as? [String] ?? []
            var temperatures = hourly["temperature_2m"] as? [Any] ?? []
            for (index, time) in times.enumerated() where time.hasPrefix("2026-11-23") { temperatures[index] = NSNull() }
            hourly["temperature_2m"] = temperatures
            object["hourly"] = hourly
        })
        let app = try AppHarness { $0.weatherProviders = ["open-meteo"]; $0.openMeteoURL = stub.url }
        let (_, page) = try app.page("/city/seoul")
        #expect(page.count("//svg[@class='hourly-chart']//polyline") == 2)
        #expect(page.count("//svg[@class='hourly-chart']//polyline[contains(@class,'tomorrow')]") == 0)
        #expect(page.count("//figcaption[@class='legend']/span[contains(@class,'key-tomorrow')]") == 0)
        #expect(page.count("//figcaption[@class='legend']/span[contains(@class,'key-')]") == 2)
    }

    @Test func chartTicksFallOnRoundSteps() throws {
        let stub = try UpstreamStub()
        let other = try AppHarness { $0.weatherProviders = ["open-meteo"]; $0.openMeteoURL = stub.url }
        let (_, page) = try other.page("/city/seoul")
        let ticks = page.nodes("//svg[@class='hourly-chart']//text[@class='tick'][@text-anchor='end']").map { $0.text }
        let values = ticks.compactMap { Int($0.dropLast()) }
        #expect(values.count == ticks.count && values.count >= 3)
        let step = values[1] - values[0]
        #expect([1, 2, 5, 10].contains(step))
        #expect(values.allSatisfy { $0 % step == 0 }, "ticks \(ticks)")
    }
}

extension HonestWeatherTests {
    @Test func theChartIsAlsoSaidInWords() throws {
        let stub = try UpstreamStub()
        let app = try AppHarness { $0.weatherProviders = ["open-meteo"]; $0.openMeteoURL = stub.url }
        let (_, page) = try app.page("/city/seoul")
        #expect(page.nodes("//svg[@class='hourly-chart']").first?["aria-describedby"] == "chart-summary")
        let lines = page.nodes("//ul[@id='chart-summary']/li").map(\.text)
        #expect(lines.count == 3)
        #expect(lines.allSatisfy { $0.contains("lowest") && $0.contains("highest") })
        #expect(lines.first?.hasPrefix("Yesterday: lowest") == true)
    }
}
