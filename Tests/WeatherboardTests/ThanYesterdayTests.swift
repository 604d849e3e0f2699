import Foundation
import Testing
import HTTPTestSupport
@testable import Weatherboard

/// Issue 42 #1 and #4: now against the same hour yesterday, and today's chance of rain for the
/// hours left of it, from a stub Open-Meteo with known numbers, in several time zones.
@Suite(.serialized, .onEveryEngine) struct ThanYesterdayTests {
    /// An answer for `city` at `now`: yesterday's hours at `yesterday(hour)` °C, every other
    /// day's at 10 °C, and the reading now as given.
    static func answer(for city: City, now: Date, current: Double, feels: Double?, yesterday: (Int) -> Double) throws -> [UInt8] {
        let local = LocalCalendar(city.timeZone)
        let dates = (-1...5).map { local.dateString(now, offset: $0) }
        var times: [String] = [], temperatures: [Double] = []
        for (index, date) in dates.enumerated() {
            for hour in 0..<24 {
                times.append(date + "T" + LocalCalendar.twoDigits(hour) + ":00")
                temperatures.append(index == 0 ? yesterday(hour) : 10)
            }
        }
        var reading: [String: Any] = ["time": local.minuteString(now), "temperature_2m": current, "weather_code": 3]
        reading["apparent_temperature"] = feels ?? NSNull()
        let object: [String: Any] = [
            "utc_offset_seconds": city.timeZone.secondsFromGMT(for: now),
            "current": reading,
            "hourly": ["time": times, "temperature_2m": temperatures, "apparent_temperature": temperatures,
                       "precipitation_probability": times.map { _ in 10 }, "weather_code": times.map { _ in 3 }],
            "daily": ["time": dates, "temperature_2m_max": dates.map { _ in 15.5 }, "temperature_2m_min": dates.map { _ in 5.0 },
                      "weather_code": dates.map { _ in 3 }, "precipitation_probability_max": dates.map { _ in 10 }],
        ]
        return [UInt8](try JSONSerialization.data(withJSONObject: object))
    }

    static func page(_ slug: String, at now: Date, current: Double, feels: Double?, yesterday: @escaping (Int) -> Double,
                     language: String = "en") throws -> MarkupDocument {
        let city = try #require(CityIndexTests.index.city(slug: slug))
        let stub = try UpstreamStub()
        stub.mode = .answer(try answer(for: city, now: now, current: current, feels: feels, yesterday: yesterday))
        let app = try AppHarness { $0.weatherProviders = ["open-meteo"]; $0.openMeteoURL = stub.url }
        app.clock.advance(now.timeIntervalSince(app.clock.read()))
        return try app.page("/city/\(slug)?lang=\(language)").1
    }

    @Test func nowAgainstThisTimeYesterdayInBothLanguages() throws {
        // 14:45 in Seoul: yesterday at 14:00 it was 7.4 °C; now 4 °C, feeling like −1 °C.
        let yesterday = { (hour: Int) in hour == 14 ? 7.4 : 20 }
        let page = try Self.page("seoul", at: AppHarness.fixedNow, current: 4, feels: -1, yesterday: yesterday)
        let line = try #require(page.nodes("//section[@data-day='today']//*[@data-same-hour]").first)
        #expect(line["data-now"] == "4" && line["data-yesterday"] == "7.4" && line["data-hour"] == "14:00")
        #expect(line.text == "Now 4°, feels like -1° — 3° colder than this time yesterday")
        let korean = try Self.page("seoul", at: AppHarness.fixedNow, current: 4, feels: -1, yesterday: yesterday, language: "ko")
        #expect(korean.text("//*[@data-same-hour]") == "지금 4°, 체감 -1° — 어제 이맘때보다 3° 낮아요")
    }

    /// Kathmandu (UTC+5:45) at 11:30 there; no feels-like from the provider: the reading alone.
    @Test func aFortyFiveMinuteZoneAndNoFeelsLike() throws {
        let page = try Self.page("kathmandu", at: AppHarness.fixedNow, current: 12.5, feels: nil, yesterday: { $0 == 11 ? 12.4 : 0 })
        let line = try #require(page.nodes("//*[@data-same-hour]").first)
        #expect(line["data-hour"] == "11:00" && line["data-yesterday"] == "12.4")
        #expect(line.text == "Now 13° — 1° warmer than this time yesterday") // 12.5 → 13 and 12.4 → 12, as the cards round
    }

