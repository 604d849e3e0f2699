import Foundation
import Testing
import HTTPServer
import HTTPTestSupport
@testable import Weatherboard

@Suite(.serialized, .onEveryEngine) struct SkeletonTests {
    @Test func homePageSpeaksEnglishByDefaultAndKoreanOnRequest() throws {
        let app = try AppHarness()
        let (english, englishPage) = try app.page("/")
        #expect(english.status == 200)
        #expect(englishPage.nodes("/html").first?["lang"] == "en")
        #expect(englishPage.text("//h1") == "How does today compare?")
        #expect(!english.headers.values("Set-Cookie").contains { $0.hasPrefix("lang=") })

        let (korean, koreanPage) = try app.page("/?lang=ko")
        #expect(koreanPage.nodes("/html").first?["lang"] == "ko")
        #expect(koreanPage.text("//h1") == "오늘은 어제와 얼마나 다를까요?")
        let cookie = try #require(korean.headers.values("Set-Cookie").first { $0.hasPrefix("lang=") })
        #expect(cookie.hasPrefix("lang=ko;"))
        #expect(cookie.contains("SameSite=Lax"))

        // the cookie remembers the choice on later pages
        let (_, remembered) = try app.page("/", headers: [("Cookie", "lang=ko")])
        #expect(remembered.nodes("/html").first?["lang"] == "ko")
    }

    @Test func acceptLanguageChoosesKorean() throws {
        let app = try AppHarness()
        let (_, page) = try app.page("/", headers: [("Accept-Language", "ko-KR,ko;q=0.9")])
        #expect(page.nodes("/html").first?["lang"] == "ko")
        let (_, english) = try app.page("/", headers: [("Accept-Language", "fr-FR, en;q=0.8, ko;q=0.5")])
        #expect(english.nodes("/html").first?["lang"] == "en")
        // a query choice beats the cookie and the header
        let (_, chosen) = try app.page("/?lang=en", headers: [("Accept-Language", "ko"), ("Cookie", "lang=ko")])
        #expect(chosen.nodes("/html").first?["lang"] == "en")
    }

    @Test func languageSwitchLinksKeepThePage() throws {
        let app = try AppHarness()
        let (_, page) = try app.page("/?lang=ko")
        let link = try #require(page.nodes("//ul[@class='lang-switch']//a").first)
        #expect(link["href"] == "/?lang=en")
        #expect(link["hreflang"] == "en")
        #expect(page.nodes("//ul[@class='lang-switch']//span[@aria-current='true']").first?.text == "한국어")
    }

    @Test func htmlResponsesCarryTheSecurityHeaders() throws {
        let app = try AppHarness()
        for target in ["/", "/missing-page"] {
            let response = try app.get(target)
            let csp = try #require(response.headers["Content-Security-Policy"])
            #expect(csp.contains("frame-ancestors 'none'"))
            #expect(csp.contains("script-src 'self'"))
            #expect(!csp.contains("unsafe-inline"))
            #expect(response.headers["X-Content-Type-Options"] == "nosniff")
            #expect(response.headers["Referrer-Policy"] == "same-origin")
        }
    }

    @Test func layoutHasTheLandmarksAndNoInlineCode() throws {
        let app = try AppHarness()
        let (_, page) = try app.page("/")
        #expect(page.count("//header") == 1)
        #expect(page.count("//nav") == 1)
        #expect(page.count("//main") == 1)
        #expect(page.count("//footer") == 1)
        #expect(page.nodes("//footer//a").map(\.text).contains("GeoNames"))
        #expect(page.count("//script[not(@src)]") == 0)
        #expect(page.count("//style") == 0)
        #expect(page.count("//*[@style]") == 0)
    }

    @Test func notFoundIsA404PageInTheSiteStyleAndLanguage() throws {
        let app = try AppHarness()
        let (response, page) = try app.page("/no/such/page", headers: [("Accept-Language", "ko")])
        #expect(response.status == 404)
        #expect(response.headers["Content-Type"] == "text/html; charset=utf-8")
        #expect(page.nodes("//section[@class='error-page']").first?["data-status"] == "404")
        #expect(page.text("//h1") == "페이지를 찾을 수 없어요")
        #expect(page.text("//a[@class='brand']") == "웨더보드")
    }

    @Test func wrongMethodIsA405PageWithAllow() throws {
        let app = try AppHarness()
        let response = try TestClient.request(port: app.port, "POST", "/")
        #expect(response.status == 405)
        #expect(response.headers["Allow"] == "GET, HEAD")
        #expect(try MarkupDocument(response.body).nodes("//section[@class='error-page']").first?["data-status"] == "405")
    }

    @Test func staticFilesHaveAnETagAndRevalidateWith304() throws {
        let app = try AppHarness()
        let css = try app.get("/static/css/site.css")
        #expect(css.status == 200)
        #expect(css.headers["Content-Type"] == "text/css; charset=utf-8")
        let etag = try #require(css.headers["ETag"])
        let again = try app.get("/static/css/site.css", headers: [("If-None-Match", etag)])
        #expect(again.status == 304)
        #expect(try app.get("/static/../Package.swift").status == 404)
    }

    @Test func healthzAnswersWhenTheDatabaseDoes() throws {
        let app = try AppHarness()
        let response = try app.get("/healthz")
        #expect(response.status == 200)
        #expect(response.text == "ok")
    }
}

@Suite(.onEveryEngine) struct EscapingTests {
    @Test func escapesTheFiveCharacters() {
        func escape(_ text: String) -> String { String(decoding: HTML.escaped(text), as: UTF8.self) }
        #expect(escape(#"<script>alert("x" & 'y')</script>"#) == "&lt;script&gt;alert(&quot;x&quot; &amp; &#39;y&#39;)&lt;/script&gt;")
        #expect(escape("서울 ☀️ plain") == "서울 ☀️ plain")
        #expect(escape("&&") == "&amp;&amp;")
        #expect(escape("") == "")
    }
}
