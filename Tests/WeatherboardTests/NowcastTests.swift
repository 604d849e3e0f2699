import Foundation
import Testing
import HTTPTestSupport
@testable import Weatherboard

/// Issue 68 #1: the next two hours by the quarter hour, from a stub Open-Meteo with known
/// quarter hours, in several time zones; stale, missing and impossible quarters show nothing.
@Suite(.serialized, .onEveryEngine) struct NowcastTests {
    /// ThanYesterdayTests' answer (10 °C, a 10 % chance every hour) with quarter hours ending
    /// 15, 30, … minutes after `now` carrying `amounts` (mm), and the hours in `wetHours` at 80 %.
    static func answer(for city: City, now: Date, amounts: [Double?], snow: [Double]? = nil, wetHours: Range<Int> = 0..<0) throws -> [UInt8] {
        var object = try #require(try JSONSerialization.jsonObject(with: Data(
            try ThanYesterdayTests.answer(for: city, now: now, current: 10, feels: 10, yesterday: { _ in 10 }))) as? [String: Any])
        let local = LocalCalendar(city.timeZone)
        let times = amounts.indices.map { local.minuteString(now.addingTimeInterval(Double($0 + 1) * 900)) }
        object["minutely_15"] = ["time": times, "precipitation": amounts.map { $0 as Any? ?? NSNull() },
                                 "snowfall": snow ?? amounts.map { _ in 0.0 }]
        var hourly = try #require(object["hourly"] as? [String: Any])
        let hours = try #require(hourly["time"] as? [String])
        let today = local.dateString(now)
        hourly["precipitation_probability"] = hours.map { time in
            time.hasPrefix(today) && wetHours.contains(Int(time.dropFirst(11).prefix(2)) ?? -1) ? 80 : 10
        }
        object["hourly"] = hourly
        return [UInt8](try JSONSerialization.data(withJSONObject: object))
    }

    static func page(_ slug: String = "seoul", amounts: [Double?], snow: [Double]? = nil, wetHours: Range<Int> = 0..<0,
                     language: String = "en") throws -> MarkupDocument {
        let city = try #require(CityIndexTests.index.city(slug: slug))
        let stub = try UpstreamStub()
        stub.mode = .answer(try answer(for: city, now: AppHarness.fixedNow, amounts: amounts, snow: snow, wetHours: wetHours))
        let app = try AppHarness { $0.weatherProviders = ["open-meteo"]; $0.openMeteoURL = stub.url }
        return try app.page("/city/\(slug)?lang=\(language)").1
    }

    static let dry: [Double?] = Array(repeating: 0, count: 12)

    /// Seoul at 14:45: rain in the quarters 15:15–16:00. The sentence, the markup and the strip
    /// are what the stub served; the source and its age are said.
    @Test func aSpellAheadInBothLanguages() throws {
        let amounts: [Double?] = [0, 0, 0.4, 1.2, 2.5, 0, 0, 0, 0, 0, 0, 0]
        let page = try Self.page(amounts: amounts)
        let nowcast = try #require(page.nodes("//section[@data-day='today']//*[@data-nowcast]").first)
        #expect(nowcast["data-source"] == "open-meteo" && nowcast["data-issued"] == "2026-11-22T05:45:00Z")
        #expect(nowcast["data-rain-start"] == "15:15" && nowcast["data-rain-end"] == "16:00")
        #expect(page.text("//*[@data-nowcast]/p[@class='nowcast-sentence']") == "Rain starting around 15:15, stopping around 16:00.")
        let cells = page.nodes("//*[@data-nowcast]//*[@data-quarter]")
        #expect(cells.map { $0["data-quarter"] ?? "" } == ["14:45", "15:00", "15:15", "15:30", "15:45", "16:00", "16:15", "16:30"])
        #expect(cells.map { $0["data-precipitation"] ?? "" } == ["0", "0", "0.4", "1.2", "2.5", "0", "0", "0"])
        #expect(page.text("//*[@data-nowcast]/p[@class='nowcast-source']")
                == "Next two hours: Open-Meteo, interpolated from hourly values · updated 14:45 GMT+9")
        let korean = try Self.page(amounts: amounts, language: "ko")
        #expect(korean.text("//*[@data-nowcast]/p[@class='nowcast-sentence']") == "15:15쯤 비가 오기 시작해 16:00쯤 그쳐요.")
    }

    @Test("the sentence for each shape of the window", arguments: [
        ([0.5, 0.5, 0, 0, 0, 0, 0, 0] as [Double], "Rain stopping around 15:15, in 30 min.", "비가 30분 뒤 그쳐요 (15:15쯤)."),
        ([0, 0, 0, 0, 0, 0.2, 0.3, 0.3], "Rain starting around 16:00, in 75 min.", "75분 뒤 16:00쯤 비가 오기 시작해요."),
        ([0.3, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3], "Rain for at least the next two hours.", "앞으로 두 시간 넘게 비가 이어져요."),
        ([0, 0.05, 0.09, 0, 0, 0, 0, 0], "No rain or snow in the next two hours.", "앞으로 두 시간 동안 비나 눈 소식이 없어요."),
    ])
    func shapes(amounts: [Double], english: String, korean: String) throws {
        let padded = amounts.map { Optional($0) } + [0, 0, 0, 0]
        #expect(try Self.page(amounts: padded).text("//*[@data-nowcast]/p[1]") == english)
        #expect(try Self.page(amounts: padded, language: "ko").text("//*[@data-nowcast]/p[1]") == korean)
    }

    /// Snow (cm, 7 cm to 10 mm of water) is called snow.
    @Test func snowIsSnow() throws {
        let page = try Self.page(amounts: [0.7, 0.7, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], snow: [0.5, 0.5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])
        #expect(page.text("//*[@data-nowcast]/p[1]") == "Snow stopping around 15:15, in 30 min.")
    }

    /// One rule: the hourly chance says 80 % from 15:00 to 18:00, the quarter hours say dry until
    /// 16:45. The day's sentence starts the rain where the quarter hours stop deciding (17:00),
    /// and the umbrella follows it; with wet quarter hours at a 10 % chance, the day's sentence
    /// says rain too.
    @Test func theDaysSentenceFollowsTheQuarterHours() throws {
        let dryNow = try Self.page(amounts: Self.dry, wetHours: 15..<18)
        #expect(dryNow.text("//*[@data-nowcast]/p[1]") == "No rain or snow in the next two hours.")
        #expect(dryNow.text("//*[@data-rain-summary]") == "Rain likely from 17:00 to 18:00.")
        let wetNow = try Self.page(amounts: [0, 0.4, 0.4, 0, 0, 0, 0, 0, 0, 0, 0, 0])
        #expect(wetNow.text("//*[@data-rain-summary]") == "Rain likely from 15:00 to 16:00.")
        #expect(wetNow.nodes("//*[@data-wear]").first?["data-umbrella"] == "true")
    }

    /// Kathmandu (UTC+5:45) at 11:30 there, and Seoul just before midnight: the clocks are the
    /// city's, across the date.
    @Test func otherZonesAndMidnight() throws {
        let page = try Self.page("kathmandu", amounts: [0, 0.4] + Array(repeating: 0, count: 10))
        #expect(page.nodes("//*[@data-nowcast]").first?["data-rain-start"] == "11:45")
        #expect(page.text("//*[@data-nowcast]/p[1]") == "Rain starting around 11:45, stopping around 12:00.")

        let seoul = try #require(CityIndexTests.index.city(slug: "seoul"))
        let local = LocalCalendar(seoul.timeZone)
        let lateEvening = AppHarness.fixedNow.addingTimeInterval(9 * 3600 - 15 * 60) // 23:30 in Seoul
        let stamps = (1...12).map { local.minuteString(lateEvening.addingTimeInterval(Double($0) * 900)) }
        let forecast = Forecast(source: "open-meteo", fetchedAt: lateEvening, current: nil, daily: [], hourly: [],
                                quarters: stamps.enumerated().map { Forecast.Quarter(time: $1, precipitation: (1...2).contains($0) ? 1 : 0) })
        let nowcast = try #require(Nowcast(forecast, now: lateEvening, local: local))
        #expect(stamps[1].hasSuffix("T00:00") && nowcast.quarters.map(\.start).prefix(3) == ["23:30", "23:45", "00:00"])
        #expect(nowcast.sentence(strings: Self.english) == "Rain starting around 23:45, stopping around 00:15.")
        #expect(nowcast.decides(hour: 0) == true && nowcast.decides(hour: 23) == true && nowcast.decides(hour: 1) == false)
    }

    /// Older than 30 minutes, missing, not reaching the window, or with a gap: nothing.
    @Test func staleOrMissingShowsNothing() throws {
        let seoul = try #require(CityIndexTests.index.city(slug: "seoul"))
        let local = LocalCalendar(seoul.timeZone)
        let now = AppHarness.fixedNow
        func forecast(fetched: Date, ends: [TimeInterval]) -> Forecast {
            Forecast(source: "open-meteo", fetchedAt: fetched, current: nil, daily: [], hourly: [],
                     quarters: ends.map { Forecast.Quarter(time: local.minuteString(now.addingTimeInterval($0)), precipitation: 0) })
        }
        let whole = (1...12).map { Double($0) * 900 }
        #expect(Nowcast(forecast(fetched: now, ends: whole), now: now, local: local) != nil)
        #expect(Nowcast(forecast(fetched: now.addingTimeInterval(-31 * 60), ends: whole), now: now, local: local) == nil)
        #expect(Nowcast(forecast(fetched: now, ends: Array(whole.prefix(7))), now: now, local: local) == nil)
        #expect(Nowcast(forecast(fetched: now, ends: whole.filter { $0 != 4 * 900 }), now: now, local: local) == nil)
        #expect(Nowcast(forecast(fetched: now, ends: whole.map { $0 + 3600 }), now: now, local: local) == nil)
        let page = try Self.page(amounts: [0, 0, nil, 0, 0, 0, 0, 0, 0, 0, 0, 0])
        #expect(page.nodes("//*[@data-nowcast]").isEmpty && !page.nodes("//*[@data-rain-summary]").isEmpty)
    }

    /// An impossible quarter hour refuses the whole answer: nothing of it is kept or shown.
    @Test("impossible quarter hours are refused", arguments: [-1.0, 1e9, .nan])
    func impossibleQuartersAreRefused(amount: Double) throws {
        var forecast = try DemoProvider().forecast(for: #require(CityIndexTests.index.city(slug: "seoul")), now: AppHarness.fixedNow)
        forecast.quarters?[3].precipitation = amount
        #expect(throws: UpstreamError.self) { try forecast.checked() }
        forecast = try DemoProvider().forecast(for: #require(CityIndexTests.index.city(slug: "seoul")), now: AppHarness.fixedNow)
        forecast.quarterKind = "<script>"
        #expect(throws: UpstreamError.self) { try forecast.checked() }
        #expect(throws: (any Error).self) {
            try OpenMeteoProvider.decode(Data(#"{"hourly":{"time":[],"temperature_2m":[]},"daily":{"time":[],"temperature_2m_max":[],"temperature_2m_min":[]},"minutely_15":{"time":["2026-11-22T15:00"],"precipitation":[0,1]}}"#.utf8), fetchedAt: AppHarness.fixedNow)
        }
    }

    /// The demo makes quarter hours of its own, and says they are not a forecast.
    @Test func theDemoSaysSo() throws {
        let app = try AppHarness()
        let (_, page) = try app.page("/city/seoul")
        let nowcast = try #require(page.nodes("//*[@data-nowcast]").first)
        #expect(nowcast["data-source"] == "demo" && page.nodes("//*[@data-nowcast]//*[@data-quarter]").count == 8)
        #expect(page.text("//*[@data-nowcast]/p[@class='nowcast-source']")?.contains("not a forecast") == true)
    }

    /// For any quarter hours and chances, an hour the quarter hours touch is in the day's rain
    /// sentence exactly when they call it wet.
    @Test func theSentenceAndTheChanceNeverDisagree() throws {
        let seoul = try #require(CityIndexTests.index.city(slug: "seoul"))
        let local = LocalCalendar(seoul.timeZone)
        let now = AppHarness.fixedNow
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<500 {
            let quarters = (1...12).map { Forecast.Quarter(time: local.minuteString(now.addingTimeInterval(Double($0) * 900)),
                                                           precipitation: Bool.random(using: &generator) ? 0 : Double.random(in: 0...1, using: &generator)) }
            let hours = (0..<24).map { Forecast.Hour(time: local.dateString(now) + "T" + LocalCalendar.twoDigits($0) + ":00",
                                                     precipitationProbability: Int.random(in: 0...100, using: &generator)) }
            let forecast = Forecast(source: "open-meteo", fetchedAt: now, current: nil, daily: [], hourly: hours, quarters: quarters)
            let nowcast = try #require(Nowcast(forecast, now: now, local: local))
            let outlook = RainOutlook(hours: hours, from: 14, nowcast: nowcast)
            for hour in 14...16 {
                guard let wet = nowcast.decides(hour: hour) else { continue }
                #expect(outlook.spells.contains { ($0.from..<$0.to).contains(hour) } == wet)
            }
            #expect((nowcast.firstSpell == nil) == !(14...16).contains { nowcast.decides(hour: $0) == true })
        }
    }

    static let catalog = try! Localization(directory: AppConfiguration.repositoryFolder("Templates") + "/strings")
    static func english(_ key: String, _ arguments: [String: String]) -> String { catalog.string(key, .en, arguments) }
}
