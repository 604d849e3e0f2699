import Foundation
import Testing
@testable import Weatherboard

/// Issue 43 #4: the surge rule over synthetic rates, then the flag as pages show it.
@Suite struct SurgeRuleTests {
    /// (people in the last half hour, people in that half hour on each of the 7 days before, surging)
    @Test("the rule", arguments: [
        (4, [0, 0, 0, 0, 0, 0, 0], false), // under the floor, however quiet the city usually is
        (5, [0, 0, 0, 0, 0, 0, 0], true),  // the floor
        (5, [], true),                     // a city with no history
        (5, [2, 2, 2, 2, 2, 2, 2], false), // the floor, but not three times the usual (6)
        (6, [2, 2, 2, 2, 2, 2, 2], true),
        (14, [5, 5, 5, 5, 5, 5, 4], false), // usual 4.86: 14.57 needed
        (15, [5, 5, 5, 5, 5, 5, 4], true),
        (119, [40, 40, 40, 40, 40, 40, 40], false), // a busy city needs many more than usual
        (120, [40, 40, 40, 40, 40, 40, 40], true),
        (30, [70, 0, 0, 0, 0, 0, 0], true), // one odd day weighs a seventh
        (0, [0, 0, 0, 0, 0, 0, 0], false),
    ])
    func theRule(recent: Int, baseline: [Int], surging: Bool) {
        #expect(Surge.isSurging(recent: recent, baseline: baseline) == surging)
    }
}

@Suite(.serialized, .onEveryEngine) struct SurgeTests {
    /// Members who each report `sky` on Seoul's board through the form.
    static func report(_ app: AppHarness, _ names: [String], sky: String) throws {
        for name in names {
            let member = app.browser()
            #expect(try member.signUp(name).status == 303)
            #expect(try ObservationTests.observe(member, "\(name) sees \(sky)", sky: sky, feels: nil).0.status == 303)
        }
    }

    @Test func aSurgeShowsOnTheCityPageTheHomeRowAndInSearchUntilItPasses() throws {
        let app = try AppHarness()
        // The usual: one person in this half hour on each of the last seven days (the floor rules).
        try Self.report(app, ["usual_one"], sky: "rain")
        for day in 1...7 {
            try app.execute("""
                INSERT INTO posts (city_id, user_id, body, created_at, sky)
                SELECT c.id, u.id, 'as usual', ?, 'rain' FROM cities c, users u WHERE c.slug = 'seoul' AND u.username = 'usual_one'
                """, [AppHarness.fixedNow.timeIntervalSince1970 - Double(day) * 86_400 - 600])
        }
        try Self.report(app, ["storm_a", "storm_b", "storm_c"], sky: "storm")
        #expect(try app.page("/city/seoul").1.count("//*[@data-surge]") == 0, "four people: under the floor")

        try Self.report(app, ["storm_d"], sky: "storm")
        var (_, page) = try app.page("/city/seoul")
        let line = try #require(page.nodes("//*[@data-surge-slot]/*[@data-surge]").first)
        #expect(line["data-count"] == "5")
        #expect(line.text == "Reports are surging: 5 in 30 minutes, mostly storm")
        #expect(try app.page("/city/seoul?lang=ko").1.text("//*[@data-surge]") == "제보 급증: 30분 동안 5명, 주로 뇌우")
        (_, page) = try app.page("/")
        #expect(page.count("//li[@data-slug='seoul']//*[@data-surge][@data-count='5']") == 1)
        #expect(page.count("//li[@data-slug='busan']//*[@data-surge]") == 0)
        (_, page) = try app.page("/search?q=seo")
        #expect(page.count("//li[a[@data-slug='seoul']]//*[@data-surge][@data-count='5']") == 1)
        (_, page) = try app.page("/city/seoul/surge")
        #expect(page.count("//*[@data-surge-slot='/city/seoul/surge']/*[@data-surge]") == 1, "the line alone, for a live page")

        // Half an hour on, it has passed.
        app.clock.advance(Surge.window + Surges.keptFor)
        (_, page) = try app.page("/city/seoul")
        #expect(page.count("//*[@data-surge]") == 0)
        #expect(page.count("//*[@data-surge-slot]") == 1, "the place for it stays")
    }

