import Foundation
import HTTPServer
import Testing
@testable import Weatherboard

/// Issue 20 #4: numbers from the weather upstream can neither end the process nor stay in the
/// cache, and what the upstream sends is bounded.
@Suite(.serialized, .onEveryEngine) struct UpstreamHardeningTests {
    let seoul = CityIndexTests.index.city(slug: "seoul")!

    static let impossibleAnswers: [(String, @Sendable (inout [String: Any]) -> Void)] = [
        ("a daily high of 1e19", { answer in Self.change(&answer, "daily", "temperature_2m_max", at: 1, to: 1e19) }),
        ("a daily low of -1e300", { answer in Self.change(&answer, "daily", "temperature_2m_min", at: 1, to: -1e300) }),
        ("a current temperature of 1e19", { answer in
            var current = answer["current"] as! [String: Any]
            current["temperature_2m"] = 1e19
            answer["current"] = current
        }),
        ("an hourly value of 1e19", { answer in Self.change(&answer, "hourly", "temperature_2m", at: 30, to: 1e19) }),
        ("hourly values spread over ±1e15", { answer in
            Self.change(&answer, "hourly", "temperature_2m", at: 30, to: 1e15)
            Self.change(&answer, "hourly", "temperature_2m", at: 31, to: -1e15)
        }),
        ("a chance of rain of 400 %", { answer in Self.change(&answer, "daily", "precipitation_probability_max", at: 1, to: 400) }),
        ("days repeated", { answer in
            var daily = answer["daily"] as! [String: Any]
            var times = daily["time"] as! [String]
            times[2] = times[1]
            daily["time"] = times
            answer["daily"] = daily
        }),
    ]

    static func change(_ answer: inout [String: Any], _ block: String, _ field: String, at index: Int, to value: Any) {
        var section = answer[block] as! [String: Any]
        var values = section[field] as! [Any]
        values[index] = value
        section[field] = values
        answer[block] = section
    }

    /// Each impossible answer is refused before it is stored: the page shows the next provider's
    /// data, nothing of the answer is cached, and the process (and its `/healthz`) lives on.
    @Test(arguments: impossibleAnswers.indices)
    func anImpossibleAnswerIsRefusedAndNeverStored(case index: Int) throws {
        let (name, change) = Self.impossibleAnswers[index]
        let stub = try UpstreamStub()
        stub.mode = .answer(try UpstreamStub.recorded(changing: change))
        let app = try AppHarness { $0.weatherProviders = ["open-meteo", "demo"]; $0.openMeteoURL = stub.url }
        let (response, page) = try app.page("/city/seoul")
        #expect(response.status == 200, "\(name)")
        #expect(page.count("//p[@class='provenance'][@data-source='demo']") == 1, "\(name)")
        #expect(try app.count("SELECT count(*) FROM weather_cache WHERE provider = 'open-meteo'") == 0, "\(name)")
        #expect(stub.hits == 1, "\(name)")
        #expect(try app.get("/healthz").status == 200, "\(name)")
    }

    /// A row already in the shared cache with an impossible number (written by an older version,
    /// or by hand) is discarded when it is read, and the page renders from a fresh fetch.
    @Test func aCachedRowWithAnImpossibleNumberIsDiscardedWhenRead() throws {
        let app = try AppHarness { $0.weatherProviders = ["demo"] }
        let cityID = try app.count("SELECT id FROM cities WHERE slug = 'seoul'")
        var forecast = try DemoProvider().forecast(for: seoul, now: AppHarness.fixedNow)
        forecast.source = "open-meteo"
        forecast.daily[1].high = 1e19
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        let payload = String(decoding: try encoder.encode(forecast), as: UTF8.self)
        try app.execute("INSERT INTO weather_cache (city_id, provider, fetched_at, payload) VALUES (?, 'open-meteo', ?, ?)",
                        [Int64(cityID), AppHarness.fixedNow, payload])
        let (response, _) = try app.page("/city/seoul")
        #expect(response.status == 200)
        #expect(try app.count("SELECT count(*) FROM weather_cache WHERE provider = 'open-meteo'") == 0)
        #expect(try app.count("SELECT count(*) FROM weather_cache WHERE provider = 'demo'") == 1)
        #expect(try app.get("/healthz").status == 200)
    }