    /// 1 November 2026 in New York, the day clocks go back: at 09:30 EST the same hour yesterday
    /// is 09:00 EDT, 25 hours earlier, not 10:00.
    @Test func aDSTDayComparesTheSameWallClockHour() throws {
        let nineThirty = Date(timeIntervalSince1970: 1_793_629_800) // 2026-11-01 14:30 UTC
        let page = try Self.page("new-york-city", at: nineThirty, current: 5, feels: 5, yesterday: { $0 == 9 ? 8 : 2 })
        let line = try #require(page.nodes("//*[@data-same-hour]").first)
        #expect(line["data-hour"] == "09:00" && line["data-yesterday"] == "8")
        #expect(line.text == "Now 5°, feels like 5° — 3° colder than this time yesterday")
    }

    /// Jeju's morning: 88 % from 06:00 to 09:00, dry since. The card's chance is for the hours
    /// left (and says so), so it never contradicts the sentence beside it.
    @Test func todaysChanceIsForTheHoursLeft() throws {
        let seoul = try #require(CityIndexTests.index.city(slug: "seoul"))
        let stub = try UpstreamStub()
        stub.mode = .answer(try WeatherDetailsTests.answer(for: seoul, now: AppHarness.fixedNow, wet: 6..<9))
        let app = try AppHarness { $0.weatherProviders = ["open-meteo"]; $0.openMeteoURL = stub.url }
        let (_, page) = try app.page("/city/seoul")
        let chance = try #require(page.nodes("//section[@data-day='today']//p[@class='precipitation']").first)
        #expect(chance.text == "Chance of rain or snow from 14:00: 10%" && chance["data-precip-hours"] == "14-24")
        #expect(page.text("//section[@data-day='today']//*[@data-rain-summary]") == "No rain expected for the rest of today.")
        #expect(page.nodes("//section[@data-day='tomorrow']//p[@class='precipitation']").first?["data-precip-hours"] == "0-24")
        let (_, korean) = try app.page("/city/seoul?lang=ko")
        #expect(korean.text("//section[@data-day='today']//p[@class='precipitation']") == "14:00부터 강수 확률 10%")
    }

    /// Issue 42 #4: today's expected precipitation beside what fell yesterday, from the daily sums
    /// (yesterday's from the provider's past day); none when the provider gives no sums, or on
    /// two dry days.
    @Test("yesterday's rain beside today's", arguments: [
        ([12.4, 3.06, 0, 0, 0, 0, 0] as [Double?], "3.1", "12.4"),
        ([0, 0.04, 0, 0, 0, 0, 0], nil, nil), // a trace is nothing to one decimal
        ([0.3, 0, 0, 0, 0, 0, 0], "0.0", "0.3"),
        ([0, 0, 5, 0, 0, 0, 0], nil, nil),
        ([nil, 4, 0, 0, 0, 0, 0], nil, nil),
    ])
    func yesterdaysRainBesideTodays(sums: [Double?], today: String?, yesterday: String?) throws {
        let seoul = try #require(CityIndexTests.index.city(slug: "seoul"))
        var object = try #require(try JSONSerialization.jsonObject(with: Data(
            try Self.answer(for: seoul, now: AppHarness.fixedNow, current: 4, feels: 1, yesterday: { _ in 3 }))) as? [String: Any])
        var daily = try #require(object["daily"] as? [String: Any])
        daily["precipitation_sum"] = sums.map { $0 as Any? ?? NSNull() }
        object["daily"] = daily
        let stub = try UpstreamStub()
        stub.mode = .answer([UInt8](try JSONSerialization.data(withJSONObject: object)))
        let app = try AppHarness { $0.weatherProviders = ["open-meteo"]; $0.openMeteoURL = stub.url }
        let (_, page) = try app.page("/city/seoul")
        let line = page.nodes("//section[@data-day='today']//*[@data-rain-totals]").first
        #expect(line?["data-today-mm"] == today && line?["data-yesterday-mm"] == yesterday)
        if let today, let yesterday {
            #expect(line?.text == "Precipitation: \(today) mm today (the whole day), \(yesterday) mm yesterday.")
            #expect(try app.page("/city/seoul?lang=ko").1.text("//*[@data-rain-totals]") == "강수량: 오늘 하루 \(today) mm, 어제 \(yesterday) mm.")
        }
    }

    /// A day's sum past any measured (1,825 mm) is refused with the answer, like a temperature.
    @Test func anImpossibleDaysRainIsRefused() throws {
        let seoul = try #require(CityIndexTests.index.city(slug: "seoul"))
        var forecast = try DemoProvider().forecast(for: seoul, now: AppHarness.fixedNow)
        #expect(forecast.daily.allSatisfy { $0.precipitationSum != nil }, "the demo gives its sums")
        forecast.daily[1].precipitationSum = 5_000
        #expect(throws: UpstreamError.self) { try forecast.checked() }
        forecast.daily[1].precipitationSum = -1
        #expect(throws: UpstreamError.self) { try forecast.checked() }
    }
}
