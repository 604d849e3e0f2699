import Foundation
import HTTPTestSupport
import Testing
@testable import Weatherboard

/// Issue 22 #5: what people see outside, beside the forecast.
@Suite(.onEveryEngine) struct ObservationTests {
    static func observe(_ browser: Browser, _ text: String, sky: String?, feels: String?) throws -> (WireResponse, MarkupDocument?) {
        try browser.get("/city/seoul")
        var fields = [("body", text)]
        if let sky { fields.append(("sky", sky)) }
        if let feels { fields.append(("feels", feels)) }
        return try browser.post("/city/seoul/posts", fields)
    }

    static func tally(_ page: MarkupDocument) -> [String: String] {
        var counts: [String: String] = [:]
        for node in page.nodes("//*[@data-observations]//*[@data-sky]") { counts[node["data-sky"] ?? ""] = node["data-count"] }
        for node in page.nodes("//*[@data-observations]//*[@data-feels]") { counts["feels:" + (node["data-feels"] ?? "")] = node["data-count"] }
        return counts
    }

    @Test func aPostCarriesWhatItsAuthorSawAndTheCityPageCountsTheLastThreeHours() throws {
        let app = try AppHarness()
        let rainy = app.browser()
        try rainy.signUp("rainy")
        try app.inGoodStanding("rainy")
        let (_, form) = try rainy.get("/city/seoul")
        #expect(form.nodes("//form[@action='/city/seoul/posts']//input[@type='radio'][@name='sky']").compactMap { $0["value"] }
                == ["clear", "clouds", "fog", "rain", "snow", "storm"])
        #expect(form.nodes("//form[@action='/city/seoul/posts']//input[@type='radio'][@name='feels']").compactMap { $0["value"] }
                == ["warmer", "same", "colder"])
        #expect(Self.tally(try app.page("/city/seoul").1).isEmpty)
        #expect(try app.page("/city/seoul").1.count("//*[@data-observations]") == 1)

        #expect(try Self.observe(rainy, "Pouring in Jongno", sky: "rain", feels: "colder").0.status == 303)
        let (_, page) = try app.page("/city/seoul")
        #expect(page.nodes("//article[@data-author='rainy']//*[@data-sky]").first?["data-sky"] == "rain")
        #expect(page.nodes("//article[@data-author='rainy']//*[@data-feels]").first?["data-feels"] == "colder")
        #expect(Self.tally(page) == ["rain": "1", "feels:colder": "1"])
        #expect(page.text("//*[@data-observations]")?.contains("Rain ×1") == true)

        // Within the hour, the same person counts once (their latest); a post without one does not count.
        app.clock.advance(11)
        #expect(try Self.observe(rainy, "Now it is snowing!", sky: "snow", feels: nil).0.status == 303)
        app.clock.advance(11)
        #expect(try Self.observe(rainy, "Just a remark", sky: nil, feels: nil).0.status == 303)
        #expect(Self.tally(try app.page("/city/seoul").1) == ["snow": "1"])
        let other = app.browser()
        try other.signUp("other")
        #expect(try Self.observe(other, "Snow here too", sky: "snow", feels: "same").0.status == 303)
        #expect(Self.tally(try app.page("/city/seoul").1) == ["snow": "2", "feels:same": "1"])
        // An hour on, the first person counts again; three hours on, nothing counts.
        app.clock.advance(3600)
        #expect(try Self.observe(rainy, "Clearing up", sky: "clear", feels: "warmer").0.status == 303)
        #expect(Self.tally(try app.page("/city/seoul").1) == ["snow": "2", "clear": "1", "feels:same": "1", "feels:warmer": "1"])
        app.clock.advance(3 * 3600)
        #expect(Self.tally(try app.page("/city/seoul").1).isEmpty)
    }

    /// Issue 43 #3: the tally covers three hours and weighs the last one: what people say now
    /// leads, and each count says how many of its people spoke in the last hour.
    @Test func theLastHourWeighsDoubleInTheTally() throws {
        let app = try AppHarness { $0.limits.signUpsPerHour = 100 }
        func sky(_ page: MarkupDocument) -> [String] { page.nodes("//*[@data-observations]//*[@data-sky]").compactMap { $0["data-sky"] } }
        for name in ["annie", "bobby", "cyril"] {
            let person = app.browser()
            try person.signUp(name)
            #expect(try Self.observe(person, "Rain in the morning, says \(name)", sky: "rain", feels: nil).0.status == 303)
        }
        #expect(sky(try app.page("/city/seoul").1) == ["rain"])
        app.clock.advance(2 * 3600)
        for name in ["deedee", "eliot"] {
            let person = app.browser()
            try person.signUp(name)
            #expect(try Self.observe(person, "Clear now, says \(name)", sky: "clear", feels: nil).0.status == 303)
        }
        // Three said rain two hours ago, two say clear now: clear weighs four, rain three.
        let page = try app.page("/city/seoul").1
        #expect(sky(page) == ["clear", "rain"])
        #expect(Self.tally(page) == ["clear": "2", "rain": "3"])
        #expect(page.nodes("//*[@data-observations]//*[@data-sky='clear']").first?["data-last-hour"] == "2")
        #expect(page.nodes("//*[@data-observations]//*[@data-sky='rain']").first?["data-last-hour"] == "0")
        #expect(page.text("//*[@data-observations]//*[@data-sky='clear']")?.contains("2 in the last hour") == true)
        #expect(page.text("//*[@data-observations]//*[@data-sky='rain']")?.contains("last hour") == false)
        // In Korean too.
        let korean = try app.page("/city/seoul", headers: [("Accept-Language", "ko")]).1
        #expect(korean.text("//*[@data-observations]//*[@data-sky='clear']")?.contains("최근 1시간 2명") == true)
    }

    @Test func blockedHiddenAndRemovedPostsAreNotCountedAndUnknownValuesAreRefused() throws {
        let app = try AppHarness { $0.limits.reportThreshold = 1 }
        let first = app.browser()
        try first.signUp("first")
        let second = app.browser()
        try second.signUp("second")
        #expect(try Self.observe(first, "Fog on the river", sky: "fog", feels: nil).0.status == 303)
        #expect(try Self.observe(second, "Fog here too", sky: "fog", feels: nil).0.status == 303)
        #expect(Self.tally(try app.page("/city/seoul").1) == ["fog": "2"])
        // Someone who blocked the first person counts only the second's.
        let reader = app.browser()
        try reader.signUp("reader")
        try app.inGoodStanding("reader")
        try reader.get("/users/first")
        #expect(try reader.post("/users/first/block", []).0.status == 303)
        #expect(Self.tally(try reader.get("/city/seoul").1) == ["fog": "1"])
        // Hidden by a report: gone for others.
        let secondPost = Int64(try app.count("SELECT max(id) FROM posts"))
        #expect(try reader.post("/posts/\(secondPost)/report", [("reason", "spam")]).0.status == 303)
        #expect(Self.tally(try app.page("/city/seoul").1) == ["fog": "1"])

        // A value not on the list: refused, the text kept.
        let (refused, page) = try Self.observe(first, "Hail!", sky: "hail", feels: nil)
        #expect(refused.status == 422)
        #expect(page?.text("//textarea[@id='post-body']") == "Hail!")
        #expect(try Self.observe(first, "Hot", sky: nil, feels: "boiling").0.status == 422)
        #expect(try app.count("SELECT count(*) FROM posts") == 2)
    }
}