    @Test func anAnswerLargerThanTheBoundIsAFailureReadNoFurther() throws {
        let stub = try UpstreamStub()
        stub.mode = .answer(Array(repeating: UInt8(ascii: " "), count: HTTPFetch.maximumBytes + 1))
        do {
            _ = try OpenMeteoProvider(baseURL: stub.url, timeout: 5).forecast(for: seoul, now: AppHarness.fixedNow)
            Issue.record("expected a failure")
        } catch let error as UpstreamError {
            #expect(error.description.contains("larger than"), "\(error)")
        }
    }

    @Test func aRedirectToAnotherHostIsNotFollowed() throws {
        let stub = try UpstreamStub()
        let elsewhere = try UpstreamStub()
        // 127.0.0.2 is another host to URLSession, though the same machine.
        stub.mode = .redirect("http://127.0.0.2:\(elsewhere.server.port)/v1/forecast?past_days=1")
        do {
            _ = try OpenMeteoProvider(baseURL: stub.url, timeout: 5).forecast(for: seoul, now: AppHarness.fixedNow)
            Issue.record("expected a failure")
        } catch let error as UpstreamError {
            #expect(error.description.contains("302"), "\(error)")
        }
        #expect(elsewhere.hits == 0)
        // Nor to another port of this host; on the same scheme, host and port, it is followed.
        stub.mode = .redirect("\(elsewhere.url)/moved")
        #expect(throws: UpstreamError.self) { try OpenMeteoProvider(baseURL: stub.url, timeout: 5).forecast(for: seoul, now: AppHarness.fixedNow) }
        #expect(elsewhere.hits == 0)
        stub.mode = .redirect("\(stub.url)/moved")
        let forecast = try OpenMeteoProvider(baseURL: stub.url, timeout: 5).forecast(for: seoul, now: AppHarness.fixedNow)
        #expect(forecast.day("2026-11-22")?.high == 12.5)
    }
}

@Suite struct ForecastCheckTests {
    let seoul = CityIndexTests.index.city(slug: "seoul")!

    /// KMA's `nan` (and `inf`) parse as Doubles; they are missing values, never converted.
    @Test func kmaNonNumbersAreMissingValues() throws {
        func item(_ category: String, _ time: String, _ value: String) -> String {
            "<item><category>\(category)</category><fcstDate>20261122</fcstDate><fcstTime>\(time)</fcstTime><fcstValue>\(value)</fcstValue></item>"
        }
        let xml = """
            <response><header><resultCode>00</resultCode><resultMsg>NORMAL_SERVICE</resultMsg></header><body><items>
            \(item("TMP", "1400", "nan"))\(item("POP", "1400", "nan"))\(item("POP", "1500", "1e19"))\(item("TMP", "1500", "inf"))\(item("SKY", "1500", "-nan"))
            \(item("TMP", "1600", "7"))
            </items></body></response>
            """
        let items = try KMAProvider.parse(Array(xml.utf8))
        #expect(items.count == 6)
        #expect(items.filter { $0.value != nil }.count == 1)
        let forecast = try KMAProvider.forecast(from: items, now: AppHarness.fixedNow, city: seoul).checked()
        #expect(forecast.hourly.compactMap(\.temperature) == [7])
    }

