import Foundation
import Testing
import HTTPTestSupport
@testable import Weatherboard

@Suite(.serialized, .onEveryEngine) struct CityPageTests {
    /// Issue 26 #3: a link at the top of the page down to the board, saying what is there.
    @Test func aLinkAtTheTopLeadsDownToTheBoardAndCountsItsPosts() throws {
        let app = try AppHarness()
        let (_, empty) = try app.page("/city/busan")
        #expect(empty.text("//p[@class='board-jump']/a[@href='#board']") == "Board · no posts yet ↓")
        let writer = app.browser()
        try writer.signUp("jumper")
        for text in ["Foggy over the harbour bridge", "Clearing up by noon, it seems"] {
            app.clock.advance(120) // past the seconds between two posts
            try writer.get("/city/busan")
            #expect(try writer.post("/city/busan/posts", [("body", text)]).0.status == 303)
        }
        let (_, two) = try app.page("/city/busan")
        #expect(two.text("//p[@class='board-jump']/a") == "Board · 2 posts ↓")
        #expect(two.count("//*[@id='board']") == 1, "the link's target")
        let (_, korean) = try app.page("/city/busan?lang=ko")
        #expect(korean.text("//p[@class='board-jump']/a") == "게시판 · 글 2개 ↓")
    }

    /// Issue 26 #10: the home page remembers the city opened last (by location or by reading it)
    /// and puts it first, for guests and members without bookmarks.
    @Test func theHomePageRemembersTheCityOpenedLast() throws {
        let app = try AppHarness()
        let guest = app.browser()
        let (_, fresh) = try guest.get("/")
        #expect(fresh.nodes("//li[@class='city-row']").map { $0["data-slug"] ?? "" } == HomeController.defaultCities)
        let (opened, _) = try guest.get("/city/auckland")
        #expect(opened.headers.values("Set-Cookie").contains { $0.hasPrefix("last_city=auckland;") && $0.contains("HttpOnly") })
        let (_, home) = try guest.get("/")
        #expect(home.nodes("//li[@class='city-row']").map { $0["data-slug"] ?? "" } == ["auckland"] + HomeController.defaultCities)
        let (again, _) = try guest.get("/city/auckland")
        #expect(!again.headers.values("Set-Cookie").contains { $0.hasPrefix("last_city=") }, "already remembered: nothing to set")
        // Found by location: the nearest city's page remembers it.
        let located = app.browser()
        let nearest = try app.get("/nearest?lat=35.18&lon=129.07")
        let place = try #require(nearest.headers["Location"])
        #expect(place == "/city/busan")
        try located.get(place)
        let (_, theirs) = try located.get("/")
        #expect(theirs.nodes("//li[@class='city-row']").map { $0["data-slug"] ?? "" } == ["busan", "seoul", "tokyo", "new-york-city", "london"],
                "Busan, one of the defaults, comes first and only once")
        let member = app.browser()
        try member.signUp("rememberer")
        try member.get("/city/tokyo")
        let (_, signedIn) = try member.get("/")
        #expect(signedIn.nodes("//li[@class='city-row']").first?["data-slug"] == "tokyo")
    }

    /// Issue 25 #5: the heading names the country (and the region where it tells cities apart)
    /// in the reader's language, as search results do; the code stays for tools.
    @Test func theHeadingNamesTheCountryInTheReadersLanguage() throws {
        let app = try AppHarness()
        let (_, seoul) = try app.page("/city/seoul")
        #expect(seoul.text("//h1/span[@class='country']") == "South Korea")
        #expect(seoul.nodes("//h1/span[@class='country']").first?["data-country"] == "KR")
        let (_, korean) = try app.page("/city/seoul?lang=ko")
        #expect(korean.text("//h1/span[@class='country']") == "대한민국")
        let (_, chicago) = try app.page("/city/chicago")
        #expect(chicago.text("//h1/span[@class='country']") == "Illinois, United States")
    }

    @Test func cityPageShowsTheRecordedProviderDataInTheMarkupContract() throws {
        let stub = try UpstreamStub()
        let app = try AppHarness { $0.weatherProviders = ["open-meteo"]; $0.openMeteoURL = stub.url }
        let (response, page) = try app.page("/city/seoul")
        #expect(response.status == 200)
        let cards = page.nodes("//section[contains(@class,'day')][@data-day]")
        #expect(cards.map { $0["data-day"] } == ["yesterday", "today", "tomorrow"])
        #expect(cards.map { $0["data-date"] } == ["2026-11-21", "2026-11-22", "2026-11-23"])
        #expect(cards.map { $0["data-high"] } == ["9", "12.5", "8.2"])
        #expect(cards.map { $0["data-low"] } == ["-1", "2.5", "-1.8"])
        // what is shown equals the recorded data, rounded to whole degrees
        #expect(page.text("//section[@data-day='today']//span[@class='high']") == "High 13°")
        #expect(page.text("//section[@data-day='today']//p[@class='now']/span[@class='value']") == "12°")
        #expect(page.text("//section[@data-day='yesterday']//span[@class='low']") == "Low -1°")
        #expect(page.text("//p[@class='headline']") == "4° warmer than yesterday")
        #expect(page.text("//p[@class='basis']") == "Comparing the days' highs: today 13°, yesterday 9°.", "the basis in the headline's whole degrees: 13 − 9 = 4")
        #expect(page.count("//svg[@class='hourly-chart']//polyline") == 3)
        #expect(page.count("//svg[@class='hourly-chart']//line[@class='now-marker']") == 1)
        #expect(page.count("//section[@class='strip']//li") == 5)
        let provenance = try #require(page.nodes("//p[@class='provenance']").first)
        #expect(provenance["data-source"] == "open-meteo")
        #expect(provenance.text.hasPrefix("Open-Meteo · updated"))
        #expect(page.count("//p[@class='demo-notice']") == 0)
        // the card's colours are classes from the palette stylesheet, not inline styles
        #expect(cards[1]["class"]?.contains("hi-13") == true)
        #expect(page.count("//*[@style]") == 0)
    }

    @Test func koreanPageComparesInKorean() throws {
        let stub = try UpstreamStub()
        let app = try AppHarness { $0.weatherProviders = ["open-meteo"]; $0.openMeteoURL = stub.url }
        let (_, page) = try app.page("/city/seoul?lang=ko")
        #expect(page.text("//h1") == "서울 대한민국")
        #expect(page.text("//p[@class='headline']") == "어제보다 4° 높아요")
        #expect(page.text("//section[@data-day='today']/h2")?.hasPrefix("오늘") == true)
    }

    @Test func demoDataSaysSoAndDaysAreTheCitysLocalDays() throws {
        let app = try AppHarness()
        // 05:45 UTC on the 22nd is already 18:45 on the 22nd in Auckland and still the 21st in Honolulu.
        let (_, auckland) = try app.page("/city/auckland")
        #expect(auckland.nodes("//section[@data-day='today']").first?["data-date"] == "2026-11-22")
        #expect(auckland.nodes("//section[@data-day='yesterday']").first?["data-date"] == "2026-11-21")
        let (_, honolulu) = try app.page("/city/honolulu")
        #expect(honolulu.nodes("//section[@data-day='today']").first?["data-date"] == "2026-11-21")
        #expect(honolulu.nodes("//section[@data-day='tomorrow']").first?["data-date"] == "2026-11-22")
        #expect(honolulu.nodes("//p[@class='provenance']").first?["data-source"] == "demo")
        #expect(honolulu.count("//p[@class='demo-notice']") == 1)
        let (_, korean) = try app.page("/city/honolulu?lang=ko")
        #expect(korean.text("//p[@class='demo-notice']")?.contains("데모") == true)
    }

    @Test func numbersShownEqualTheDemoProvidersFigures() throws {
        let app = try AppHarness()
        let city = try #require(app.application.cities.city(slug: "busan"))
        let forecast = try DemoProvider().forecast(for: city, now: AppHarness.fixedNow)
        let (_, page) = try app.page("/city/busan")
        let cards = page.nodes("//section[@data-day]")
        #expect(cards.count == 3, "yesterday, today and tomorrow")
        for card in cards {
            let day = try #require(forecast.day(card["data-date"] ?? ""))
            #expect(Double(card["data-high"] ?? "") == day.high)
            #expect(Double(card["data-low"] ?? "") == day.low)
        }
    }

    @Test func weatherDownStillGivesAPageNeverAnError() throws {
        let stub = try UpstreamStub()
        stub.mode = .unavailable
        let app = try AppHarness { $0.weatherProviders = ["open-meteo"]; $0.openMeteoURL = stub.url }
        let (response, page) = try app.page("/city/seoul")
        #expect(response.status == 200)
        #expect(page.count("//p[@class='weather-unavailable']") == 1)
        let (fallback, fallbackPage) = try AppHarness { $0.weatherProviders = ["open-meteo", "demo"]; $0.openMeteoURL = stub.url }
            .page("/city/seoul")
        #expect(fallback.status == 200)
        #expect(fallbackPage.nodes("//p[@class='provenance']").first?["data-source"] == "demo")
    }

    @Test func unknownCityIs404() throws {
        let app = try AppHarness()
        #expect(try app.get("/city/no-such-city-xyz").status == 404)
    }

    @Test func paletteStylesheetIsServedWithAnETag() throws {
        let app = try AppHarness()
        let css = try app.get("/palette.css")
        #expect(css.status == 200)
        #expect(css.headers["Content-Type"] == "text/css; charset=utf-8")
        #expect(css.text.contains(".hi-m20{--hi:#4B3F9E}"))
        let etag = try #require(css.headers["ETag"])
        #expect(try app.get("/palette.css", headers: [("If-None-Match", etag)]).status == 304)
    }
}

