import Foundation
import Testing
import HTTPTestSupport
@testable import Weatherboard

/// Issue 41 #2: rain alerts on a member's schedule, from a stub Open-Meteo with known hours and a
/// clock the test moves. The test's "now" is Sunday 2026-11-22, 14:45 in Seoul.
@Suite(.serialized, .onEveryEngine) struct RainAlertTests {
    static let seoul = CityIndexTests.index.city(slug: "seoul")!

    /// A site whose forecasts come from `stub`, checking windows every tenth of a second.
    static func site(_ stub: UpstreamStub, configure: @escaping (inout AppConfiguration) -> Void = { _ in }) throws -> AppHarness {
        try AppHarness { configuration in
            configuration.weatherProviders = ["open-meteo"]
            configuration.openMeteoURL = stub.url
            configuration.scheduleInterval = 0.1
            configure(&configuration)
        }
    }

    /// Seoul's forecast with rain likely (80 %) over `wet` hours today, dry otherwise.
    static func rainy(_ wet: Range<Int>) throws -> UpstreamStub.Mode {
        .answer(try WeatherDetailsTests.answer(for: seoul, now: AppHarness.fixedNow, wet: wet))
    }

    /// A member who bookmarked Seoul and keeps a window there.
    static func member(_ app: AppHarness, _ username: String, days: String = "daily", from: String = "17:00", to: String = "19:00",
                       lead: String = "60") throws -> Browser {
        let member = app.browser()
        try member.signUp(username)
        try member.get("/city/seoul")
        #expect(try member.post("/bookmarks/seoul", []).0.status == 303)
        try member.get("/settings/rain-alerts")
        let (added, _) = try member.post("/settings/rain-alerts", [("city", "seoul"), ("days", days), ("from", from), ("to", to),
                                                                    ("lead_minutes", lead)])
        #expect(added.status == 303)
        return member
    }

    /// Moves the clock to `hour:minute` in Seoul today and lets the checker run a few rounds.
    static func at(_ app: AppHarness, _ hour: Int, _ minute: Int) throws {
        let target = AppHarness.fixedNow.addingTimeInterval(Double((hour - 14) * 3600 + (minute - 45) * 60))
        app.clock.advance(target.timeIntervalSince(app.clock.read()))
        try app.waitForRounds(of: "rain alerts")
    }

    static func alerts(_ app: AppHarness, _ kind: String = "rain") throws -> Int {
        try app.count("SELECT count(*) FROM notifications WHERE kind = ?", [kind])
    }

    @Test func toldOnceAtTheWindowsStartLessTheLeadInTheCityPagesWords() throws {
        let stub = try UpstreamStub()
        stub.mode = try Self.rainy(17..<20)
        let app = try Self.site(stub)
        let member = try Self.member(app, "commuter")
        try app.waitForRounds(of: "rain alerts")
        #expect(try Self.alerts(app) == 0, "14:45: the window's telling time (16:00) has not come")
        try Self.at(app, 15, 59)
        #expect(try Self.alerts(app) == 0)
        try Self.at(app, 16, 0)
        try waitUntil("the alert at 16:00", timeout: 20) { try Self.alerts(app) == 1 }
        try Self.at(app, 16, 30)
        #expect(try Self.alerts(app) == 1, "once per window and day")

        let (_, list) = try member.get("/notifications")
        #expect(list.text("//li[@data-notification='rain']/a") == "Rain likely 17:00–19:00 in Seoul, stopping around 20:00.")
        #expect(list.nodes("//li[@data-notification='rain']/a").first?["href"] == "/city/seoul")
        member.acceptLanguage = "ko"
        let (_, korean) = try member.get("/notifications?lang=ko")
        #expect(korean.text("//li[@data-notification='rain']/a") == "서울: 17:00–19:00에 비 올 가능성이 높아요. 20:00쯤 그쳐요.")

        // Kept 90 days, with the notice that told it (the clock past the window: nothing told again).
        try Self.at(app, 20, 0)
        try app.application.janitor.purge(now: AppHarness.fixedNow.addingTimeInterval(89 * 86_400))
        #expect(try app.count("SELECT count(*) FROM rain_alerts") == 1)
        try app.application.janitor.purge(now: AppHarness.fixedNow.addingTimeInterval(91 * 86_400))
        #expect(try app.count("SELECT count(*) FROM rain_alerts") == 0 && Self.alerts(app) == 0)
    }

