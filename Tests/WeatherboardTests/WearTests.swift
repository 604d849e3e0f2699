import Foundation
import Testing
import HTTPTestSupport
@testable import Weatherboard

/// Issue 68 #2: what to wear while out today, against yesterday, from the documented table.
@Suite(.serialized, .onEveryEngine) struct WearTests {
    /// Every step's edges, in whole degrees as the cards round (27.5 reads 28).
    @Test("the documented steps", arguments: [
        (35.0, "sleeveless"), (28, "sleeveless"), (27.5, "sleeveless"), (27.4, "short_sleeves"), (23, "short_sleeves"),
        (22, "long_sleeves"), (20, "long_sleeves"), (19, "knit"), (17, "knit"), (16, "jacket"), (12, "jacket"),
        (11, "trench"), (9, "trench"), (8, "coat"), (5, "coat"), (4.4, "padded"), (-20, "padded"),
    ])
    func steps(feel: Double, layer: String) {
        #expect(Clothing.steps[Clothing.step(for: feel)].id == layer)
    }

    /// docs/what-to-wear.md's table is the code's: each step's id, its lowest degree and both
    /// languages' words in the catalogs.
    @Test func theDocumentedTableIsTheCodes() throws {
        let guide = try String(contentsOfFile: AppConfiguration.repositoryFolder("docs/what-to-wear.md"), encoding: .utf8)
        let rows = guide.split(separator: "\n").filter { $0.hasPrefix("| `") }.map { line in
            line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
        }
        let catalogs = try ["en", "ko"].map { language in
            try JSONDecoder().decode([String: String].self, from: Data(contentsOf: URL(fileURLWithPath:
                AppConfiguration.repositoryFolder("Templates/strings/\(language).json"))))
        }
        #expect(rows.map { $0[0] } == Clothing.steps.map { "`\($0.id)`" })
        for (row, step) in zip(rows, Clothing.steps) {
            #expect(row[1] == (step.lowest == .min ? "below \(Clothing.steps[Clothing.steps.count - 2].lowest)" : String(step.lowest)))
            #expect(row[2] == catalogs[0]["wear_" + step.id] && row[3] == catalogs[1]["wear_" + step.id], "\(step.id)'s words")
        }
    }

    /// Seoul at 14:45: every hour 10 °C today (a trench coat), yesterday 3 °C (a padded coat):
    /// lighter than yesterday, in both languages; no umbrella at a 10 % chance.
    @Test func aColderYesterdayReadsLighterInBothLanguages() throws {
        let page = try ThanYesterdayTests.page("seoul", at: AppHarness.fixedNow, current: 10, feels: 10, yesterday: { _ in 3 })
        let line = try #require(page.nodes("//section[@data-day='today']//*[@data-wear]").first)
        #expect(line["data-layer"] == "trench" && line["data-vs-yesterday"] == "less" && line["data-umbrella"] == "false")
        #expect(line.text == "What to wear: a trench coat or field jacket over a knit. Lighter than yesterday. "
                + "Feels like 10° on average from 07:00 to 22:00")
        let korean = try ThanYesterdayTests.page("seoul", at: AppHarness.fixedNow, current: 10, feels: 10, yesterday: { _ in 3 }, language: "ko")
        #expect(korean.text("//*[@data-wear]") == "옷차림: 트렌치코트, 야상, 니트. 어제보다 가볍게 입으세요. 07시–22시 평균 체감 10°")
        #expect(page.nodes("//section[@data-day!='today']//*[@data-wear]").isEmpty, "only today's card says what to wear")
    }

    /// The same step as yesterday's, and a warmer yesterday: `same`, then `more`.
    @Test func sameAndMore() throws {
        let same = try ThanYesterdayTests.page("seoul", at: AppHarness.fixedNow, current: 10, feels: 10, yesterday: { _ in 9.6 })
        #expect(same.nodes("//*[@data-wear]").first?["data-vs-yesterday"] == "same")
        #expect(same.text("//*[@data-wear]")?.contains("Like yesterday's clothes.") == true)
        let more = try ThanYesterdayTests.page("seoul", at: AppHarness.fixedNow, current: 10, feels: 10, yesterday: { $0 < 7 ? 5 : 18 })
        #expect(more.nodes("//*[@data-wear]").first?["data-vs-yesterday"] == "more")
        #expect(more.text("//*[@data-wear]")?.contains("One layer more than yesterday.") == true)
    }

    /// The umbrella follows the hourly chances' rule for the out hours still ahead: rain from
    /// 16:00 at 14:45 takes one; a wet morning that is over, or rain after 22:00, does not.
    @Test("an umbrella for rain still ahead while out", arguments: [(16..<19, true), (6..<9, false), (23..<24, false), (14..<15, true)])
    func umbrella(wet: Range<Int>, expected: Bool) throws {
        let seoul = try #require(CityIndexTests.index.city(slug: "seoul"))
        let stub = try UpstreamStub()
        stub.mode = .answer(try WeatherDetailsTests.answer(for: seoul, now: AppHarness.fixedNow, wet: wet))
        let app = try AppHarness { $0.weatherProviders = ["open-meteo"]; $0.openMeteoURL = stub.url }
        let (_, page) = try app.page("/city/seoul")
        let line = try #require(page.nodes("//*[@data-wear]").first)
        #expect(line["data-umbrella"] == String(expected))
        #expect(line.text.contains("Take an umbrella.") == expected)
        // The rain sentence on the same card agrees: rain still ahead while out is in it.
        if expected { #expect(page.text("//*[@data-rain-summary]")?.hasPrefix("No rain") == false) }
    }

    /// Demo figures say so beside the line.
    @Test func demoFiguresSaySo() throws {
        let app = try AppHarness()
        let (_, page) = try app.page("/city/seoul")
        let line = try #require(page.nodes("//*[@data-wear]").first)
        #expect(line.text.hasSuffix("· from demo figures, not a forecast"))
    }

    /// Too few of the out hours known: no line rather than a guess.
    @Test func noLineWithoutTheHours() throws {
        let hours = (7...12).map { Forecast.Hour(time: "2026-11-22T\(LocalCalendar.twoDigits($0)):00", temperature: 10) }
        #expect(Clothing.advice(today: hours, yesterday: [], hour: 8) == nil)
        let enough = (7...14).map { Forecast.Hour(time: "2026-11-22T\(LocalCalendar.twoDigits($0)):00", temperature: 10) }
        #expect(Clothing.advice(today: enough, yesterday: [], hour: 8)?.vsYesterday == nil)
    }
}