@Suite(.serialized, .onEveryEngine) struct SearchTests {
    /// Issue 26 #9: search forgives what people type. Each query reaches its city: straight there
    /// when the reading is unambiguous, else first in the list or offered as "did you mean".
    @Test("a forgiving search reaches the city meant", arguments: [
        ("seol", "seoul"), ("sao paolo", "sao-paulo"), ("서울시", "seoul"), ("서울특별시", "seoul"), ("부산광역시", "busan"),
        ("Seoul, KR", "seoul"), ("seoul korea", "seoul"), ("münchen", "munich"), ("bombay", "mumbai"), ("nyc", "new-york-city"),
    ])
    func forgivingSearch(query: String, slug: String) throws {
        let app = try AppHarness()
        let response = try app.get("/search?q=" + percentEncode(query))
        if response.status == 302 {
            #expect(response.headers["Location"] == "/city/\(slug)", "\(query)")
        } else {
            #expect(response.status == 200)
            let page = try MarkupDocument(response.body)
            let first = page.nodes("//ol[@class='results']/li[1]/a").first?["data-slug"]
            let offered = page.nodes("//p[@class='did-you-mean']/a").first?["data-slug"]
            #expect(first == slug || offered == slug, "\(query): first \(first ?? "none"), offered \(offered ?? "none")")
        }
    }

