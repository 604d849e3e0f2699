import Foundation
import Testing
import HTTPTestSupport
@testable import Weatherboard

/// Issue 25 #1, #3, #4: rain hour by hour and in a sentence, the air's particulates with the
/// Korean bands, and today's sun, wind, humidity and UV, from a stub Open-Meteo (forecast and
/// air-quality paths) with known values, read off the page in both languages and in several
/// time zones.
@Suite(.serialized, .onEveryEngine) struct WeatherDetailsTests {
    /// An Open-Meteo answer for `city` at `now` in its own zone: yesterday to five days on, dry
    /// but for `wet` (local hours of today at 80 %, or tomorrow's when `wetTomorrow`), with the
    /// given sun, wind, humidity and UV every day.
    static func answer(for city: City, now: Date, wet: Range<Int>, wetTomorrow: Range<Int> = 0..<0,
                       sunrise: String = "06:12", sunset: String = "18:47", uv: Double = 4.6,
                       wind: Double = 17.3, gusts: Double = 38.9, direction: Int = 315, humidity: Int = 64) throws -> [UInt8] {
        let local = LocalCalendar(city.timeZone)
        let dates = (-1...5).map { local.dateString(now, offset: $0) }
        var times: [String] = [], temperatures: [Double] = [], chances: [Int] = [], humidities: [Int] = []
        for (index, date) in dates.enumerated() {
            for hour in 0..<24 {
                times.append(date + "T" + LocalCalendar.twoDigits(hour) + ":00")
                temperatures.append(10 + Double(hour % 12) / 2)
                let isWet = (index == 1 && wet.contains(hour)) || (index == 2 && wetTomorrow.contains(hour))
                chances.append(isWet ? 80 : 10)
                humidities.append(humidity)
            }
        }
        let dailyChance = dates.indices.map { index in
            (index == 1 && !wet.isEmpty) || (index == 2 && !wetTomorrow.isEmpty) ? 80 : 10
        }
        let object: [String: Any] = [
            "utc_offset_seconds": city.timeZone.secondsFromGMT(for: now),
            "current": ["time": local.minuteString(now), "temperature_2m": 12.0, "apparent_temperature": 10.0, "weather_code": 3],
            "hourly": ["time": times, "temperature_2m": temperatures, "apparent_temperature": temperatures,
                       "precipitation_probability": chances, "weather_code": chances.map { $0 > 50 ? 61 : 3 },
                       "relative_humidity_2m": humidities],
            "daily": ["time": dates, "temperature_2m_max": dates.map { _ in 15.5 }, "temperature_2m_min": dates.map { _ in 10.0 },
                      "weather_code": dailyChance.map { $0 > 50 ? 61 : 3 }, "precipitation_probability_max": dailyChance,
                      "sunrise": dates.map { $0 + "T" + sunrise }, "sunset": dates.map { $0 + "T" + sunset },
                      "uv_index_max": dates.map { _ in uv }, "wind_speed_10m_max": dates.map { _ in wind },
                      "wind_gusts_10m_max": dates.map { _ in gusts }, "wind_direction_10m_dominant": dates.map { _ in direction }],
        ]
        return [UInt8](try JSONSerialization.data(withJSONObject: object))
    }

    static func air(for city: City, now: Date, pm10: Double, pm25: Double) throws -> [UInt8] {
        let local = LocalCalendar(city.timeZone)
        let object: [String: Any] = [
            "utc_offset_seconds": city.timeZone.secondsFromGMT(for: now),
            "current": ["time": String(local.minuteString(now).prefix(13)) + ":00", "interval": 3600, "pm10": pm10, "pm2_5": pm25],
        ]
        return [UInt8](try JSONSerialization.data(withJSONObject: object))
    }

    let seoul = CityIndexTests.index.city(slug: "seoul")!

