import Foundation
import HTTPServer
import HTTPTestSupport
import Testing
@testable import Weatherboard

/// Issue 38 #5: the caches change how fast a page is made, never what it says. The same people
/// doing the same things on two sites, one with its caches and one with `--page-caches off`, get
/// the same bytes on every page, read once (a render kept) and again (served from what was kept),
/// plain and compressed.
@Suite(.serialized, .onEveryEngine) struct CacheMatrixTests {
    /// Readers the board shows differently: a guest, a guest with bookmarks, a member with
    /// nothing of theirs shown, the author of the shown posts, a reader who blocked that author,
    /// one who muted that author, one whose post is hidden by reports, one who reported it, and an admin.
    static let roles = ["guest", "bookmarker", "member", "author", "blocker", "muter", "hidden", "reporter", "admin"]

    /// The scene, played on `app` the same way every time; its readers by role.
    static func scene(_ app: AppHarness) throws -> [String: Browser] {
        var people: [String: Browser] = [:]
        for role in roles {
            let browser = app.browser()
            if role != "guest" && role != "bookmarker" { try browser.signUp(role) }
            people[role] = browser
        }
        try app.promoteToAdmin("admin")
        // Three members' reports hide a post (new members' weigh half: docs/standing.md).
        try app.inGoodStanding("member", "reporter", "blocker")
        let author = people["author"]!
        for number in 1...(BoardQueries.pageSize + 2) { try author.postOnBoard("seoul", "Rain report number \(number)") }
        try people["hidden"]!.postOnBoard("seoul", "A post three people report")
        let hiddenPost = Int64(try app.count("SELECT max(id) FROM posts"))
        let newest = Int64(try app.count("SELECT max(id) FROM posts WHERE user_id = (SELECT id FROM users WHERE username = 'author')"))
        for role in ["member", "reporter", "blocker"] {
            try people[role]!.get("/city/seoul")
            #expect(try people[role]!.post("/posts/\(hiddenPost)/report", [("reason", "spam"), ("return_to", "/city/seoul")]).0.status == 303)
        }
        #expect(try app.count("SELECT count(*) FROM posts WHERE id = ? AND hidden_at IS NOT NULL", [hiddenPost]) == 1)
        #expect(try people["member"]!.post("/posts/\(newest)/react", [("return_to", "/city/seoul")]).0.status == 303)
        #expect(try people["member"]!.post("/posts/\(newest)/replies", [("body", "Same here by the river")]).0.status == 303)
        try people["blocker"]!.get("/users/author")
        #expect(try people["blocker"]!.post("/users/author/block", [("return_to", "/city/seoul")]).0.status == 303)
        try people["muter"]!.get("/users/author")
        #expect(try people["muter"]!.post("/users/author/mute", [("duration", "week"), ("return_to", "/city/seoul")]).0.status == 303)
        try people["bookmarker"]!.get("/city/busan")
        #expect(try people["bookmarker"]!.post("/bookmarks/busan", []).0.status == 303)
        // Every confirmation shown, so that none is pending for the pages compared.
        for browser in people.values { #expect(try browser.get("/search?q=").0.status == 200) }
        return people
    }

    /// The pages each reader opens: home, the board's first and second pages, a post's page, and
    /// the same in Korean.
    static func addresses(_ app: AppHarness) throws -> [String] {
        let newest = try app.count("SELECT max(id) FROM posts WHERE user_id = (SELECT id FROM users WHERE username = 'author')")
        let second = try app.count("SELECT id FROM posts WHERE parent_id IS NULL ORDER BY id DESC LIMIT 1 OFFSET \(BoardQueries.pageSize - 1)")
        return ["/", "/city/seoul", "/city/seoul?before=\(second)", "/posts/\(newest)", "/city/busan",
                "/city/seoul?lang=ko", "/?lang=ko", "/city/seoul?before=\(second)&lang=ko",
                "/posts/\(newest)/replies", "/posts/\(newest)/replies?lang=ko"] // what live.js fetches for new replies
    }

    /// Issue 63 #4: the same address by cookie and by `?lang=` is one kept page, and it says the
    /// same for both: its sign-in link came back to `?lang=ko` for a guest whose language was a
    /// cookie, because the first render (by query) was kept for the second.
    @Test func theSameAddressByCookieAndByQueryIsOnePageSayingTheSame() throws {
        let on = try AppHarness()
        let off = try AppHarness { $0.pageCaches = false }
        for app in [on, off] {
            let byQuery = app.browser(), byCookie = app.browser()
            byCookie.cookies[AppContext.languageCookie] = "ko"
            let (_, queried) = try byQuery.get("/city/seoul?lang=ko")
            let (_, cookied) = try byCookie.get("/city/seoul")
            for page in [queried, cookied] {
                #expect(page.nodes("//a[@class='sign-in']").first?["href"] == "/login?next=%2Fcity%2Fseoul", "\(app.application.configuration.pageCaches)")
                #expect(page.nodes("//html").first?["lang"] == "ko")
            }
        }
        let fromKept = try { let b = on.browser(); b.cookies[AppContext.languageCookie] = "ko"; return try b.get("/city/seoul").0.body }()
        let fresh = try { let b = off.browser(); b.cookies[AppContext.languageCookie] = "ko"; return try b.get("/city/seoul").0.body }()
        #expect(Self.replacing(off.application.live.node, with: on.application.live.node, in: fresh) == fromKept)
    }

    @Test func everyReaderGetsTheSameBytesWithCachesOnAndOff() throws {
        let configure: (inout AppConfiguration) -> Void = { $0.limits.secondsBetweenPosts = 0; $0.limits.postsPerDay = 100 }
        let on = try AppHarness(configure: configure)
        let off = try AppHarness { configure(&$0); $0.pageCaches = false }
        let (cached, fresh) = (try Self.scene(on), try Self.scene(off))
        let addresses = try Self.addresses(on)
        #expect(try Self.addresses(off) == addresses)
        for role in Self.roles {
            for address in addresses {
                var expected = try fresh[role]!.get(address).0
                // Each site numbers its live events under its own node name (`data-live-position`):
                // the one difference two sites may have.
                expected.body = Self.replacing(off.application.live.node, with: on.application.live.node, in: expected.body)
                // (A post by someone the reader blocked is shown to them as hidden, with Unblock;
                // its new replies, what live.js asks for, are not found.)
                #expect(expected.status == (role == "blocker" && address.contains("/replies") ? 404 : 200), "\(role) \(address)")
                for time in ["kept", "served again"] {
                    let got = try cached[role]!.get(address).0
                    let same = got.status == expected.status && got.body == expected.body
                    #expect(same, "\(role) \(address), \(time): \(got.status) \(Self.firstDifference(got.body, expected.body))")
                }
                let cookie = cached[role]!.cookies.map { "\($0.key)=\($0.value)" }.joined(separator: "; ")
                let packed = try on.get(address, headers: [("Cookie", cookie), ("Accept-Encoding", "gzip")])
                // (A fragment of a few hundred bytes goes out as it is.)
                let inflated = packed.headers["Content-Encoding"] == "gzip" ? try gunzip(packed.body) : packed.body
                #expect(sameBytes(inflated, expected.body), "\(role) \(address), compressed: \(Self.firstDifference(inflated, expected.body))")
            }
        }
        // The switch is what made the difference: nothing was kept with the caches off.
        #expect(off.application.pageCache.renders.load(ordering: .relaxed) == 0)
        #expect(off.application.boards.made.load(ordering: .relaxed) == 0)
        #expect(on.application.boards.reused.load(ordering: .relaxed) > 0)
    }

    static func replacing(_ text: String, with other: String, in bytes: [UInt8]) -> [UInt8] {
        Array(String(decoding: bytes, as: UTF8.self).replacingOccurrences(of: text, with: other).utf8)
    }

    /// Where two pages part, with some context, for the failure message.
    static func firstDifference(_ a: [UInt8], _ b: [UInt8]) -> String {
        guard let at = zip(a, b).enumerated().first(where: { $0.element.0 != $0.element.1 })?.offset ?? (a.count == b.count ? nil : min(a.count, b.count))
        else { return "same" }
        let from = max(0, at - 80)
        return "at \(at): «\(String(decoding: a[from..<min(a.count, at + 80)], as: UTF8.self))» against «\(String(decoding: b[from..<min(b.count, at + 80)], as: UTF8.self))»"
    }
}
