import Foundation
import Testing
@testable import Weatherboard

/// Issue 43 #1, KMA: special weather reports from recorded answers of data.go.kr's
/// `WthrWrnInfoService/getPwnCd` (announcements, not a state: issued, extended, changed and lifted
/// in zones named in Korean, a withdrawn one, an end that passed, a sea zone, an unknown kind)
/// reach the Korean cities their zones name, in Korean and English, "until lifted"; a change of
/// level is a new warning, a zone joining is not; a lift removes; a gateway error changes nothing.
@Suite(.serialized, .onEveryEngine) struct KMAWarningTests {
    static let path = "/1360000/WthrWrnInfoService/getPwnCd"

    static func warnings(_ page: MarkupDocument) -> [MarkupDocument.Node] { page.nodes("//section[@class='warnings']//*[@data-warning]") }

    @Test func announcementsBecomeWarningsOnTheCitiesTheirZonesName() throws {
        let stub = try FeedStub()
        try stub.answer(Self.path, fixture: "kma-warnings/announcements.xml")
        let app = try AppHarness {
            $0.kmaKey = "test-key+/="
            $0.weatherProviders = ["demo"]
            $0.warningsKMAURL = stub.url
            $0.warningsEvery = 3600
        }
        WarningTests.firstPoll(app)
        let query = try #require(stub.queries(Self.path).first)
        #expect(query.hasPrefix("serviceKey=test-key%2B%2F%3D&"), "the decoded key, encoded whole: \(query)")
        #expect(query.contains("fromTmFc=20261022") && query.contains("toTmFc=20261122"), "a month, Korean dates: \(query)")

        // Seoul: two of its zones under a heavy rain advisory; in force until lifted.
        var (_, page) = try app.page("/city/seoul?lang=ko")
        var shown = Self.warnings(page)
        #expect(shown.map { $0["data-event"] } == ["호우주의보"])
        #expect(shown.first?["data-severity"] == "moderate")
        #expect(shown.first?["data-expires"] == nil, "no end to give")
        #expect(page.text("//*[@data-warning]//*[@class='warning-until']") == "해제 시까지")
        #expect(page.text("//*[@data-warning]//*[@class='warning-headline']") == "호우주의보")
        #expect(page.text("//*[@data-warning]//details[@class='warning-details']/p")?.contains("서울동남권, 서울동북권") == true)
        #expect(page.text("//*[@data-warning]//*[@class='warning-source']") == "기상청 · 12:00 발표")
        (_, page) = try app.page("/city/seoul")
        #expect(page.text("//*[@data-warning]//*[@class='warning-headline']") == "Heavy rain advisory")
        #expect(page.text("//*[@data-warning]//*[@class='warning-until']") == "until lifted")
        // Busan's, extended; both cities named 광주; Jeju's strong wind warning from both its zones, once.
        #expect(Self.warnings(try app.page("/city/busan").1).map { $0["data-event"] } == ["호우주의보"])
        #expect(Self.warnings(try app.page("/city/gwangju").1).map { $0["data-event"] } == ["호우주의보"])
        #expect(Self.warnings(try app.page("/city/gwangju-kr").1).map { $0["data-event"] } == ["호우주의보"])
        let jeju = Self.warnings(try app.page("/city/jeju-city").1)
        #expect(jeju.map { $0["data-event"] } == ["강풍경보"])
        #expect(jeju.first?["data-severity"] == "severe")
        // Lifted (Gangneung), past its end (Suwon), withdrawn (Daegu): none.
        for slug in ["gangneung", "suwon", "daegu"] { #expect(Self.warnings(try app.page("/city/\(slug)").1).isEmpty, "\(slug)") }
        let log = app.log.lines.joined(separator: "\n")
        #expect(log.contains("kma: L1070100") && log.contains("withdrawn"))
        #expect(log.contains("kma: unknown kind 99 or level 0"))
        #expect(try app.count("SELECT count(*) FROM warnings WHERE source = 'kma'") == 2)
        let advisory = try #require(shown.first?["data-warning-id"])

        // 15:00: Seoul's south-east goes up to a warning (a new warning); a third zone joins the
        // advisory (the same warning, its id kept).
        try stub.answer(Self.path, fixture: "kma-warnings/announcements-later.xml")
        app.clock.advance(45 * 60)
        app.application.warnings.poll()
        (_, page) = try app.page("/city/seoul?lang=ko")
        shown = Self.warnings(page)
        #expect(shown.map { $0["data-event"] } == ["호우경보", "호우주의보"], "most severe first")
        #expect(shown.last?["data-warning-id"] == advisory)
        #expect(page.text("(//*[@data-warning])[2]//details[@class='warning-details']/p")?.contains("서울동북권, 서울서북권") == true)

        // 16:00: lifted everywhere but Jeju.
        try stub.answer(Self.path, fixture: "kma-warnings/announcements-lifted.xml")
        app.clock.advance(60 * 60)
        app.application.warnings.poll()
        for slug in ["seoul", "busan", "gwangju"] { #expect(Self.warnings(try app.page("/city/\(slug)").1).isEmpty, "\(slug)") }
        #expect(Self.warnings(try app.page("/city/jeju-city").1).count == 1)

        // A month on, the service no longer gives Jeju's announcements (older than its window):
        // the warning is carried from poll to poll, renewed, until a lift is heard.
        app.clock.advance(32 * 86_400)
        try stub.answer(Self.path, fixture: "kma-warnings/no-data.xml")
        app.application.warnings.poll()
        #expect(Self.warnings(try app.page("/city/jeju-city").1).count == 1)
        #expect(try app.count("SELECT count(*) FROM warnings WHERE expires > ?", [app.clock.read().timeIntervalSince1970 + 3600]) == 1, "renewed")

        // A refused key changes nothing kept, and says why.
        try stub.answer(Self.path, fixture: "kma-key-error.xml")
        app.application.warnings.poll()
        #expect(Self.warnings(try app.page("/city/jeju-city").1).count == 1)
        #expect(app.log.lines.contains { $0.contains("warnings: kma failed: kma gateway error: SERVICE_KEY_IS_NOT_REGISTERED_ERROR") })
        try stub.answer(Self.path, fixture: "kma-warnings/jeju-lifted.xml")
        app.clock.advance(601) // past the breaker's pause
        app.application.warnings.poll()
        #expect(Self.warnings(try app.page("/city/jeju-city").1).isEmpty)
    }

    /// Zone names to cities: a zone's directions, splits and plains are the city's parts; 시, 군
    /// and 도 are not part of the name.
    @Test(arguments: [
        ("서울동남권", "서울", true), ("서울", "서울", true), ("부산중부", "부산", true), ("제주도북부", "제주", true),
        ("제주도남부", "제주", false), ("강릉평지", "강릉", true), ("강원북부산지", "강릉", false), ("서귀포시동부", "서귀포", true),
        ("울릉도.독도", "울릉", false), ("광주", "광주", true), ("수원", "성남", false), ("동부", "동", false), ("진안군", "진안군", true),
    ])
    func zoneNamesMatchCities(zone: String, city korean: String, covers: Bool) {
        let city = City(id: 1, slug: "x", nameEn: "X", nameKo: korean, country: "KR", admin1: "", latitude: 0, longitude: 0,
                        timezone: "Asia/Seoul", population: 0, kmaNx: nil, kmaNy: nil)
        #expect(KMAWarnings.zone(zone, covers: city) == covers)
    }

    /// data.go.kr's two forms of one key: the decoded one encoded whole, the encoded one as it is.
    @Test func aKeyReachesTheGatewayAsIssued() throws {
        let decoded = try #require(KMAProvider.url("https://apis.data.go.kr/x", serviceKey: "a+b/c==", [("pageNo", "1")]))
        #expect(decoded.absoluteString == "https://apis.data.go.kr/x?serviceKey=a%2Bb%2Fc%3D%3D&pageNo=1")
        let encoded = try #require(KMAProvider.url("https://apis.data.go.kr/x", serviceKey: "a%2Bb%2Fc%3D%3D", [("pageNo", "1")]))
        #expect(encoded.absoluteString == "https://apis.data.go.kr/x?serviceKey=a%2Bb%2Fc%3D%3D&pageNo=1")
        // Pasted with a newline, or with a stray "%": still a valid request (Foundation traps on an invalid query).
        let pasted = try #require(KMAProvider.url("https://apis.data.go.kr/x", serviceKey: "a%2Bb%2Fc%3D%3D\n", [("pageNo", "1")]))
        #expect(pasted.absoluteString == "https://apis.data.go.kr/x?serviceKey=a%2Bb%2Fc%3D%3D&pageNo=1")
        let stray = try #require(KMAProvider.url("https://apis.data.go.kr/x", serviceKey: "a%zz b", [("pageNo", "1")]))
        #expect(stray.absoluteString == "https://apis.data.go.kr/x?serviceKey=a%25zz%20b&pageNo=1")
    }

    @Test func timesAreKoreanAndMalformedOnesAreNone() {
        #expect(KMAWarnings.time("202611221500") == Date(timeIntervalSince1970: 1_795_327_200))
        for bad in ["0", "", "2026112215", "202613221500", "20261122150x", "２０２６１１２２１５００"] { #expect(KMAWarnings.time(bad) == nil, "\(bad)") }
    }
}
