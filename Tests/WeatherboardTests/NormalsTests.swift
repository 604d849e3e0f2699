import Foundation
import Testing
import HTTPTestSupport
@testable import Weatherboard

/// Issue 42 #2: today's high and low against the 1991–2020 normal for the date, from a stub of
/// Open-Meteo's archive with known numbers, fetched once per city and kept; a city whose
/// normals are not known yet says nothing of them, and an absurd archive answer is refused and
/// never kept.
@Suite(.serialized, .onEveryEngine) struct NormalsTests {
    static let utc: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar
    }()
    static let first = utc.date(from: DateComponents(year: 1991, month: 1, day: 1))!
    static let last = utc.date(from: DateComponents(year: 2020, month: 12, day: 31))!

    /// The stub's high and low of a day: they move with the season, the year and the day, so
    /// that the wrong date, window or year gives another normal.
    static func values(_ date: Date) -> (high: Double, low: Double) {
        let parts = utc.dateComponents([.year, .month, .day], from: date)
        let dayOfYear = utc.ordinality(of: .day, in: .year, for: date)!
        let high = 12 + 9 * sin(2 * Double.pi * Double(dayOfYear - 100) / 365) + Double(parts.year! - 2005) * 0.07 + Double(dayOfYear % 7) * 0.8
        return (high, high - 7 - Double(parts.month! % 3))
    }

    /// The archive's answer: every day of 1991–2020 (or `change` of it).
    static func archive(changing change: (inout [String: Any]) -> Void = { _ in }) throws -> [UInt8] {
        var times: [String] = [], highs: [Any] = [], lows: [Any] = []
        var day = first
        let format = DateFormatter()
        format.dateFormat = "yyyy-MM-dd"
        format.timeZone = utc.timeZone
        format.locale = Locale(identifier: "en_US_POSIX")
        while day <= last {
            times.append(format.string(from: day))
            let (high, low) = values(day)
            highs.append(high)
            lows.append(low)
            day = utc.date(byAdding: .day, value: 1, to: day)!
        }
        var object: [String: Any] = ["latitude": 37.5, "longitude": 127, "utc_offset_seconds": 32_400,
                                     "daily": ["time": times, "temperature_2m_max": highs, "temperature_2m_min": lows]]
        change(&object)
        return [UInt8](try JSONSerialization.data(withJSONObject: object))
    }

    /// The normal of a calendar date worked out as a person would: every year's days from a week
    /// before to a week after it, those within the period, averaged; to a tenth.
    static func expectedNormal(month: Int, day: Int) -> (high: Double, low: Double) {
        var highs: [Double] = [], lows: [Double] = []
        for year in 1991...2020 {
            let centre = utc.date(from: DateComponents(year: year, month: month, day: day))!
            for offset in -7...7 {
                let date = utc.date(byAdding: .day, value: offset, to: centre)!
                guard date >= first && date <= last else { continue }
                highs.append(values(date).high)
                lows.append(values(date).low)
            }
        }
        func mean(_ values: [Double]) -> Double { (values.reduce(0, +) / Double(values.count) * 10).rounded() / 10 }
        return (mean(highs), mean(lows))
    }

    /// A site on the stub, at `now`.
    static func site(at now: Date = AppHarness.fixedNow, slug: String, archive: [UInt8]?,
                     configure: @escaping (inout AppConfiguration) -> Void = { _ in }) throws -> (AppHarness, UpstreamStub) {
        let city = try #require(CityIndexTests.index.city(slug: slug))
        let stub = try UpstreamStub()
        stub.mode = .answer(try ThanYesterdayTests.answer(for: city, now: now, current: 12, feels: 11, yesterday: { _ in 10 }))
        stub.archive = archive
        let app = try AppHarness {
            $0.weatherProviders = ["open-meteo"]
            $0.openMeteoURL = stub.url
            $0.archiveURL = stub.url
            configure(&$0)
        }
        app.clock.advance(now.timeIntervalSince(app.clock.read()))
        return (app, stub)
    }

    /// Waits for the background fetch of normals to end.
    static func normalsLanded(_ app: AppHarness) throws {
        let deadline = Date().addingTimeInterval(20)
        while app.application.weather.isFetchingNormals && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        #expect(!app.application.weather.isFetchingNormals, "the fetch of normals ended")
    }

    /// Seoul (UTC+9), Kathmandu (+5:45), Adelaide (+10:30 in its summer) and Honolulu (−10, still
    /// the 21st when it is the 22nd elsewhere): the normal of the city's own date.
    @Test("the normal for the city's date", arguments: [("seoul", 22), ("kathmandu", 22), ("adelaide", 22), ("honolulu", 21)])
    func theNormalForTheCitysDate(slug: String, day: Int) throws {
        let (app, stub) = try Self.site(slug: slug, archive: try Self.archive())
        // Not known yet: the page says nothing of a normal, and the fetch starts.
        #expect(try app.page("/city/\(slug)").1.nodes("//*[@data-normal]").isEmpty)
        try Self.normalsLanded(app)
        #expect(try app.count("SELECT count(*) FROM climate_normals") == 366)
        app.clock.advance(WeatherFragments.step) // the weather part is rendered again from here

        let (_, page) = try app.page("/city/\(slug)")
        let line = try #require(page.nodes("//section[@data-day='today']//*[@data-normal]").first)
        let expected = Self.expectedNormal(month: 11, day: day)
        #expect(line["data-normal-high"] == WeatherNumbers.oneDecimal(expected.high), "\(slug): \(line["data-normal-high"] ?? "none")")
        #expect(line["data-normal-low"] == WeatherNumbers.oneDecimal(expected.low))
        // Today's high is 15.5 (16 on the card), its low 5.
        let anomaly = 16 - Comparison.wholeDegrees(expected.high)
        #expect(line["data-high-anomaly"] == String(anomaly))
        let highWords = anomaly == 0 ? "High at normal" : "High \(abs(anomaly))° \(anomaly > 0 ? "above" : "below") normal"
        #expect(line.text.hasPrefix("\(highWords) for \(day) Nov (\(Comparison.wholeDegrees(expected.high))°); low "), "\(line.text)")
        #expect(page.text("//*[@data-normal]/small")?.hasPrefix("1991–2020 normals: ERA5 reanalysis via Open-Meteo, fetched ") == true)

        // Fetched once and kept: more pages, a restart's worth of memory gone, no more asking.
        app.clock.advance(WeatherFragments.step)
        _ = try app.page("/city/\(slug)?lang=ko")
        #expect(stub.archiveHits == 1)
    }

    @Test func theSentenceInKoreanAndTheDaysAgo() throws {
        let (app, stub) = try Self.site(slug: "seoul", archive: try Self.archive())
        _ = try app.page("/city/seoul")
        try Self.normalsLanded(app)
        app.clock.advance(2 * 86_400) // two days on: the 24th, its normal, fetched 2 days ago
        let city = try #require(CityIndexTests.index.city(slug: "seoul"))
        stub.mode = .answer(try ThanYesterdayTests.answer(for: city, now: app.clock.read(), current: 12, feels: 11, yesterday: { _ in 10 }))
        let expected = Self.expectedNormal(month: 11, day: 24)
        let (_, page) = try app.page("/city/seoul?lang=ko")
        let line = try #require(page.nodes("//*[@data-normal]").first)
        #expect(line["data-normal-high"] == WeatherNumbers.oneDecimal(expected.high))
        #expect(line.text.hasPrefix("최고 기온은 11월 24일 평년(\(Comparison.wholeDegrees(expected.high))°)보다 "), "\(line.text)")
        #expect(page.text("//*[@data-normal]/small") == "1991–2020년 평년값: Open-Meteo의 ERA5 재분석, 2일 전 받음")
        #expect(stub.archiveHits == 1)
    }

    /// Each absurd answer is refused whole: nothing kept, no claim on the page, the process up;
    /// the city is asked again later, and a good answer then is kept.
    @Test("absurd archive answers are refused and never kept", arguments: [
        "a high of 1e19", "a high under its low", "five years", "a day missing", "arrays of two lengths", "not JSON",
    ])
    func absurdAnswersAreRefused(_ case: String) throws {
        let bad = try Self.archive { object in
            var daily = object["daily"] as! [String: Any]
            var times = daily["time"] as! [String], highs = daily["temperature_2m_max"] as! [Any], lows = daily["temperature_2m_min"] as! [Any]
            switch `case` {
            case "a high of 1e19": highs[4000] = 1e19
            case "a high under its low": (highs[100], lows[100]) = (lows[100], highs[100])
            case "five years": (times, highs, lows) = (Array(times.prefix(1826)), Array(highs.prefix(1826)), Array(lows.prefix(1826)))
            case "a day missing": (times, highs, lows) = (times.enumerated().filter { $0.offset != 500 }.map(\.element),
                                                         highs.enumerated().filter { $0.offset != 500 }.map(\.element),
                                                         lows.enumerated().filter { $0.offset != 500 }.map(\.element))
            case "arrays of two lengths": lows.removeLast()
            default: break
            }
            daily["time"] = times
            daily["temperature_2m_max"] = highs
            daily["temperature_2m_min"] = lows
            object["daily"] = daily
        }
        let (app, stub) = try Self.site(slug: "seoul", archive: `case` == "not JSON" ? Array("{\"daily\": [1, 2".utf8) : bad)
        #expect(try app.page("/city/seoul").0.status == 200)
        try Self.normalsLanded(app)
        #expect(try app.count("SELECT count(*) FROM climate_normals") == 0)
        app.clock.advance(WeatherFragments.step)
        let (response, page) = try app.page("/city/seoul")
        #expect(response.status == 200 && page.nodes("//*[@data-normal]").isEmpty)
        #expect(stub.archiveHits == 1, "not asked again at once")

        // Asked again once the wait is over; a good answer is kept.
        stub.archive = try Self.archive()
        app.clock.advance(WeatherService.normalsRetryAfter)
        stub.mode = .answer(try ThanYesterdayTests.answer(for: try #require(CityIndexTests.index.city(slug: "seoul")), now: app.clock.read(),
                                                          current: 12, feels: 11, yesterday: { _ in 10 }))
        _ = try app.page("/city/seoul")
        try Self.normalsLanded(app)
        #expect(try app.count("SELECT count(*) FROM climate_normals") == 366)
        #expect(stub.archiveHits == 2)
    }

    /// One city's normals at a time, within the hour's budget: opening many cold cities asks the
    /// archive for as many as the budget allows, the rest later.
    @Test func theArchiveIsAskedWithinTheBudget() throws {
        let (app, stub) = try Self.site(slug: "seoul", archive: try Self.archive()) { $0.weatherFetchBudget.normalsPerHour = 1 }
        for slug in ["seoul", "busan", "tokyo"] {
            stub.mode = .answer(try ThanYesterdayTests.answer(for: try #require(CityIndexTests.index.city(slug: slug)), now: app.clock.read(),
                                                              current: 12, feels: 11, yesterday: { _ in 10 }))
            _ = try app.page("/city/\(slug)")
            try Self.normalsLanded(app)
        }
        #expect(stub.archiveHits == 1)
        #expect(try app.count("SELECT count(DISTINCT city_id) FROM climate_normals") == 1)
    }

    /// The demo's figures come with the demo's normals, labelled as made up.
    @Test func theDemoHasNormalsOfItsOwn() throws {
        let app = try AppHarness()
        let (_, page) = try app.page("/city/seoul")
        let line = try #require(page.nodes("//section[@data-day='today']//*[@data-normal]").first)
        let city = try #require(CityIndexTests.index.city(slug: "seoul"))
        let normal = try #require(DemoProvider().normal(city, date: "2026-11-22", now: AppHarness.fixedNow))
        #expect(line["data-normal-high"] == WeatherNumbers.oneDecimal(normal.high))
        #expect(page.text("//*[@data-normal]/small") == "Demo normals, made up like the demo weather")
        #expect(try app.count("SELECT count(*) FROM climate_normals") == 0, "made, not kept")
    }
}
