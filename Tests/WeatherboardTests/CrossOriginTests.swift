import Foundation
import HTTPServer
import HTTPTestSupport
import Testing
@testable import Weatherboard

/// Issue 38 #1: a state change is accepted when the browser says it comes from this site
/// (`Sec-Fetch-Site`, else `Origin`); from anywhere else it is 403 with nothing written. A client
/// that says neither confirms on a page of ours first (issue 64); no page carries a token.
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

    /// Issue 64: no page carries a form token, so every kind of page is the same bytes whether
    /// or not the client sends Fetch Metadata: for a guest, a member and an admin.
    @Test func everyKindOfPageIsTheSameBytesWithAndWithoutFetchMetadata() throws {
        let scene = try Scene()
        let app = scene.app
        try app.promoteToAdmin("member")
        #expect(try scene.member.postOnBoard("seoul", "Clear and cold today").0.status == 303)
        let postID = try app.count("SELECT max(id) FROM posts")
        try scene.member.post("/posts/\(postID)/replies", [("body", "Colder tomorrow")])
        let guestPages = ["/", "/city/seoul", "/city/busan", "/posts/\(postID)", "/search?q=seoul", "/search/posts?q=cold",
                          "/users/member", "/signup", "/login", "/login/recover", "/password/forgot", "/offline", "/nearest?lat=37.5&lon=127"]
        let memberPages = guestPages + ["/settings", "/settings/notifications", "/settings/passkeys", "/settings/rain-alerts",
                                        "/settings/recovery", "/settings/email", "/settings/push", "/settings/reports", "/notifications",
                                        "/posts/\(postID)/edit", "/posts/\(postID)/report", "/posts/\(postID)/delete",
                                        "/admin", "/admin/log", "/admin/users/member", "/city/seoul/moderation"]
        for (cookie, pages) in [("", guestPages), (scene.cookie, memberPages)] {
            for address in pages {
                let headers = cookie.isEmpty ? [] : [("Cookie", cookie)]
                let modern = try app.get(address, headers: headers + [("Sec-Fetch-Site", "same-origin"), ("Sec-Fetch-Mode", "navigate")])
                let old = try app.get(address, headers: headers, fetchMetadata: false)
                #expect(modern.status == old.status, "\(address)")
                #expect(modern.body == old.body, "\(address) \(cookie.isEmpty ? "guest" : "member")")
                #expect(!old.headers.values("Set-Cookie").contains { $0.hasPrefix("csrf=") }, "\(address)")
                let gzipModern = try app.get(address, headers: headers + [("Accept-Encoding", "gzip"), ("Sec-Fetch-Site", "none")])
                let gzipOld = try app.get(address, headers: headers + [("Accept-Encoding", "gzip")], fetchMetadata: false)
                // Compressed afresh or kept, the gzip bytes differ by the cache's state; what they hold may not.
                let inflated = try [gzipModern, gzipOld].map { $0.headers["Content-Encoding"] == "gzip" ? try gunzip($0.body) : $0.body }
                #expect(inflated == [old.body, old.body], "gzip \(address)")
            }
        }
    }

    /// Issue 64: a state change with neither `Sec-Fetch-Site` nor `Origin` is answered with a
    /// confirmation (200, nothing changed) that says what is about to happen and keeps the form;
    /// confirming does it once and only once; a confirmation without its token, with another's,
    /// for another action, or sent from elsewhere is refused.
    @Test func aStateChangeThatSaysNeitherIsConfirmedOnceAndOnlyOnce() throws {
        let scene = try Scene()
        let app = scene.app
        let old = scene.member
        old.fetchSite = nil
        let (asked, page) = try old.post("/city/seoul/posts", [("body", "Snow by the river <b>now</b>")])
        #expect(asked.status == 200)
        let question = try #require(page)
        #expect(question.text("//section[@class='confirm-page']/h1") == "Post on this city's board")
        #expect(question.text("//blockquote[@class='confirm-quote']") == "Snow by the river <b>now</b>")
        #expect(question.nodes("//form[contains(@class,'confirm-form')]").first?["action"] == "/city/seoul/posts")
        #expect(question.count("//form[contains(@class,'confirm-form')]//input[@name='body'][@value='Snow by the river <b>now</b>']") == 1)
        #expect(asked.headers["Cache-Control"] == "no-store")
        #expect(try app.count("SELECT count(*) FROM posts") == 0)
        let token = try #require(question.nodes("//input[@name='confirm_token']").first?["value"])

        // A forged confirmation: a token that was never given.
        #expect(try old.post("/city/seoul/posts", [("body", "forged"), ("confirm_token", Tokens.random())]).0.status == 403)
        // This token for another action.
        #expect(try old.post("/bookmarks/busan", [("confirm_token", token)]).0.status == 403)
        // This token sent from another site.
        old.fetchSite = "cross-site"
        #expect(try old.post("/city/seoul/posts", [("body", "Snow by the river <b>now</b>"), ("confirm_token", token)]).0.status == 403)
        old.fetchSite = nil
        #expect(try app.count("SELECT count(*) FROM posts") == 0)
        #expect(try app.count("SELECT count(*) FROM bookmarks") == 0)

        old.lastPage = question
        let (done, _) = try old.confirm()
        #expect(done.status == 303)
        #expect(try app.count("SELECT count(*) FROM posts WHERE body = 'Snow by the river <b>now</b>'") == 1)
        // Once only: the same confirmation again is refused.
        old.lastPage = question
        let (again, againPage) = try old.confirm()
        #expect(again.status == 403)
        #expect(againPage?.nodes("//section[@class='error-page']").first?["data-status"] == "403")
        #expect(try app.count("SELECT count(*) FROM posts") == 1)
        // Another member's session cannot use one given to this one.
        let other = app.browser(sendsFetchMetadata: false)
        try other.signUp("other")
        try old.post("/bookmarks/busan", [])
        let bookmarkQuestion = try #require(old.lastPage)
        other.lastPage = bookmarkQuestion
        #expect(try other.confirm().0.status == 403)
        old.lastPage = bookmarkQuestion
        #expect(try old.confirm().0.status == 303)
        #expect(try app.count("SELECT count(*) FROM bookmarks") == 1)
    }

    /// Every state-changing route says what it does on its confirmation, in every language (the
    /// router's own table, so a route added later without its words fails here).
    @Test func everyStateChangingRouteSaysWhatItDoes() throws {
        let app = try AppHarness()
        let catalogs = app.application.pages.renderer.localization.catalogs
        let changes = app.application.router.routes.filter { $0.method != "GET" && $0.method != "HEAD" }
        #expect(changes.count > 40)
        for route in changes {
            let key = UnstatedPosts.descriptionKey(route: route.path)
            for (language, catalog) in catalogs { #expect(catalog[key] != nil, "\(route.method) \(route.path): \(key) in \(language)") }
        }
    }

    /// A script's JSON that says neither cannot be shown back for confirming: refused.
    @Test func aScriptsRequestThatSaysNeitherIsRefused() throws {
        let scene = try Scene()
        scene.member.fetchSite = nil
        let answer = try scene.member.json("POST", "/settings/passkeys/options", "{}")
        #expect(answer.status == 403)
        #expect(try scene.app.count("SELECT count(*) FROM webauthn_challenges") == 0)
    }
}