    @Test func rainHourByHourAndInASentenceInBothLanguages() throws {
        let stub = try UpstreamStub()
        // 14:45 in Seoul: rain likely 15–18 today; tomorrow dry.
        stub.mode = .answer(try Self.answer(for: seoul, now: AppHarness.fixedNow, wet: 15..<18))
        let app = try AppHarness { $0.weatherProviders = ["open-meteo"]; $0.openMeteoURL = stub.url }
        let (_, page) = try app.page("/city/seoul")
        let today = page.nodes("//div[@class='rain-day'][@data-day='today']//li[@data-precip]")
        let tomorrow = page.nodes("//div[@class='rain-day'][@data-day='tomorrow']//li[@data-precip]")
        #expect(today.count == 24 && tomorrow.count == 24)
        #expect(today.map { $0["data-precip"] ?? "" } == (0..<24).map { (15..<18).contains($0) ? "80" : "10" })
        // The bars picture the sentences (today's on its card, tomorrow's under its bars) and are
        // hidden from screen readers, which read those.
        #expect(page.nodes("//div[@class='rain-day']/ol").allSatisfy { $0["aria-hidden"] == "true" })
        #expect(page.text("//div[@class='rain-day'][@data-day='tomorrow']/p[@class='rain-day-summary']") == "No rain expected tomorrow.")
        #expect(today[13]["class"] == "p1 past" && today[14]["class"] == "p1") // the hour now is not past
        #expect(page.text("//section[@data-day='today']//*[@data-rain-summary]") == "Rain likely from 15:00 to 18:00.")
        // yesterday is over: no chance of rain on its card; today's and tomorrow's keep theirs
        #expect(page.count("//section[@data-day='yesterday']//p[@class='precipitation']") == 0)
        #expect(page.text("//section[@data-day='tomorrow']//p[@class='precipitation']") == "Chance of rain or snow 10%")
        // tomorrow differs from today in rain: the line says so
        #expect(page.text("//p[@class='tomorrow-line']") == "Tomorrow: about the same as today, and dry")

        let (_, korean) = try app.page("/city/seoul?lang=ko")
        #expect(korean.text("//*[@data-rain-summary]") == "비: 15–18시에 올 가능성이 높아요.")
        #expect(korean.text("//p[@class='tomorrow-line']") == "내일은 오늘과 비슷해요 · 비는 그쳐요")
    }

    @Test("the sentence for each shape of a day", arguments: [
        (14..<18, "Rain likely now, until 18:00."),
        (0..<0, "No rain expected for the rest of today."),
        (0..<10, "No rain expected for the rest of today."), // rain this morning is over
        (20..<24, "Rain likely from 20:00 to 24:00."),
    ])
    func sentences(wet: Range<Int>, sentence: String) throws {
        let stub = try UpstreamStub()
        stub.mode = .answer(try Self.answer(for: seoul, now: AppHarness.fixedNow, wet: wet))
        let app = try AppHarness { $0.weatherProviders = ["open-meteo"]; $0.openMeteoURL = stub.url }
        let (_, page) = try app.page("/city/seoul")
        #expect(page.text("//*[@data-rain-summary]") == sentence)
    }

    @Test func spellsAndTomorrowsRain() {
        func hours(_ wet: Set<Int>) -> [Forecast.Hour] {
            (0..<24).map { Forecast.Hour(time: "2026-11-22T" + LocalCalendar.twoDigits($0) + ":00", precipitationProbability: wet.contains($0) ? 60 : 20,
                                         weatherCode: 71) }
        }
        let strings: (String, [String: String]) -> String = { key, arguments in
            key + arguments.sorted { $0.key < $1.key }.map { " \($0.key)=\($0.value)" }.joined()
        }
        let two = RainOutlook(hours: hours([8, 9, 15]), from: 6)
        #expect(two.kind == .snow)
        #expect(two.sentence(strings: strings).hasPrefix("rain_two_spells from=08:00 from2=15:00"))
        #expect(RainOutlook(hours: hours([8, 10, 12]), from: 6).sentence(strings: strings).contains("rain_on_and_off from=08:00"))
        #expect(RainOutlook(hours: hours([8, 10, 12]), from: 6).sentence(strings: strings).contains("to=13:00"))
        let unknown = (0..<24).map { Forecast.Hour(time: "2026-11-22T" + LocalCalendar.twoDigits($0) + ":00") }
        #expect(RainOutlook(hours: unknown, from: 0).sentence(strings: strings) == "rain_unknown")
        let dry = Forecast.Day(date: "2026-11-22", precipitationProbability: 20)
        let snowy = Forecast.Day(date: "2026-11-23", weatherCode: 73, precipitationProbability: 90)
        #expect(RainOutlook.tomorrowChange(today: dry, tomorrow: snowy) == "tomorrow_wet_snow")
        #expect(RainOutlook.tomorrowChange(today: snowy, tomorrow: snowy) == nil)
        #expect(RainOutlook.tomorrowChange(today: dry, tomorrow: nil) == nil)
    }

