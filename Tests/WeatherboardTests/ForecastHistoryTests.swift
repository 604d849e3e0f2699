import Foundation
import Testing
import HTTPTestSupport
@testable import Weatherboard

/// Issue 42 #3: was yesterday's forecast right? 32 days of a stub Open-Meteo, one fetch a day:
/// each day's answer forecasts tomorrow and gives what yesterday was; the page's 30-day score
/// is the one the test computes from the stub's numbers.
@Suite(.serialized, .onEveryEngine) struct ForecastHistoryTests {
    static let seoul = CityIndexTests.index.city(slug: "seoul")!

    /// The stub's numbers for day `k` (0 is the test's first day).
    static func forecastHigh(_ k: Int) -> Double { 5 + Double((k * 37) % 13) + 0.3 }
    static func observedHigh(_ k: Int) -> Double { forecastHigh(k) + Double((k * 11) % 7) - 3 }
    static func chance(_ k: Int) -> Int { (k * 29) % 100 }
    static func code(_ k: Int) -> Int { k % 3 == 0 ? 61 : 3 }

    /// Day `d`'s answer: yesterday as it was, today at 10 °C, tomorrow as forecast.
    static func answer(day d: Int, now: Date) throws -> [UInt8] {
        let local = LocalCalendar(seoul.timeZone)
        let dates = (-1...5).map { local.dateString(now, offset: $0) }
        let highs = dates.indices.map { $0 == 0 ? observedHigh(d - 1) : $0 == 2 ? forecastHigh(d + 1) : 10 }
        let chances = dates.indices.map { $0 == 2 ? chance(d + 1) : 10 }
        let codes = dates.indices.map { $0 == 0 ? code(d - 1) : 3 }
        let times: [String] = dates.flatMap { date -> [String] in (0..<24).map { date + "T" + LocalCalendar.twoDigits($0) + ":00" } }
        let object: [String: Any] = [
            "utc_offset_seconds": seoul.timeZone.secondsFromGMT(for: now),
            "hourly": ["time": times, "temperature_2m": times.map { _ in 8.0 }, "precipitation_probability": times.map { _ in 10 },
                       "weather_code": times.map { _ in 3 }],
            "daily": ["time": dates, "temperature_2m_max": highs, "temperature_2m_min": highs.map { $0 - 8 },
                      "weather_code": codes, "precipitation_probability_max": chances],
        ]
        return [UInt8](try JSONSerialization.data(withJSONObject: object))
    }

    @Test func thirtyDaysScoredAsTheTestScoresThem() throws {
        let stub = try UpstreamStub()
        let app = try AppHarness { $0.weatherProviders = ["open-meteo"]; $0.openMeteoURL = stub.url; $0.weatherFreshFor = 3600 }
        let weather = app.application.weather
        for d in 0...31 {
            if d > 0 { app.clock.advance(86_400) }
            let now = app.clock.read()
            stub.mode = .answer(try Self.answer(day: d, now: now))
            _ = weather.report(for: Self.seoul)
            try waitUntil("day \(d)'s forecast", timeout: 20) {
                !weather.isFetching(Self.seoul) && weather.report(for: Self.seoul)?.forecast.fetchedAt == now
            }
        }
        // Today is day 31: days 1 to 30 have both a forecast and what followed.
        let scored = 1...30
        let hits = scored.filter { abs(Comparison.wholeDegrees(Self.forecastHigh($0)) - Comparison.wholeDegrees(Self.observedHigh($0))) <= 2 }
        let rainHits = scored.filter { (Self.chance($0) >= 50) == (Self.code($0) >= 51) }
        #expect(hits.count > 5 && hits.count < 30 && rainHits.count > 5 && rainHits.count < 30, "the numbers test something")

        let (response, page) = try app.page("/city/seoul/forecast-check")
        #expect(response.status == 200)
        let rows = page.nodes("//tr[@data-day]")
        #expect(rows.count == 30)
        let local = LocalCalendar(Self.seoul.timeZone)
        for (index, row) in rows.enumerated() {
            let k = 30 - index // newest first
            #expect(row["data-day"] == local.dateString(app.clock.read(), offset: k - 31))
            #expect(row["data-forecast-high"] == WeatherNumbers.oneDecimal(Self.forecastHigh(k)))
            #expect(row["data-observed-high"] == WeatherNumbers.oneDecimal(Self.observedHigh(k)))
            #expect(row["data-hit"] == (hits.contains(k) ? "true" : "false"))
            #expect(row["data-rain-hit"] == (rainHits.contains(k) ? "true" : "false"))
        }
        #expect(page.nodes("//*[@data-score-high]").first?["data-score-high"] == "\(hits.count)/30")
        #expect(page.text("//*[@data-check-summary]")
            == "Over the last 30 days the high was within 2° on \(hits.count) (\(hits.count * 100 / 30)%).")
        #expect(page.text("//*[@data-check-rain-summary]") == "Rain or no rain was right on \(rainHits.count) of 30 days.")
        #expect(page.count("//svg//polyline") == 2)

        // The city page: what yesterday's forecast said of today, beside today's high now.
        let (_, city) = try app.page("/city/seoul")
        let line = try #require(city.nodes("//section[@data-day='today']//*[@data-forecast-check]").first)
        #expect(line["data-forecast-high"] == WeatherNumbers.oneDecimal(Self.forecastHigh(31)) && line["data-current-high"] == "10")
        #expect(line.text.hasPrefix("Yesterday's forecast for today: high \(Comparison.wholeDegrees(Self.forecastHigh(31)))°, ") == true)
        #expect(city.count("//a[@href='/city/seoul/forecast-check']") == 1)
        let (_, korean) = try app.page("/city/seoul/forecast-check?lang=ko")
        #expect(korean.text("//*[@data-check-rain-summary]") == "비가 올지 안 올지는 30일 중 \(rainHits.count)일 맞았어요.")
    }

    @Test func aCityWithNoHistorySaysSoAndClaimsNothing() throws {
        let app = try AppHarness()
        let (response, page) = try app.page("/city/busan/forecast-check")
        #expect(response.status == 200 && page.count("//tr[@data-day]") == 0 && page.count("//*[@data-check-summary]") == 0)
        let (_, city) = try app.page("/city/busan")
        #expect(city.count("//*[@data-forecast-check]") == 0)
        #expect(try app.get("/city/no-such-place/forecast-check").status == 404)
    }
}