/// Issue 43 #5: a city's reports as open data, `observations.csv` and `.json`: the last 30 days,
/// time to the minute, sky and feels, no author and no text, one per person per hour, nothing
/// hidden or removed; licensed, cached, and bounded.
@Suite(.serialized, .onEveryEngine) struct OpenObservationDataTests {
    @Test func theReportsAsCSVAndJSONWithoutWhoOrWhat() throws {
        let app = try AppHarness()
        let ann = app.browser(), bo = app.browser()
        #expect(try ann.signUp("anna").status == 303)
        #expect(try bo.signUp("bora").status == 303)
        try app.inGoodStanding("anna", "bora")
        #expect(try ObservationTests.observe(ann, "Pouring in Jongno, ann's secret words", sky: "rain", feels: "colder").0.status == 303)
        app.clock.advance(60)
        #expect(try ObservationTests.observe(bo, "Fog by the river", sky: "fog", feels: nil).0.status == 303)
        app.clock.advance(60)
        // Ann again within the hour: only her latest counts.
        #expect(try ObservationTests.observe(ann, "Now snow", sky: "snow", feels: "same").0.status == 303)
        // A plain post says nothing of the sky.
        app.clock.advance(11)
        #expect(try ann.postOnBoard("seoul", "Just a remark").0.status == 303)
        // Older than 30 days: left out.
        try app.execute("""
            INSERT INTO posts (city_id, user_id, body, created_at, sky) SELECT c.id, u.id, 'long ago', ?, 'clear'
            FROM cities c, users u WHERE c.slug = 'seoul' AND u.username = 'bora'
            """, [AppHarness.fixedNow.timeIntervalSince1970 - 31 * 86_400])
        #expect(try app.count("SELECT count(*) FROM posts WHERE body = 'long ago'") == 1)

        let csv = try app.get("/city/seoul/observations.csv")
        #expect(csv.status == 200)
        #expect(csv.headers["Content-Type"]?.hasPrefix("text/csv") == true)
        #expect(csv.headers["Link"] == "<https://creativecommons.org/licenses/by/4.0/>; rel=\"license\"")
        let lines = String(decoding: csv.body, as: UTF8.self).split(separator: "\r\n").map(String.init)
        #expect(lines == ["time,sky,feels", "2026-11-22T05:46:00Z,fog,", "2026-11-22T05:47:00Z,snow,same"], "\(lines)")

        let json = try app.get("/city/seoul/observations.json")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.body)) as? [String: Any])
        #expect(object["city"] as? String == "seoul" && object["days"] as? Int == 30)
        #expect(object["licence"] as? String == "https://creativecommons.org/licenses/by/4.0/")
        let observations = try #require(object["observations"] as? [[String: Any]])
        #expect(observations.count == 2)
        #expect(observations.allSatisfy { Set($0.keys) == ["time", "sky", "feels"] }, "no author, no text")
        #expect(observations.last?["sky"] as? String == "snow" && observations.first?["feels"] is NSNull)
        #expect(!String(decoding: json.body + csv.body, as: UTF8.self).contains("anna"))

        // Kept five minutes: Bo's newer report in the same hour (his latest counts) shows after that.
        #expect(try ObservationTests.observe(bo, "Fog lifting, clouds now", sky: "clouds", feels: nil).0.status == 303)
        #expect(String(decoding: try app.get("/city/seoul/observations.csv").body, as: UTF8.self).contains(",fog,"), "the kept answer")
        app.clock.advance(ObservationDataController.keptFor)
        let fresh = String(decoding: try app.get("/city/seoul/observations.csv").body, as: UTF8.self)
        #expect(fresh.contains("2026-11-22T05:47:00Z,clouds,") && !fresh.contains("fog"), "\(fresh)")
        #expect(try app.get("/city/nowhere-at-all/observations.json").status == 404)
    }
}