    /// A city that is always busy needs three times its usual: five people are not a surge where
    /// three report in that half hour every day.
    @Test func aBusyCityNeedsThreeTimesItsUsual() throws {
        let app = try AppHarness()
        try Self.report(app, ["day_a", "day_b", "day_c"], sky: "clouds")
        for day in 1...7 {
            try app.execute("""
                INSERT INTO posts (city_id, user_id, body, created_at, sky)
                SELECT c.id, u.id, 'daily', ?, 'clouds' FROM cities c, users u
                WHERE c.slug = 'seoul' AND u.username IN ('day_a', 'day_b', 'day_c')
                """, [AppHarness.fixedNow.timeIntervalSince1970 - Double(day) * 86_400 - 300])
        }
        try Self.report(app, ["new_a", "new_b"], sky: "rain")
        #expect(try app.page("/city/seoul").1.count("//*[@data-surge]") == 0, "5 people against a usual of 3")
        try Self.report(app, ["new_c", "new_d", "new_e", "new_f"], sky: "rain")
        let (_, page) = try app.page("/city/seoul")
        #expect(page.nodes("//*[@data-surge]").first?["data-count"] == "9")
    }
}

/// Issue 43 #3: the hourly bars count today's reports of each past and current hour, and mark an
/// hour "forecast missed" exactly at the threshold of people with standing (accounts older than a
/// day), never for new accounts, hidden posts or, for the member who blocked them, blocked people.
@Suite(.serialized, .onEveryEngine) struct HourReportTests {
    @Test func reportsOnTheHoursAndAForecastMissedAtTheThreshold() throws {
        let app = try AppHarness()
        for name in ["sky_a", "sky_b", "sky_c", "fresh_d"] { #expect(try app.browser().signUp(name).status == 303) }
        try app.execute("UPDATE users SET created_at = created_at - 2 * 86400 WHERE username <> 'fresh_d'")
        // Seoul's midnight today (UTC+9): 14:45 there is 05:45 UTC.
        let midnight = AppHarness.fixedNow.timeIntervalSince1970 - (14 * 3600 + 45 * 60)
        var (_, page) = try app.page("/city/seoul")
        let counted = page.nodes("//div[@data-day='today']//li[@data-reports]")
        #expect(counted.map { $0["data-hour"] }.last == "14", "past and current hours are counted, the rest not")
        #expect(page.count("//div[@data-day='tomorrow']//li[@data-reports]") == 0)
        // An hour whose forecast gave under 20 % (reports of rain miss it) or over 80 % (clear ones do).
        let hour = try #require(counted.first { Int($0["data-precip"] ?? "") ?? 50 < 20 || Int($0["data-precip"] ?? "") ?? 50 > 80 })
        let (hourText, chance) = (try #require(hour["data-hour"]), Int(hour["data-precip"]!)!)
        let sky = chance < 20 ? "rain" : "clear"
        func report(_ name: String) throws {
            try app.execute("""
                INSERT INTO posts (city_id, user_id, body, created_at, sky) SELECT c.id, u.id, ?, ?, ? FROM cities c, users u
                WHERE c.slug = 'seoul' AND u.username = ?
                """, ["\(name) saw \(sky)", midnight + Double(Int(hourText)!) * 3600 + 2400, sky, name]) // at :40, on its own hour's bar

            app.clock.advance(Surges.keptFor) // what is counted is read again a minute on
        }
        func bar() throws -> MarkupDocument.Node {
            try #require(try app.page("/city/seoul").1.nodes("//div[@data-day='today']//li[@data-hour='\(hourText)']").first)
        }
        try report("sky_a")
        try report("sky_b")
        try report("fresh_d")
        #expect(try bar()["data-missed"] == nil, "two with standing and a new account: not yet")
        #expect(try bar()["data-reports"] == (sky == "rain" ? "3" : "0"), "rain is counted from everyone; a clear sky is not rain")
        try report("sky_c")
        #expect(try bar()["data-missed"] != nil, "three with standing: missed, at \(hourText):00 (\(chance) %)")
        (_, page) = try app.page("/city/seoul")
        #expect(page.text("//*[@data-forecast-missed]") == "Forecast missed at \(hourText):00: what people here reported is not what it said.")
        // A member who blocked one of them counts without them: under the threshold for them
        // alone (their page says so; the guests' and the others' still say missed).
        let quiet = app.browser()
        try quiet.signUp("quiet_e")
        #expect(try quiet.post("/users/sky_c/block", []).0.status == 303)
        let mine = try #require(try quiet.get("/city/seoul").1.nodes("//div[@data-day='today']//li[@data-hour='\(hourText)']").first)
        #expect(mine["data-missed"] == nil, "without the one they blocked: two with standing")
        #expect(mine["data-reports"] == (sky == "rain" ? "3" : "0"))
        #expect(try bar()["data-missed"] != nil, "the guests' page is unchanged")
        let other = app.browser()
        try other.signUp("other_f")
        #expect(try other.get("/city/seoul").1.nodes("//div[@data-day='today']//li[@data-hour='\(hourText)'][@data-missed]").count == 1)
        // One of them hidden by reports: under the threshold again.
        try app.execute("UPDATE posts SET hidden_at = ? WHERE body = ?", [midnight, "sky_c saw \(sky)"])
        app.clock.advance(Surges.keptFor)
        #expect(try bar()["data-missed"] == nil)
    }

    /// The counts are held until what they read says they change, not re-read every minute: a
    /// reporter's account coming of standing and a post dated ahead of the clock (another node's)
    /// coming due change them without a write; a write the stores did not announce does not.
    @Test func countsHoldUntilStandingOrAPostComesDueAndChangeOnlyWithWrites() throws {
        let app = try AppHarness()
        for name in ["near_a", "near_b", "near_c", "late_d", "quiet_e"] { #expect(try app.browser().signUp(name).status == 303) }
        let now = AppHarness.fixedNow.timeIntervalSince1970
        // Of standing ten minutes from now.
        try app.execute("UPDATE users SET created_at = ? WHERE username LIKE 'near_%'", [now - HourReports.standingAge + 600])
        try app.execute("UPDATE users SET created_at = ? WHERE username NOT LIKE 'near_%'", [now - 2 * HourReports.standingAge])
        let midnight = now - (14 * 3600 + 45 * 60) // Seoul's, 14:45 there
        let (_, page) = try app.page("/city/seoul")
        let hours = page.nodes("//div[@data-day='today']//li[@data-reports]")
        let hour = try #require(hours.first { Int($0["data-precip"] ?? "") ?? 50 < 20 || Int($0["data-precip"] ?? "") ?? 50 > 80 })
        let (hourText, chance) = (try #require(hour["data-hour"]), Int(hour["data-precip"]!)!)
        let sky = chance < 20 ? "rain" : "clear"
        func post(_ name: String, sky: String, at time: Double, announced: Bool = true) throws {
            let sql = "INSERT INTO posts (city_id, user_id, body, created_at, sky) SELECT c.id, u.id, ?, ?, ? FROM cities c, users u WHERE c.slug = 'seoul' AND u.username = ?"
            let arguments: [any SQLArgument] = ["\(name) saw \(sky)", time, sky, name]
            if announced { return try app.execute(sql, arguments) }
            try app.application.database.write(.cluster) { db in try db.execute(sql, arguments.map { $0.sqlValue }) }
        }
        func bar(_ hour: String) throws -> MarkupDocument.Node {
            try #require(try app.page("/city/seoul").1.nodes("//div[@data-day='today']//li[@data-hour='\(hour)']").first)
        }
        for name in ["near_a", "near_b", "near_c"] { try post(name, sky: sky, at: midnight + Double(Int(hourText)!) * 3600 + 2400) }
        #expect(try bar(hourText)["data-missed"] == nil, "three reports, none with standing yet")
        app.clock.advance(601)
        #expect(try bar(hourText)["data-missed"] != nil, "the same three, of standing now: missed, with no write between")

        // A post dated four minutes ahead (in this hour still) (another node's clock) counts when it comes due.
        let reportsNow = Int(try bar("14")["data-reports"] ?? "") ?? -1
        try post("late_d", sky: "rain", at: app.clock.read().timeIntervalSince1970 + 240)
        #expect(Int(try bar("14")["data-reports"] ?? "") == reportsNow, "not yet")
        app.clock.advance(241)
        #expect(Int(try bar("14")["data-reports"] ?? "") == reportsNow + 1, "due now")

        // A write nobody announced shows only once something is: the counts are not read again
        // a minute on, nor twenty.
        try post("quiet_e", sky: "rain", at: app.clock.read().timeIntervalSince1970 - 60, announced: false)
        app.clock.advance(20 * 60)
        #expect(Int(try bar("14")["data-reports"] ?? "") == reportsNow + 1, "held")
        try app.execute("SELECT 1") // says anything may have changed
        #expect(Int(try bar("14")["data-reports"] ?? "") == reportsNow + 2)
    }
}
