import Foundation
import HTTPServer
import HTTPTestSupport
import Testing
@testable import Weatherboard

/// Issue 38 #1: a state change is accepted when the browser says it comes from this site
/// (`Sec-Fetch-Site`, else `Origin`); from anywhere else it is 403 with nothing written. A client
/// that says neither proves its forms with the token, and only its pages carry one.
@Suite(.serialized, .onEveryEngine) struct CrossOriginTests {
    /// A member on Seoul's page, and what a post from them sends with `headers` (no token).
    struct Scene {
        let app: AppHarness
        let member: Browser
        let cookie: String

        init() throws {
            app = try AppHarness { $0.limits.secondsBetweenPosts = 0 }
            member = app.browser()
            try member.signUp("member")
            try member.get("/city/seoul")
            cookie = member.cookies.map { "\($0.key)=\($0.value)" }.joined(separator: "; ")
        }

        func post(_ headers: [(String, String)], body: String = "body=forged") throws -> WireResponse {
            // "SELF" stands for this site's own origin (its port is known only now).
            let headers = headers.map { ($0.0, $0.1.replacingOccurrences(of: "SELF", with: "http://127.0.0.1:\(app.port)")) }
            return try TestClient.exchange(with: app.application.server, "POST", "/city/seoul/posts", headers: [
                ("Cookie", cookie), ("Content-Type", "application/x-www-form-urlencoded"),
            ] + headers, body: Array(body.utf8))
        }
    }

    @Test(arguments: [
        [("Sec-Fetch-Site", "cross-site")],
        [("Sec-Fetch-Site", "same-site")],
        [("Sec-Fetch-Site", "cross-site"), ("Origin", "SELF")],
        [("Origin", "http://127.0.0.1:1")],
        [("Origin", "https://elsewhere.example")],
        [("Origin", "null")],
        [],
    ])
    func aStateChangeFromElsewhereIsRefusedWithNothingWritten(_ headers: [(String, String)]) throws {
        let scene = try Scene()
        let answer = try scene.post(headers)
        #expect(answer.status == 403)
        let page = try MarkupDocument(answer.body)
        #expect(page.nodes("//section[@class='error-page']").first?["data-status"] == "403")
        #expect(try scene.app.count("SELECT count(*) FROM posts") == 0)
    }

    @Test(arguments: [
        [("Sec-Fetch-Site", "same-origin")],
        [("Sec-Fetch-Site", "none")],
        [("Origin", "SELF")],
    ])
    func aStateChangeFromThisSiteNeedsNoToken(_ headers: [(String, String)]) throws {
        let scene = try Scene()
        let answer = try scene.post(headers)
        #expect(answer.status == 303)
        #expect(try scene.app.count("SELECT count(*) FROM posts") == 1)
    }

    @Test func pagesHoldATokenOnlyForAClientThatSaysNothing() throws {
        let app = try AppHarness()
        let modern = app.browser()
        try modern.signUp("modern")
        for address in ["/", "/city/seoul", "/settings", "/signup"] {
            let (_, page) = try modern.get(address)
            #expect(page.count("//input[@name='csrf_token']") == 0, "\(address)")
            #expect(page.count("//form[@method='post']") > 0, "\(address)")
        }
        let guest = app.browser()
        let (answer, page) = try guest.get("/city/seoul")
        #expect(page.count("//input[@name='csrf_token']") == 0)
        #expect(!answer.headers.values("Set-Cookie").contains { $0.hasPrefix("csrf=") }, "a browser's guest page sets no token cookie")

        let old = app.browser(sendsFetchMetadata: false)
        try old.signUp("old")
        let (_, oldPage) = try old.get("/city/seoul")
        #expect(oldPage.count("//input[@name='csrf_token']") > 1)
        #expect(try old.postOnBoard("seoul", "From an old browser").0.status == 303)
        #expect(try app.count("SELECT count(*) FROM posts") == 1)
        // Its page is its own: the kept guest page never carries anyone's token.
        let oldGuest = app.browser(sendsFetchMetadata: false)
        let first = try oldGuest.get("/city/seoul").1.nodes("//input[@name='csrf_token']").first?["value"]
        let second = try oldGuest.get("/city/seoul").1.nodes("//input[@name='csrf_token']").first?["value"]
        #expect(first != nil && second != nil && first != second)
        #expect(try guest.get("/city/seoul").1.count("//input[@name='csrf_token']") == 0)
    }
}