    @Test func noLongerExpectedIsToldOnceWhenTheForecastTurnsDry() throws {
        let stub = try UpstreamStub()
        stub.mode = try Self.rainy(17..<19)
        let app = try Self.site(stub) { $0.weatherFreshFor = 600 }
        let member = try Self.member(app, "walker")
        try Self.at(app, 16, 0)
        try waitUntil("the alert", timeout: 20) { try Self.alerts(app) == 1 }
        stub.mode = try Self.rainy(0..<0)
        try Self.at(app, 16, 11) // the forecast is stale: refreshed, dry now
        try waitUntil("no longer expected", timeout: 20) { try Self.alerts(app, "rain_cleared") == 1 }
        try Self.at(app, 16, 30)
        #expect(try Self.alerts(app, "rain_cleared") == 1 && Self.alerts(app) == 1)
        let (_, list) = try member.get("/notifications")
        #expect(list.text("//li[@data-notification='rain_cleared']/a") == "Rain no longer expected 17:00–19:00 in Seoul.")
    }

    @Test func noneOutsideTheWindowsDaysNorForACityNoLongerBookmarked() throws {
        let stub = try UpstreamStub()
        stub.mode = try Self.rainy(17..<20)
        let app = try Self.site(stub)
        _ = try Self.member(app, "office", days: "weekdays") // the test's day is a Sunday
        let leaver = try Self.member(app, "leaver")
        try leaver.get("/city/seoul")
        #expect(try leaver.post("/bookmarks/seoul/delete", []).0.status == 303)
        #expect(try app.count("SELECT count(*) FROM rain_windows") == 1, "unbookmarking ends the city's windows")
        try Self.at(app, 16, 0)
        try Self.at(app, 17, 30)
        #expect(try Self.alerts(app) == 0)
    }