    @Test func aShortQueryThatIsExactlyASmallTownListsRatherThanJumps() throws {
        let app = try AppHarness()
        let (san, page) = try app.page("/search?q=san")
        #expect(san.status == 200, "San, Mali is exactly 'san', but the people typing it mean San Francisco and the like")
        #expect(page.count("//ol[@class='results']/li") > 1)
        #expect(try app.get("/search?q=seoul").status == 302, "an exact name that is the largest of its prefix still jumps")
        let (_, typo) = try app.page("/search?q=seol")
        #expect(typo.text("//p[@class='did-you-mean']") == "Did you mean Seoul?")
        let (_, korean) = try app.page("/search?q=seol&lang=ko")
        #expect(korean.text("//p[@class='did-you-mean']") == "혹시 찾으신 도시: 서울?")
    }

    @Test func oneExactHitRedirectsToTheCity() throws {
        let app = try AppHarness()
        let response = try app.get("/search?q=%EC%84%9C%EC%9A%B8") // 서울
        #expect(response.status == 302)
        #expect(response.headers["Location"] == "/city/seoul")
    }

    @Test func resultsAreRankedByPopulationWithTheirCountry() throws {
        let app = try AppHarness()
        let (response, page) = try app.page("/search?q=sao+pa")
        #expect(response.status == 200)
        let first = try #require(page.nodes("//ol[@class='results']/li/a").first)
        #expect(first["data-slug"] == "sao-paulo")
        #expect(page.text("//ol[@class='results']/li[1]/span[@class='country']") == "Brazil")
        #expect(page.nodes("//ol[@class='results']/li[1]/span[@class='country']").first?["data-country"] == "BR")
        #expect(page.count("//ol[@class='results']/li") <= 20)
        let (_, many) = try app.page("/search?q=s")
        #expect(many.count("//ol[@class='results']/li") == 20)
        // Issue 65 #6: words that are no city are looked for in the posts, and it says so.
        let nothing = try app.get("/search?q=zzzzqx")
        #expect(nothing.status == 302 && nothing.headers["Location"] == "/search/posts?q=zzzzqx&from=cities")
        let (_, none) = try app.page("/search/posts?q=zzzzqx&from=cities")
        #expect(none.text("//p[@data-no-city]") == "No city is called “zzzzqx”: here are the posts that mention it.")
        #expect(none.count("//p[@class='no-results']") == 1)
        // the search box keeps what was typed
        #expect(none.nodes("//input[@id='post-search-q']").first?["value"] == "zzzzqx")
        let writer = app.browser()
        try writer.signUp("writer")
        try writer.postOnBoard("seoul", "우산 챙기세요, 오후에 비가 와요")
        let umbrella = try app.get("/search?q=" + percentEncode("우산") + "&lang=ko")
        let (_, found) = try app.page(try #require(umbrella.headers["Location"]) + "&lang=ko")
        #expect(found.text("//p[@data-post-count]") == "“우산”이(가) 들어간 글 1개")
        #expect(found.count("//ol[@class='post-results']/li//mark") == 1)
        #expect(found.nodes("//nav[@class='search-tabs']/a[@aria-current='page']").first?["href"] == "/search/posts")
    }

    @Test func sameNamedCitiesSayWhereTheyAreAndDistrictsFoldIntoTheirCity() throws {
        let app = try AppHarness()
        // Eight Springfields, each with its state and country.
        let (_, springfields) = try app.page("/search?q=springfield")
        let places = springfields.nodes("//ol[@class='results']/li[a='Springfield']/span[@class='country']").map(\.text)
        #expect(places.count == 8)
        #expect(Set(places).count == 8, "\(places)")
        #expect(places.first == "Missouri, United States")
        let (_, korean) = try app.page("/search?q=springfield&lang=ko")
        #expect(korean.text("//ol[@class='results']/li[1]/span[@class='country']") == "Missouri, 미국")
        // Outside the US too: the region's name, not GeoNames' code ("08, Canada").
        let (_, londons) = try app.page("/search?q=london")
        let londonPlaces = londons.nodes("//ol[@class='results']/li[a='London']/span[@class='country']").map(\.text)
        #expect(londonPlaces.starts(with: ["England, United Kingdom", "Ontario, Canada"]), "\(londonPlaces)")
        // A region named after its city is not said twice.
        let (_, tokyo) = try app.page("/search?q=toky")
        #expect(tokyo.text("//ol[@class='results']/li[a='Tokyo']/span[@class='country']") == "Japan")
        // Paris first, its arrondissements folded into it, Paris, Texas still there.
        let (_, paris) = try app.page("/search?q=paris")
        let slugs = paris.nodes("//ol[@class='results']/li/a").compactMap { $0["data-slug"] }
        #expect(slugs.first == "paris")
        #expect(slugs.contains("paris-us"))
        #expect(!slugs.contains { $0.hasPrefix("paris-1") || $0.hasPrefix("paris-0") || $0.hasPrefix("paris-2") })
        // Asked for, a district is found.
        let (_, district) = try app.page("/search?q=paris+15")
        #expect(district.nodes("//ol[@class='results']/li/a").first?["data-slug"] == "paris-15-vaugirard")
        // More matches than shown: the page says how many.
        let (_, many) = try app.page("/search?q=s")
        #expect(many.text("//p[@class='result-count']")?.hasPrefix("20 of ") == true)
    }

    @Test func nearestRedirectsAndRejectsNonsense() throws {
        let app = try AppHarness()
        let response = try app.get("/nearest?lat=37.57&lon=126.98")
        #expect(response.status == 302)
        #expect(response.headers["Location"] == "/city/seoul")
        // Issue 42 #5: near Haeundae beach, Busan (the nearest point is Gijang's, an empty board).
        #expect(try app.get("/nearest?lat=35.1587&lon=129.1604").headers["Location"] == "/city/busan")
        #expect(try app.get("/nearest?lat=abc&lon=1").status == 400)
        #expect(try app.get("/nearest?lat=91&lon=1").status == 400)
    }

    @Test func homePageListsTheDefaultCitiesWithTodaysFigures() throws {
        let app = try AppHarness()
        let (_, page) = try app.page("/?lang=ko")
        let rows = page.nodes("//li[@class='city-row']")
        #expect(rows.map { $0["data-slug"] } == ["seoul", "busan", "tokyo", "new-york-city", "london"])
        #expect(page.text("//li[@data-slug='seoul']//span[@class='city-name']") == "서울")
        #expect(page.count("//li[@class='city-row']//span[@class='city-temp']") == 5)
        #expect(page.count("//script[@src='/static/js/locate.js']") == 1)
    }
}