    /// Random and extreme answers (numbers from ±1e300 to NaN-like strings, arrays of any length,
    /// times in any order) never crash decoding, checking or rendering; whatever passes the check
    /// is within range, and the page made from it has at most six chart ticks.
    @Test func randomAndExtremeAnswersNeverCrashAndNothingOutOfRangePasses() throws {
        var random = SeededGenerator(seed: 20)
        let extremes: [Any] = [1e300, -1e300, 1e19, -1e19, 1e15, -1e15, 70.0, 70.1, -100.0, -100.5, 0.0, 12.5, NSNull(), 9.2e18, -0.0]
        let integers: [Any] = [0, 100, 101, -1, 99, 1 << 40, NSNull(), 3]
        // Half the answers carry a few extreme values; the others are ordinary (or missing) values.
        var poisoned = false
        func number() -> Any {
            if poisoned && random.next() % 16 == 0 { return extremes[Int(random.next() % UInt64(extremes.count))] }
            return random.next() % 10 == 0 ? NSNull() : Double(Int(random.next() % 1_300)) / 10 - 60
        }
        func integer() -> Any {
            if poisoned && random.next() % 16 == 0 { return integers[Int(random.next() % UInt64(integers.count))] }
            return Int(random.next() % 101)
        }
        let local = LocalCalendar(seoul.timeZone)
        var passed = 0
        for _ in 0..<400 {
            poisoned = random.next() % 2 == 0
            let days = Int(random.next() % 20)
            let hours = Int(random.next() % 420)
            let shuffle = random.next() % 4 == 0
            var dayTimes = (0..<days).map { local.dateString(AppHarness.fixedNow, offset: $0 - 1) }
            var hourTimes = (0..<hours).map { String(format: "%@T%02d:00", local.dateString(AppHarness.fixedNow, offset: $0 / 24 - 1), $0 % 24) }
            if shuffle { dayTimes.shuffle(using: &random); hourTimes.shuffle(using: &random) }
            let answer: [String: Any] = [
                "utc_offset_seconds": 32400,
                "current": ["time": "2026-11-22T14:45", "temperature_2m": number(), "apparent_temperature": number(), "weather_code": integer()],
                "daily": ["time": dayTimes, "temperature_2m_max": dayTimes.map { _ in number() }, "temperature_2m_min": dayTimes.map { _ in number() },
                          "weather_code": dayTimes.map { _ in integer() }, "precipitation_probability_max": dayTimes.map { _ in integer() }],
                "hourly": ["time": hourTimes, "temperature_2m": hourTimes.map { _ in number() },
                           "precipitation_probability": hourTimes.map { _ in integer() }],
            ]
            let data = try JSONSerialization.data(withJSONObject: answer)
            guard let forecast = try? OpenMeteoProvider.decode(data, fetchedAt: AppHarness.fixedNow),
                  let checked = try? forecast.checked() else { continue }
            passed += 1
            let temperatures = checked.daily.flatMap { [$0.high, $0.low] } + checked.hourly.map(\.temperature) + [checked.current?.temperature]
            #expect(temperatures.compactMap { $0 }.allSatisfy { Forecast.plausibleCelsius.contains($0) })
            #expect((checked.daily.compactMap(\.precipitationProbability) + checked.hourly.compactMap(\.precipitationProbability))
                .allSatisfy { (0...100).contains($0) })
            #expect(checked.daily.count <= Forecast.maximumDays && checked.hourly.count <= Forecast.maximumHours)
            let view = CityWeatherView(city: seoul, report: WeatherReport(forecast: checked, source: "open-meteo"), now: AppHarness.fixedNow,
                                       language: .en) { key, _ in key }.view
            #expect((view.chart?.yTicks.count ?? 0) <= 6)
        }
        #expect(passed > 20, "some random answers are plausible: \(passed)")
    }

    /// The chart's ticks are bounded even for a forecast that was never checked (hours spread
    /// over ±1e15 once made the tick loop run until memory ran out).
    @Test func theChartsTicksAreBoundedWhateverTheSpread() throws {
        var forecast = try DemoProvider().forecast(for: seoul, now: AppHarness.fixedNow)
        let today = LocalCalendar(seoul.timeZone).dateString(AppHarness.fixedNow)
        let indices = forecast.hourly.indices.filter { forecast.hourly[$0].time.hasPrefix(today) }
        forecast.hourly[indices[0]].temperature = 1e15
        forecast.hourly[indices[1]].temperature = -1e15
        forecast.daily[1].high = 1e19
        let view = CityWeatherView(city: seoul, report: WeatherReport(forecast: forecast, source: "demo"), now: AppHarness.fixedNow,
                                   language: .en) { key, _ in key }.view
        #expect((view.chart?.yTicks.count ?? 0) <= 6)
        #expect(throws: UpstreamError.self) { try forecast.checked() }
    }
}

