import Foundation
import Testing
import HTTPTestSupport
@testable import Weatherboard

/// Issue 67 #1 and #2: Korean districts in city search and in "use my location".
@Suite(.serialized, .onEveryEngine) struct DistrictTests {
    /// The names people type lead to their cities, saying the way search went.
    @Test("a district's names lead to its city", arguments: [
        ("강남", "seoul", "강남구"), ("강남구", "seoul", "강남구"), ("Gangnam", "seoul", "Gangnam-gu"),
        ("해운대", "busan", "해운대구"), ("해운대구", "busan", "해운대구"), ("Haeundae", "busan", "Haeundae-gu"),
        ("분당", "seongnam-si", "분당구"), ("Bundang", "seongnam-si", "Bundang-gu"), ("종로", "seoul", "종로구"),
        ("Jongno", "seoul", "Jongno-gu"), ("Jongro", "seoul", "Jongno-gu"), ("역삼동", "seoul", "역삼동"),
    ])
    func aDistrictLeadsToItsCity(query: String, slug: String, district: String) throws {
        let app = try AppHarness()
        let language = query.unicodeScalars.first!.isASCII ? "en" : "ko"
        let (response, page) = try app.page("/search?q=" + percentEncode(query) + "&lang=\(language)")
        #expect(response.status == 200)
        #expect(page.nodes("(//ol[@class='results']/li)[1]//a[@data-slug]").first?["data-slug"] == slug)
        let via = try #require(page.nodes("(//ol[@class='results']/li)[1]//*[@data-via-district]").first)
        #expect(via["data-via-district"] == district)
        let city = try #require(CityIndexTests.index.city(slug: slug))
        #expect(via.text == "\(district) → \(city.name(language == "ko" ? .ko : .en))")
    }

    /// 중구 is in six cities: each is listed with its city.
    @Test func aSharedNameListsEachCity() throws {
        let app = try AppHarness()
        let (_, page) = try app.page("/search?q=" + percentEncode("중구") + "&lang=ko")
        let slugs = page.nodes("//ol[@class='results']/li[.//*[@data-via-district='중구']]//a[@data-slug]").compactMap { $0["data-slug"] }
        #expect(Set(slugs) == ["seoul", "busan", "daegu", "incheon", "daejeon", "ulsan"] && slugs.count == 6)
        #expect(page.text("(//*[@data-via-district='중구'])[1]") == "중구 → 서울")
    }

    /// A city of its own in the catalog finds itself first; a 동's bare name is an everyday word
    /// (우산, an umbrella) and still goes to the posts.
    @Test func citiesFirstAndBareNamesOfADongAreWords() throws {
        let app = try AppHarness()
        // 마산 is a city and a 구's start (마산합포구, 마산회원구 of 창원): the city, straight away.
        #expect(try app.get("/search?q=" + percentEncode("마산") + "&lang=ko").headers["Location"] == "/city/masan")
        let (_, start) = try app.page("/search?q=" + percentEncode("마산합") + "&lang=ko")
        #expect(start.text("//*[@data-via-district]") == "마산합포구 → 창원")
        let umbrella = try app.get("/search?q=" + percentEncode("우산") + "&lang=ko")
        #expect(umbrella.status == 302 && umbrella.headers["Location"]?.hasPrefix("/search/posts?q=") == true)
        let (_, usan) = try app.page("/search?q=" + percentEncode("우산동") + "&lang=ko")
        #expect(usan.nodes("//*[@data-via-district='우산동']").count == 3)
    }

    /// A point inside a 시/군/구 goes to its city; elsewhere as before.
    @Test("use my location by boundary", arguments: [
        (35.1587, 129.1604, "busan"), (37.3595, 127.1052, "seongnam-si"), (37.57, 126.98, "seoul"), (35.18, 129.07, "busan"),
    ])
    func nearestByBoundary(latitude: Double, longitude: Double, slug: String) throws {
        let app = try AppHarness()
        #expect(try app.get("/nearest?lat=\(latitude)&lon=\(longitude)").headers["Location"] == "/city/\(slug)")
    }

    /// Every line of the shipped files reads, and each district's city is in the catalog.
    @Test func theShippedFilesRead() throws {
        let districts = try District.shipped.get()
        #expect(districts.count > 5_000)
        let outlines = try DistrictOutline.shipped.get()
        #expect(outlines.count > 250)
        for id in Set(districts.map(\.cityID)).union(outlines.map(\.cityID)) {
            #expect(CityIndexTests.index.city(id: id) != nil, "city \(id)")
        }
    }
}