    /// A window that is told during quiet hours lasting past its end: on the site, never pushed;
    /// rain alerts are pushed by default.
    @Test func quietHoursThatOutlastTheWindowHoldItsPushForGood() throws {
        guard TestSubscriber.available() else { return }
        let stub = try UpstreamStub()
        stub.mode = try Self.rainy(17..<20)
        let service = try PushServiceStandIn()
        let app = try Self.site(stub) { configuration in
            configuration.pushContact = "mailto:ops@example.org"
            configuration.pushExtraOrigins = [service.origin]
            configuration.pushPollInterval = 0.1
        }
        let subscriber = TestSubscriber()
        for (name, quiet) in [("pushed", false), ("sleeper", true)] {
            let member = try Self.member(app, name)
            #expect(try member.json("POST", "/push/subscriptions", subscriber.json(endpoint: service.endpoint(name))).status == 201)
            if quiet {
                try member.get("/settings/notifications")
                #expect(try member.post("/settings/notifications", [("rain_site", "on"), ("rain_push", "on"), ("quiet_from", "15:00"),
                                                                    ("quiet_to", "20:00"), ("time_zone", "Asia/Seoul")]).0.status == 303)
            }
        }
        try Self.at(app, 16, 0)
        try waitUntil("both told on the site, one pushed", timeout: 20) {
            try Self.alerts(app) == 2 && service.receivedFor("pushed").count == 1
        }
        let pushed = try JSONSerialization.jsonObject(with: Data(try subscriber.decrypt(try #require(service.receivedFor("pushed").first).body).utf8))
            as? [String: String]
        #expect(pushed?["body"] == "Rain likely 17:00–19:00 in Seoul, stopping around 20:00.")
        #expect(pushed?["url"] == "/city/seoul")
        try Self.at(app, 20, 0)
        #expect(service.receivedFor("sleeper").isEmpty)
    }

    @Test func theFormKeepsWhatWasTypedAndSaysEveryProblem() throws {
        let app = try AppHarness()
        let member = app.browser()
        try member.signUp("planner")
        let (_, empty) = try member.get("/settings/rain-alerts")
        #expect(empty.count("//form[@action='/settings/rain-alerts']") == 0, "no bookmarks: nothing to choose from")
        try member.get("/city/seoul")
        #expect(try member.post("/bookmarks/seoul", []).0.status == 303)
        try member.get("/settings/rain-alerts")
        let (refused, page) = try member.post("/settings/rain-alerts", [("city", "busan"), ("days", "daily"), ("from", "07:00"),
                                                                         ("to", "07:00"), ("lead_minutes", "9999")])
        #expect(refused.status == 422)
        #expect(page?.count("//div[@id='rain-errors']/p") == 3, "the city, the times and the lead, at once")
        #expect(page?.nodes("//input[@name='from']").first?["value"] == "07:00")
        #expect(page?.nodes("//input[@name='lead_minutes']").first?["value"] == "9999")
        #expect(page?.nodes("//select[@name='days']/option[@selected]").first?["value"] == "daily")
        #expect(try app.count("SELECT count(*) FROM rain_windows") == 0)

        #expect(try member.post("/settings/rain-alerts", [("city", "seoul"), ("days", "weekends"), ("from", "22:00"),
                                                            ("to", "02:00"), ("lead_minutes", "30")]).0.status == 303)
        let (_, listed) = try member.get("/settings/rain-alerts")
        #expect(listed.count("//*[@data-rain-window]") == 1)
        #expect(listed.nodes("//*[@data-rain-window]").first?["data-city"] == "seoul")
        #expect(listed.text("//*[@data-rain-window]")?.contains("Weekends 22:00–02:00") == true)

        // Another member cannot remove it.
        let other = app.browser()
        try other.signUp("stranger")
        try other.get("/settings/rain-alerts")
        let id = listed.nodes("//*[@data-rain-window]").first?["data-rain-window"] ?? ""
        try other.post("/settings/rain-alerts/\(id)/delete", [])
        #expect(try app.count("SELECT count(*) FROM rain_windows") == 1)
        try member.get("/settings/rain-alerts")
        #expect(try member.post("/settings/rain-alerts/\(id)/delete", []).0.status == 303)
        #expect(try app.count("SELECT count(*) FROM rain_windows") == 0)
    }

    @Test func windowsInTime() throws {
        let seoulZone = Self.seoul.timeZone
        // Sunday 14:45: a daily 17:00–19:00 window told 60 minutes ahead comes at 16:00.
        let daily = RainWindow(id: 1, userID: 1, cityID: 1, days: .daily, start: 17 * 60, end: 19 * 60, lead: 60)
        #expect(daily.occurrences(at: AppHarness.fixedNow, in: seoulZone).isEmpty)
        let four = AppHarness.fixedNow.addingTimeInterval(75 * 60)
        #expect(daily.occurrences(at: four, in: seoulZone).map(\.day) == ["2026-11-22"])
        #expect(daily.occurrences(at: four.addingTimeInterval(-1), in: seoulZone).isEmpty)
        // Weekdays: not on Sunday; Monday's comes on Monday.
        var weekdays = daily
        weekdays.days = .weekdays
        #expect(weekdays.occurrences(at: four, in: seoulZone).isEmpty)
        #expect(weekdays.occurrences(at: four.addingTimeInterval(86_400), in: seoulZone).map(\.day) == ["2026-11-23"])
        // Across midnight: 23:00–01:00 is still Sunday's at 00:30 on Monday.
        let night = RainWindow(id: 2, userID: 1, cityID: 1, days: .weekends, start: 23 * 60, end: 60, lead: 0)
        let halfPastMidnight = AppHarness.fixedNow.addingTimeInterval((9 * 60 + 45) * 60)
        #expect(night.occurrences(at: halfPastMidnight, in: seoulZone).map(\.day) == ["2026-11-22"])
        // A lead that reaches back into the day before.
        let early = RainWindow(id: 3, userID: 1, cityID: 1, days: .daily, start: 30, end: 120, lead: 90)
        #expect(early.occurrences(at: halfPastMidnight.addingTimeInterval(-3600), in: seoulZone).map(\.day) == ["2026-11-23"])
    }

    @Test func whatTheForecastSaysOfAWindow() throws {
        func hours(_ wet: Set<Int>, snow: Set<Int> = [], through last: Int = 23) -> [Forecast.Hour] {
            (0...last).map { hour in
                Forecast.Hour(time: "2026-11-22T" + LocalCalendar.twoDigits(hour) + ":00", temperature: 5, apparentTemperature: 3,
                              precipitationProbability: wet.contains(hour) || snow.contains(hour) ? 70 : 20,
                              weatherCode: snow.contains(hour) ? 73 : 61, humidity: 80)
            }
        }
        let zone = Self.seoul.timeZone
        let window = RainWindow(id: 1, userID: 1, cityID: 1, days: .daily, start: 7 * 60 + 30, end: 9 * 60, lead: 60)
        let morning = AppHarness.fixedNow.addingTimeInterval(-8 * 3600) // 06:45
        let occurrence = try #require(window.occurrences(at: morning, in: zone).first)
        // Rain from 06:00 to 11:00: likely from the window's start to its end, stopping at 11:00.
        #expect(RainInWindow(hours([6, 7, 8, 9, 10]), occurrence, now: morning, in: zone)
            == RainInWindow(from: "2026-11-22T07:30", to: "2026-11-22T09:00", stopsAt: "2026-11-22T11:00", kind: .rain))
        // Only after the window: nothing.
        #expect(RainInWindow(hours([9, 10]), occurrence, now: morning, in: zone) == nil)
        // Snow at 08:00 only; a forecast that ends while it still snows says no stop.
        #expect(RainInWindow(hours([], snow: [8]), occurrence, now: morning, in: zone)?.kind == .snow)
        #expect(RainInWindow(hours([8]), occurrence, now: morning, in: zone)?.stopsAt == "2026-11-22T09:00")
        #expect(RainInWindow(hours([8], through: 8), occurrence, now: morning, in: zone)?.stopsAt == nil)
        // Hours already past are not told: at 08:10 the 07:00 rain is over.
        #expect(RainInWindow(hours([7]), occurrence, now: morning.addingTimeInterval(85 * 60), in: zone) == nil)
        #expect(RainInWindow.hourAfter("2026-12-31T23:00") == "2027-01-01T00:00")
    }
}

extension RainAlertTests {
    /// An answer whose times the calendar cannot read ends nothing and loops nowhere.
    @Test func timesThatAreNotTimesEndTheSpell() throws {
        let zone = Self.seoul.timeZone
        let window = RainWindow(id: 1, userID: 1, cityID: 1, days: .daily, start: 0, end: 1439, lead: 0)
        let occurrence = try #require(window.occurrences(at: AppHarness.fixedNow, in: zone).first)
        let odd = ["2026-11-22T23:00", "2026-11-2xT23:00", "2026-11-22T99:00", "2026-11-22T15:00"].map {
            Forecast.Hour(time: $0, temperature: nil, apparentTemperature: nil, precipitationProbability: 90, weatherCode: 61, humidity: nil)
        }
        let rain = RainInWindow(odd, occurrence, now: AppHarness.fixedNow, in: zone)
        #expect(rain?.from == "2026-11-22T15:00" && rain?.stopsAt == nil)
    }
}