/// Issue 20 #8: one client crawling cold cities cannot spend the provider's quota for everyone.
@Suite(.serialized, .onEveryEngine) struct FetchBudgetTests {
    @Test func aClientsColdFetchesAndTheNodesFetchesAMinuteAreBounded() throws {
        let stub = try UpstreamStub()
        let app = try AppHarness {
            $0.weatherProviders = ["open-meteo"]
            $0.openMeteoURL = stub.url
            $0.weatherFetchBudget = WeatherService.FetchBudget(perMinute: 4, coldPerClient: 2, clientWindow: 600)
        }
        let crawler = app.browser()
        var shown: [Bool] = []
        for slug in ["busan", "incheon", "daegu"] {
            shown.append(try crawler.get("/city/\(slug)").1.count("//p[@class='weather-unavailable']") == 0)
        }
        #expect(shown == [true, true, false])
        #expect(stub.hits == 2)
        // The node's fetches a minute bound every client together.
        let neighbour = try AppHarness(sharedDatabase: nil) {
            $0.weatherProviders = ["open-meteo"]
            $0.openMeteoURL = stub.url
            $0.weatherFetchBudget = WeatherService.FetchBudget(perMinute: 2, coldPerClient: 100, clientWindow: 600)
        }
        let visitor = neighbour.browser()
        let before = stub.hits
        var neighbourShown: [Bool] = []
        for slug in ["gwangju", "daejeon", "ulsan"] {
            neighbourShown.append(try visitor.get("/city/\(slug)").1.count("//p[@class='weather-unavailable']") == 0)
        }
        #expect(neighbourShown == [true, true, false])
        #expect(stub.hits == before + 2)
        // A minute later the node may fetch again (another address of the page: the guest copy
        // of the first is kept for half a minute).
        neighbour.clock.advance(61)
        let (again, page) = try visitor.get("/city/ulsan?before=1000000")
        #expect(again.status == 200)
        #expect(page.count("//p[@class='weather-unavailable']") == 0)
    }
}

/// Issue 39 #4: a hundred addresses, each within a client's share of cold fetches, could spend
/// the provider's hourly and daily quota in half an hour; the node's cold fetches an hour bound
/// them together.
@Suite(.serialized, .onEveryEngine) struct ColdFetchQuotaTests {
    @Test func manyAddressesTogetherGetTheNodesColdFetchesAnHourNoMore() throws {
        let stub = try UpstreamStub()
        let app = try AppHarness {
            $0.weatherProviders = ["open-meteo"]
            $0.openMeteoURL = stub.url
            $0.weatherFetchBudget = WeatherService.FetchBudget(perMinute: 100, coldPerClient: 2, clientWindow: 3600, coldPerHour: 3)
        }
        var shown: [Bool] = []
        for (index, slug) in ["busan", "incheon", "daegu", "gwangju"].enumerated() {
            let crawler = app.browser()
            crawler.source = "127.0.0.\(index + 2)" // another address each time: every one within its own share
            shown.append(try crawler.get("/city/\(slug)").1.count("//p[@class='weather-unavailable']") == 0)
        }
        #expect(shown == [true, true, true, false])
        #expect(stub.hits == 3)
        // A cold fetch comes back every 20 minutes (an hour's three, spread).
        app.clock.advance(1_200)
        let late = app.browser()
        late.source = "127.0.0.9"
        #expect(try late.get("/city/daejeon").1.count("//p[@class='weather-unavailable']") == 0)
        #expect(stub.hits == 4)
    }
}

/// Issue 39 #4: an upstream's error reason was logged whole and unescaped: megabytes from one
/// page view, and a newline in it forged the next log line.
@Suite struct UpstreamReasonsInTheLogTests {
    @Test func aReasonIsOneEscapedLineOfBoundedLength() throws {
        let stub = try UpstreamStub()
        let forged = "bad query\n2026-11-26T05:00:00.000Z notice weatherboard: admin password reset" + String(repeating: "x", count: 200_000)
        stub.mode = .refusal(Array(try JSONSerialization.data(withJSONObject: ["error": true, "reason": forged])))
        let app = try AppHarness { $0.weatherProviders = ["open-meteo", "demo"]; $0.openMeteoURL = stub.url }
        #expect(try app.get("/city/seoul").status == 200)
        let said = app.log.lines.filter { $0.contains("weather provider open-meteo failed for seoul") }
        #expect(!said.isEmpty)
        for line in said {
            #expect(!line.contains("\n"), "one line")
            #expect(line.count < 600, "bounded: \(line.count) characters")
            #expect(line.contains("\\u{a}2026-11-26T05:00:00.000Z"), "the newline shown, not obeyed")
        }
    }
}