    @Test func airQualityWithTheKoreanBandsAndWhereItCameFrom() throws {
        let stub = try UpstreamStub()
        stub.mode = .answer(try Self.answer(for: seoul, now: AppHarness.fixedNow, wet: 0..<0))
        stub.airQuality = try Self.air(for: seoul, now: AppHarness.fixedNow, pm10: 81.4, pm25: 35.2)
        let app = try AppHarness { $0.weatherProviders = ["open-meteo"]; $0.openMeteoURL = stub.url }
        let (_, page) = try app.page("/city/seoul?lang=ko")
        #expect(page.nodes("//*[@data-pm10]").first?["data-pm10"] == "81.4")
        #expect(page.nodes("//*[@data-pm25]").first?["data-pm25"] == "35.2")
        #expect(page.text("//section[@class='air']//li[1]") == "미세먼지 (PM10) 81 µg/m³ 나쁨")
        #expect(page.text("//section[@class='air']//li[2]") == "초미세먼지 (PM2.5) 35 µg/m³ 보통")
        #expect(page.text("//section[@class='air']/p[@class='air-source']") == "Open-Meteo (코페르니쿠스 CAMS 모델) · 14:45 GMT+9 업데이트")
        let (_, english) = try app.page("/city/seoul")
        #expect(english.text("//section[@class='air']//li[1]//span[contains(@class,'band')]") == "Unhealthy")
        #expect(stub.airQualityHits == 1)

        // The air's service failing costs the air only: the forecast still shows, without it.
        let failing = try UpstreamStub()
        failing.mode = .answer(try Self.answer(for: seoul, now: AppHarness.fixedNow, wet: 0..<0))
        failing.airQuality = Array(#"{"current":{"time":"2026-11-22T14:00","pm10":1e12}}"#.utf8)
        let without = try AppHarness { $0.weatherProviders = ["open-meteo"]; $0.openMeteoURL = failing.url }
        let (_, plain) = try without.page("/city/seoul")
        #expect(plain.count("//section[@data-day='today']") == 1)
        #expect(plain.count("//section[@class='air']") == 0)
    }

    /// Particulates are modelled hourly: a forecast refreshed more often keeps the air's values
    /// until they are an hour old, and then asks again.
    @Test func theAirIsAskedAgainHourlyNotWithEveryForecast() throws {
        let stub = try UpstreamStub()
        let app = try AppHarness { $0.weatherProviders = ["open-meteo"]; $0.openMeteoURL = stub.url; $0.weatherFreshFor = 600 }
        _ = try app.page("/city/seoul")
        #expect(stub.hits == 1 && stub.airQualityHits == 1)
        for (step, (forecasts, air)) in [(2, 1), (3, 1), (4, 1), (5, 1), (6, 1), (7, 2)].enumerated() {
            app.clock.advance(660) // past the forecast's ten minutes of freshness
            _ = try app.page("/city/seoul") // stale is shown at once; the refresh runs behind it
            let now = app.clock.read()
            // Stored, and its fetch landed: a forecast is stored a moment before its fetch ends,
            // and the next step's request (eleven minutes later by this clock, at once by the
            // machine's) would join that fetch instead of starting its own.
            try waitUntil("refresh \(step + 1) stored") {
                try app.count("SELECT count(*) FROM weather_cache WHERE fetched_at >= ?", [now]) == 1 && stub.airQualityHits >= air
                    && !app.application.weather.isFetching(seoul)
            }
            #expect(stub.hits == forecasts)
            #expect(stub.airQualityHits == air, "after \(660 * (step + 1)) s")
        }
    }

    @Test func koreanBandsAtTheirBoundaries() {
        let pm25: [(Double, AirQualityBand)] = [(0, .good), (15, .good), (15.4, .good), (15.5, .moderate), (35, .moderate), (36, .unhealthy),
                                                (75, .unhealthy), (76, .veryUnhealthy), (900, .veryUnhealthy)]
        let pm10: [(Double, AirQualityBand)] = [(30, .good), (31, .moderate), (80, .moderate), (81, .unhealthy), (150, .unhealthy),
                                                (151, .veryUnhealthy)]
        for (value, band) in pm25 { #expect(AirQualityBand.of(pm25: value) == band, "PM2.5 \(value)") }
        for (value, band) in pm10 { #expect(AirQualityBand.of(pm10: value) == band, "PM10 \(value)") }
        #expect([0, 2, 3, 5, 6, 7, 8, 10, 11, 15].map { UVBand.of($0) } == [.low, .low, .moderate, .moderate, .high, .high, .veryHigh, .veryHigh, .extreme, .extreme])
        #expect(CityWeatherView.compassKey(315) == "wind_nw" && CityWeatherView.compassKey(0) == "wind_n" && CityWeatherView.compassKey(359) == "wind_n"
                && CityWeatherView.compassKey(100) == "wind_e" && CityWeatherView.compassKey(-90) == "wind_w")
    }

    @Test func sunWindHumidityAndUVOnTodaysCard() throws {
        let stub = try UpstreamStub()
        stub.mode = .answer(try Self.answer(for: seoul, now: AppHarness.fixedNow, wet: 0..<0, sunrise: "07:13", sunset: "17:17", uv: 2.6,
                                            wind: 17.3, gusts: 38.9, direction: 315, humidity: 64))
        let app = try AppHarness { $0.weatherProviders = ["open-meteo"]; $0.openMeteoURL = stub.url }
        let (_, page) = try app.page("/city/seoul")
        let card = "//section[@data-day='today']"
        let sun = try #require(page.nodes(card + "//*[@data-sunrise]").first)
        #expect(sun["data-sunrise"] == "07:13" && sun["data-sunset"] == "17:17")
        #expect(sun.text == "Sunrise 07:13 · sunset 17:17")
        #expect(page.nodes(card + "//*[@data-wind]").first?["data-wind"] == "17.3")
        #expect(page.text(card + "//*[@data-wind]") == "Wind up to 17 km/h from the northwest, gusts 39 km/h")
        #expect(page.nodes(card + "//*[@data-humidity]").first?["data-humidity"] == "64")
        #expect(page.nodes(card + "//*[@data-uv]").first?["data-uv"] == "2.6")
        #expect(page.text(card + "//*[@data-uv]") == "UV index 3 (moderate)")
        // the other days' cards carry none of it
        #expect(page.count("//section[@data-day!='today']//ul[@class='details']") == 0)
        let (_, korean) = try app.page("/city/seoul?lang=ko")
        #expect(korean.text(card + "//*[@data-wind]") == "바람 최대 17km/h (북서풍), 순간 39km/h")
        #expect(korean.text(card + "//*[@data-uv]") == "자외선 지수 3 (보통)")
        #expect(korean.text(card + "//*[@data-sunrise]") == "해 뜨는 시각 07:13 · 해 지는 시각 17:17")
    }

    /// New York (a day behind Seoul at this hour), Kathmandu (+5:45) and Auckland after its
    /// midnight while UTC is still on the day before: each page reads its own local day and hour.
    @Test("local days and hours in other zones", arguments: [
        ("new-york-city", 0.0, "2026-11-22", 0),   // 00:45 EST
        ("kathmandu", 0, "2026-11-22", 11),         // 11:30 +05:45
        ("auckland", 6 * 3600, "2026-11-23", 0),    // 00:45 NZDT on the 23rd; 11:45 UTC on the 22nd
    ] as [(String, TimeInterval, String, Int)])
    func otherZones(slug: String, advance: TimeInterval, localDate: String, localHour: Int) throws {
        let city = try #require(CityIndexTests.index.city(slug: slug))
        let now = AppHarness.fixedNow.addingTimeInterval(advance)
        let stub = try UpstreamStub()
        stub.mode = .answer(try Self.answer(for: city, now: now, wet: (localHour + 2)..<(localHour + 4), sunrise: "05:58", sunset: "20:16"))
        stub.airQuality = try Self.air(for: city, now: now, pm10: 12, pm25: 7)
        let app = try AppHarness { $0.weatherProviders = ["open-meteo"]; $0.openMeteoURL = stub.url }
        app.clock.advance(advance)
        let (_, page) = try app.page("/city/" + slug)
        #expect(page.nodes("//section[@data-day='today']").first?["data-date"] == localDate)
        let hours = page.nodes("//div[@data-day='today']//li[@data-precip]")
        #expect(hours.count == 24)
        #expect(hours.indices.filter { hours[$0]["data-precip"] == "80" } == [localHour + 2, localHour + 3]) // the local hours
        #expect(page.text("//*[@data-rain-summary]")
                == "Rain likely from \(RainOutlook.clock(localHour + 2)) to \(RainOutlook.clock(localHour + 4)).")
        #expect(page.nodes("//*[@data-sunrise]").first?["data-sunrise"] == "05:58")
        #expect(page.nodes("//*[@data-pm25]").first?["data-pm25"] == "7")
        #expect(page.text("//section[@class='air']//li[2]//span[contains(@class,'band')]") == "Good")
    }

    @Test func theDemoGivesAllOfItLabelledAsDemo() throws {
        let app = try AppHarness()
        for slug in ["seoul", "auckland", "kathmandu"] {
            let (_, page) = try app.page("/city/" + slug)
            #expect(page.count("//div[@data-day='today']//li[@data-precip]") == 24, "\(slug)")
            #expect(page.count("//div[@data-day='tomorrow']//li[@data-precip]") == 24, "\(slug)")
            #expect(page.count("//*[@data-rain-summary]") == 1)
            for attribute in ["data-sunrise", "data-sunset", "data-wind", "data-humidity", "data-uv", "data-pm10", "data-pm25"] {
                let value = try #require(page.nodes("//*[@\(attribute)]").first?[attribute], "\(slug) \(attribute)")
                #expect(!value.isEmpty)
            }
            #expect(page.nodes("//section[@class='air']").first?["data-source"] == "demo")
            let source = try #require(page.text("//section[@class='air']/p[@class='air-source']"))
            #expect(source.hasPrefix("Demo data · updated") && source.hasSuffix("not measurements"))
        }
    }

    /// The sun's times the providers without them use, against published tables (within three
    /// minutes), and none in a polar night.
    @Test func sunTimesFromTheOrbit() throws {
        func local(_ slug: String, _ date: String) throws -> (String, String)? {
            SunTimes.local(date, city: try #require(CityIndexTests.index.city(slug: slug)))
        }
        func minutes(_ time: String) -> Int { Int(time.suffix(5).prefix(2))! * 60 + Int(time.suffix(2))! }
        let cases: [(String, String, String, String)] = [
            ("seoul", "2026-06-21", "05:11", "19:57"), ("seoul", "2026-11-22", "07:18", "17:17"),
            ("new-york-city", "2026-11-22", "06:52", "16:33"), ("auckland", "2026-11-23", "05:59", "20:14"),
        ]
        for (slug, date, rise, set) in cases {
            let times = try #require(try local(slug, date), "\(slug) \(date)")
            #expect(times.0.hasPrefix(date) && times.1.hasPrefix(date))
            #expect(abs(minutes(times.0) - minutes(rise)) <= 3, "\(slug) \(date) sunrise \(times.0)")
            #expect(abs(minutes(times.1) - minutes(set)) <= 3, "\(slug) \(date) sunset \(times.1)")
        }
        #expect(SunTimes.of(date: "2026-12-21", latitude: 78.2, longitude: 15.6) == nil) // Longyearbyen, polar night
    }

    @Test func implausibleDetailsAreRefusedLikeTemperatures() throws {
        var forecast = try DemoProvider().forecast(for: seoul, now: AppHarness.fixedNow)
        #expect(throws: Never.self) { try forecast.checked() }
        forecast.daily[1].windSpeedMax = .infinity
        #expect(throws: UpstreamError.self) { try forecast.checked() }
        forecast.daily[1].windSpeedMax = 10
        forecast.daily[1].uvIndexMax = 1e9
        #expect(throws: UpstreamError.self) { try forecast.checked() }
        forecast.daily[1].uvIndexMax = 3
        forecast.daily[1].sunrise = "07:12"
        #expect(throws: UpstreamError.self) { try forecast.checked() }
        forecast.daily[1].sunrise = nil
        forecast.hourly[3].humidity = 140
        #expect(throws: UpstreamError.self) { try forecast.checked() }
        forecast.hourly[3].humidity = 40
        forecast.airQuality = Forecast.AirQuality(source: "open-meteo", fetchedAt: AppHarness.fixedNow, time: "2026-11-22T14:00", pm10: -3)
        #expect(throws: UpstreamError.self) { try forecast.checked() }
    }
}
