import Foundation
import Testing
import HTTPTestSupport
@testable import Weatherboard

/// Issue 26 #8 and #11: each post's actions say whom they are about to a screen reader, each
/// post has an accessible name (its author and time), and the report form chooses no reason
/// for the reporter.
@Suite(.serialized, .onEveryEngine) struct PostActionsForEveryoneTests {
    @Test func actionsNameTheirPersonPostsHaveANameAndNoReasonIsPreselected() throws {
        let app = try AppHarness()
        let writer = app.browser()
        try writer.signUp("wanda", displayName: "Wanda Weather")
        #expect(try writer.postOnBoard("seoul", "Hail on Jongno, small but loud").0.status == 303)
        let reader = app.browser()
        try reader.signUp("rita")
        let (_, page) = try reader.get("/city/seoul")
        let post = try #require(page.nodes("//article[@data-author='wanda']").first)
        let id = try #require(post["data-post-id"])
        #expect(post["aria-labelledby"] == "post-\(id)-by post-\(id)-time")
        #expect(page.text("//*[@id='post-\(id)-by']") == "Wanda Weather")
        #expect(page.count("//*[@id='post-\(id)-time']") == 1)
        #expect(page.text("//article[@data-author='wanda']//form[contains(@action,'/block')]/button") == "Block this person (Wanda Weather)")
        #expect(page.text("//article[@data-author='wanda']//details[@class='report-menu']/summary") == "Report (Wanda Weather)")
        let selected = page.nodes("//article[@data-author='wanda']//select[@name='reason']/option[@selected]")
        #expect(selected.count == 1 && selected.first?["value"] == "" && selected.first?["disabled"] != nil)
        // Sent without a choice: refused with the reason, nothing stored.
        let (refused, _) = try reader.post("/posts/\(id)/report", [("reason", ""), ("detail", "")])
        #expect(refused.status == 422)
        #expect(try app.count("SELECT count(*) FROM reports") == 0)
    }
}

@Suite(.serialized, .onEveryEngine) struct BoardTests {
    @Test func postsAppearNewestFirstWithTheirMarkupContract() throws {
        let app = try AppHarness()
        let ivan = app.browser()
        try ivan.signUp("ivan", displayName: "Ivan <The Terrible>")
        try app.inGoodStanding("ivan") // posts a link, and again after the site's pause
        try ivan.postOnBoard("seoul", "first")
        app.clock.advance(11)
        let (response, _) = try ivan.postOnBoard("seoul", "line one\nsee https://example.com/a?b=1&c=2.\n<script>alert(1)</script>")
        #expect(response.status == 303)
        let (_, page) = try app.browser().get("/city/seoul")
        let posts = page.nodes("//article[contains(@class,'post')]")
        #expect(posts.count == 2)
        #expect(posts.allSatisfy { $0["data-author"] == "ivan" && $0["data-post-id"] != nil })
        #expect(page.text("//article[1]//p[@class='post-body']") == "line one\nsee https://example.com/a?b=1&c=2.\n<script>alert(1)</script>")
        let link = try #require(page.nodes("//article[1]//p[@class='post-body']/a").first)
        #expect(link["href"] == "https://example.com/a?b=1&c=2")
        #expect(link["rel"] == "nofollow ugc noopener")
        #expect(page.count("//article//script") == 0)
        #expect(page.text("//article[1]//a[@class='author']") == "Ivan <The Terrible>")
        #expect(page.nodes("//article[1]//time").first?["datetime"] == "2026-11-22T05:45:11Z")
        #expect(page.count("//form[@class='composer']") == 0) // guests get a sign-in link instead
    }

    /// One's own posts and replies say "You" beside the name, to their writer only: a flag per
    /// reader that the kept boards carry by construction (`Reader`: the presenter reads nothing
    /// else of the reader), on the board and on the post's own page, after another reader's
    /// render of the same board was kept.
    @Test func onesOwnPostsSayYouToTheirWriterOnly() throws {
        let app = try AppHarness()
        let writer = app.browser(), reader = app.browser()
        try writer.signUp("writer")
        try reader.signUp("reader")
        try writer.postOnBoard("seoul", "Fog on the river")
        let postID = try app.count("SELECT max(id) FROM posts")
        #expect(try reader.post("/posts/\(postID)/replies", [("body", "Same here")]).0.status == 303)
        let mine = "//*[@data-mine]"
        for _ in 0..<2 {
            #expect(try app.browser().get("/city/seoul").1.count(mine) == 0)
            let seen = try reader.get("/city/seoul").1
            #expect(seen.nodes(mine + "/ancestor::article[1]").map { $0["data-author"] } == ["reader"])
            let own = try writer.get("/city/seoul").1
            #expect(own.nodes(mine + "/ancestor::article[1]").map { $0["data-author"] } == ["writer"])
            #expect(own.text("//article[@data-author='writer']//*[@data-mine]") == "You")
        }
        writer.acceptLanguage = "ko"
        #expect(try writer.get("/posts/\(postID)").1.text("//*[@data-mine]") == "나")
    }

    @Test func refusedPostsComeBackWithTheMessageAndTheTextStillInTheBox() throws {
        let app = try AppHarness()
        let judy = app.browser()
        try judy.signUp("judy")
        try app.inGoodStanding("judy")
        let (empty, emptyPage) = try judy.postOnBoard("seoul", "   \n ")
        #expect(empty.status == 422)
        #expect(emptyPage?.text("//p[@id='post-error']") == "Write something first.")
        let long = String(repeating: "가", count: 501)
        let (tooLong, longPage) = try judy.postOnBoard("seoul", long)
        #expect(tooLong.status == 422)
        #expect(longPage?.text("//textarea[@id='post-body']") == long)
        #expect(longPage?.nodes("//textarea[@id='post-body']").first?["aria-invalid"] == "true")
        #expect(try judy.postOnBoard("seoul", String(repeating: "가", count: 500)).0.status == 303)
        let (tooFast, fastPage) = try judy.postOnBoard("seoul", "again so soon")
        #expect(tooFast.status == 429)
        #expect(fastPage?.text("//p[@id='post-error']") == "You are posting too fast. Please wait 10 seconds.")
        #expect(fastPage?.text("//textarea[@id='post-body']") == "again so soon")
        app.clock.advance(11)
        // The same text again is not a second post: the person is shown the one they have.
        let (duplicate, _) = try judy.postOnBoard("seoul", String(repeating: "가", count: 500))
        #expect(duplicate.status == 303)
        #expect(duplicate.headers["Location"]?.hasPrefix("/city/seoul#post-") == true)
        #expect(try app.count("SELECT count(*) FROM posts") == 1)
    }

    /// Sends the same person's post form on two connections so that both arrive together: every
    /// byte but the last on each, then the last bytes. Returns the two statuses, sorted.
    private func postTwiceAtOnce(_ app: AppHarness, as person: Browser, bodies: [String]) throws -> [Int] {
        try person.get("/city/seoul")
        let cookie = person.cookies.map { "\($0.key)=\($0.value)" }.joined(separator: "; ")
        let requests = bodies.map { body -> [UInt8] in
            let form = "body=\(percentEncode(body))"
            return Array(("POST /city/seoul/posts HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: \(cookie)\r\nSec-Fetch-Site: same-origin\r\n"
                + "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: \(form.utf8.count)\r\n\r\n\(form)").utf8)
        }
        let clients = try requests.map { _ in try TestClient(port: app.port) }
        for (client, request) in zip(clients, requests) { try client.send(Array(request.dropLast())) }
        for (client, request) in zip(clients, requests) { try client.send([request[request.count - 1]]) }
        return try clients.map { try $0.readResponse().status }.sorted()
    }

    @Test func twoPostsSentAtTheSameInstantByOnePersonAreOneAcceptedOneTooFast() throws {
        let app = try AppHarness()
        let eve = app.browser()
        try eve.signUp("eve")
        #expect(try postTwiceAtOnce(app, as: eve, bodies: ["first of two at once", "second of two at once"]) == [303, 429])
        #expect(try app.count("SELECT count(*) FROM posts") == 1)
    }

    @Test func aDoubleSubmittedPostIsStoredOnce() throws {
        let app = try AppHarness { $0.limits.secondsBetweenPosts = 0 } // only the duplicate rule stands between them
        let finn = app.browser()
        try finn.signUp("finn")
        // Both answered with the post (the second is shown the first's), one row.
        #expect(try postTwiceAtOnce(app, as: finn, bodies: ["the button pressed twice", "the button pressed twice"]) == [303, 303])
        #expect(try app.count("SELECT count(*) FROM posts") == 1)
    }

    /// The duplicate rule compares the words (case and runs of white space aside) with the
    /// author's posts of the last five minutes as they read now, edits included, by a key kept
    /// with each post.
    @Test func theSameWordsAgainAreTheOnePostAsTheyReadNow() throws {
        let app = try AppHarness { $0.limits.secondsBetweenPosts = 0 }
        let nina = app.browser()
        try nina.signUp("nina")
        let (saved, _) = try nina.postOnBoard("seoul", "Hail  on the\nRIVER")
        // Issue 65 #9: the page opens at the new post, which the message says was posted.
        let newest = try app.count("SELECT max(id) FROM posts")
        #expect(saved.headers["Location"] == "/city/seoul#post-\(newest)")
        let (_, landed) = try nina.get("/city/seoul")
        #expect(landed.text("//div[@class='flash']/span") == "Posted. Thank you for telling us how it is there.")
        let id = try app.count("SELECT max(id) FROM posts")
        let shownAgain = "/city/seoul#post-\(id)"
        #expect(try nina.postOnBoard("seoul", "hail on the river").0.headers["Location"] == shownAgain, "the same post, shown again")
        try nina.get("/posts/\(id)/edit")
        #expect(try nina.post("/posts/\(id)/edit", [("body", "Fog by the bridge")]).0.status == 303)
        #expect(try nina.postOnBoard("seoul", "hail on the river").0.headers["Location"] == "/city/seoul#post-\(id + 1)",
                "the words it had are no longer there: a new post")
        #expect(try nina.postOnBoard("seoul", "fog by the BRIDGE").0.headers["Location"] == shownAgain, "the words it has now are")
        app.clock.advance(PostingRules.duplicateWindow + 1)
        #expect(try nina.postOnBoard("seoul", "fog by the bridge").0.headers["Location"] == "/city/seoul#post-\(id + 2)", "five minutes on, a new post")
        #expect(try app.count("SELECT count(*) FROM posts") == 3)
    }

    @Test func afterARefusedFormTheLanguageSwitchLeadsToAPageNotA405() throws {
        let app = try AppHarness()
        let lena = app.browser()
        try lena.signUp("lena")
        let (refused, page) = try lena.postOnBoard("seoul", "   ")
        #expect(refused.status == 422)
        let korean = try #require(page?.nodes("//ul[@class='lang-switch']//a[@hreflang='ko']").first?["href"])
        #expect(korean == "/city/seoul?lang=ko")
        let (switched, koreanPage) = try lena.get(korean)
        #expect(switched.status == 200)
        #expect(koreanPage.nodes("//html").first?["lang"] == "ko")
    }

    @Test func aDayAllowsFiftyPosts() throws {
        let app = try AppHarness()
        let kim = app.browser()
        try kim.signUp("kim")
        try app.inGoodStanding("kim")
        for i in 0..<50 {
            #expect(try kim.postOnBoard("busan", "post number \(i)").0.status == 303)
            app.clock.advance(11)
        }
        let (refused, page) = try kim.postOnBoard("busan", "one more")
        #expect(refused.status == 429)
        #expect(page?.text("//p[@id='post-error']") == "You have reached today's limit of 50 posts.")
        // the board pages through them, 20 at a time
        let (_, first) = try app.browser().get("/city/busan")
        #expect(first.count("//article[contains(@class,'post')]") == 20)
        let older = try #require(first.nodes("//a[@class='older']").first?["href"])
        let (_, second) = try app.browser().get(older)
        #expect(second.count("//article[contains(@class,'post')]") == 20)
        #expect(second.text("//article[1]//p[@class='post-body']") == "post number 29")
    }

    @Test func authorsEditWithinFifteenMinutesAndNobodyElseTouchesTheirPosts() throws {
        let app = try AppHarness()
        let leo = app.browser()
        try leo.signUp("leo")
        try leo.postOnBoard("seoul", "typo heer")
        let id = try app.count("SELECT id FROM posts")
        let mallory = app.browser()
        try mallory.signUp("mallory")
        try mallory.get("/city/seoul")
        #expect(try mallory.post("/posts/\(id)/edit", [("body", "pwned")]).0.status == 404)
        #expect(try mallory.post("/posts/\(id)/delete", []).0.status == 404)
        #expect(try app.count("SELECT count(*) FROM posts WHERE body = 'typo heer'") == 1)

        try leo.get("/posts/\(id)/edit")
        let (invalid, invalidPage) = try leo.post("/posts/\(id)/edit", [("body", "")])
        #expect(invalid.status == 422)
        #expect(invalidPage?.text("//p[@id='edit-error']") == "Write something first.")
        try leo.get("/posts/\(id)/edit")
        #expect(try leo.post("/posts/\(id)/edit", [("body", "typo here")]).0.status == 303)
        let (_, page) = try app.browser().get("/city/seoul")
        #expect(page.text("//article//p[@class='post-body']") == "typo here")
        #expect(page.count("//article//span[@class='edited']") == 1)

        app.clock.advance(15 * 60 + 1)
        try leo.get("/posts/\(id)/edit")
        #expect(try leo.post("/posts/\(id)/edit", [("body", "too late")]).0.status == 403)
        try leo.get("/city/seoul")
        #expect(try leo.post("/posts/\(id)/delete", []).0.status == 303)
        #expect(try app.count("SELECT count(*) FROM posts") == 0)
    }

    /// Issue 61 #11: the feed's links followed whatever `Host` a request sent; with `--public-url`
    /// they are the site's own, whoever asks.
    @Test func theFeedsLinksAreThePublicAddressWhateverHostIsSent() throws {
        let app = try AppHarness { $0.publicURL = "https://weather.example" }
        let mia = app.browser()
        try mia.signUp("mia")
        try mia.postOnBoard("seoul", "Fog on the river")
        let client = try TestClient(port: app.port)
        try client.send("GET /city/seoul/feed.atom HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n")
        let feed = try client.readResponse()
        #expect(feed.status == 200)
        let xml = try MarkupDocument(feed.body, as: .xml)
        let links = xml.nodes("//*[local-name()='link']").compactMap { $0["href"] }
        #expect(!links.isEmpty)
        #expect(links.allSatisfy { $0.hasPrefix("https://weather.example/") }, "\(links)")
        #expect(!feed.text.contains("evil.example"))
    }

    @Test func theAtomFeedIsValidXMLOfTheVisiblePosts() throws {
        let app = try AppHarness()
        let mia = app.browser()
        try mia.signUp("mia")
        try mia.postOnBoard("seoul", "Rain & wind <later>")
        let (response, page) = try app.browser().get("/city/seoul")
        #expect(page.nodes("//link[@rel='alternate'][@type='application/atom+xml']").first?["href"] == "/city/seoul/feed.atom")
        _ = response
        let feed = try app.get("/city/seoul/feed.atom")
        #expect(feed.headers["Content-Type"] == "application/atom+xml; charset=utf-8")
        let xml = try MarkupDocument(feed.body, as: .xml)
        #expect(xml.count("/*[local-name()='feed']") == 1)
        #expect(xml.text("//*[local-name()='entry']/*[local-name()='content']") == "Rain & wind <later>")
        #expect(xml.text("//*[local-name()='entry']/*[local-name()='author']/*[local-name()='name']") == "Mia")
        #expect(xml.count("//*[local-name()='entry']/*[local-name()='id']") == 1)
        #expect(xml.count("/*[local-name()='feed']/*[local-name()='updated']") == 1)
    }
}

@Suite(.serialized, .onEveryEngine) struct BlockingTests {
    @Test func aBlockerNeverSeesTheBlockedPersonsPostsAnywhereUntilUnblocking() throws {
        let app = try AppHarness()
        let noisy = app.browser()
        try noisy.signUp("noisy")
        let quiet = app.browser()
        try quiet.signUp("quiet")
        // 25 posts by noisy and 3 by quiet, spread over two board pages
        for i in 0..<25 {
            try noisy.postOnBoard("seoul", "noisy \(i)")
            app.clock.advance(11)
            if i % 10 == 0 {
                try quiet.postOnBoard("seoul", "quiet \(i)")
            }
        }
        try quiet.get("/users/noisy")
        let (blocked, _) = try quiet.post("/users/noisy/block", [])
        #expect(blocked.status == 303)
        try quiet.get("/users/noisy")
        #expect(try quiet.post("/users/noisy/block", []).0.status == 303) // idempotent
        #expect(try app.count("SELECT count(*) FROM blocks") == 1)

        func authorsSeen(by browser: Browser) throws -> Set<String> {
            var authors = Set<String>()
            var target: String? = "/city/seoul"
            while let next = target {
                let (_, page) = try browser.get(next)
                authors.formUnion(page.nodes("//article[contains(@class,'post')]").compactMap { $0["data-author"] })
                target = page.nodes("//a[@class='older']").first?["href"]
            }
            let feed = try MarkupDocument(TestClient.request(port: app.port, "GET", "/city/seoul/feed.atom",
                                                             headers: [("Cookie", browser.cookies.map { "\($0.key)=\($0.value)" }.joined(separator: "; "))]).body, as: .xml)
            authors.formUnion(feed.nodes("//*[local-name()='author']/*[local-name()='name']").map { $0.text.lowercased() })
            return authors
        }
        #expect(try authorsSeen(by: quiet) == ["quiet"])
        #expect(try authorsSeen(by: app.browser()) == ["quiet", "noisy"])
        let (_, profile) = try quiet.get("/users/noisy")
        #expect(profile.text("//p[@class='blocked-notice']") == "You blocked this person. Their posts are hidden from you.")
        #expect(profile.count("//article[contains(@class,'post')]") == 0)
        // the blocked person is not told
        let (_, ownProfile) = try noisy.get("/users/quiet")
        #expect(ownProfile.count("//p[@class='blocked-notice']") == 0)
        #expect(ownProfile.count("//article[contains(@class,'post')]") == 3)

        try quiet.get("/settings")
        #expect(quiet.lastPage?.text("//ul[@class='blocked-list']/li/a") == "Noisy")
        #expect(try quiet.post("/users/noisy/unblock", [("return_to", "/settings")]).0.headers["Location"] == "/settings")
        #expect(try authorsSeen(by: quiet) == ["quiet", "noisy"])
    }

    @Test func youCannotBlockYourselfOrAnAdmin() throws {
        let app = try AppHarness()
        let olga = app.browser()
        try olga.signUp("olga")
        try app.browser().signUp("boss")
        try app.promoteToAdmin("boss")
        try olga.get("/users/olga")
        #expect(try olga.post("/users/olga/block", []).0.status == 400)
        try olga.get("/users/boss")
        #expect(olga.lastPage?.count("//form[contains(@action,'/block')]") == 0)
        #expect(try olga.post("/users/boss/block", []).0.status == 403)
        #expect(try app.count("SELECT count(*) FROM blocks") == 0)
    }
}

@Suite(.serialized, .onEveryEngine) struct ReportingTests {
    @Test func theThirdDistinctReporterHidesThePostForEveryoneButItsAuthorAndAdmins() throws {
        let app = try AppHarness()
        let author = app.browser()
        try author.signUp("author")
        try author.postOnBoard("seoul", "buy cheap watches")
        let id = try app.count("SELECT id FROM posts")
        let reporters = try (1...3).map { n -> Browser in
            let browser = app.browser()
            try browser.signUp("reporter\(n)")
            try app.inGoodStanding("reporter\(n)") // three members' reports hide it
            return browser
        }
        let bystander = app.browser()
        try bystander.signUp("bystander")
        let admin = app.browser()
        try admin.signUp("admin1")
        try app.promoteToAdmin("admin1")

        func visible(to browser: Browser) throws -> Bool {
            try browser.get("/city/seoul").1.count("//article[@data-post-id='\(id)']//p[@class='post-body']") == 1
        }
        for (n, reporter) in reporters.enumerated() {
            try reporter.get("/city/seoul")
            let (response, _) = try reporter.post("/posts/\(id)/report", [("reason", "spam"), ("detail", ""), ("return_to", "/city/seoul")])
            #expect(response.status == 303)
            // the reporter sees a placeholder at once (until the post is hidden for everyone)
            let (_, page) = try reporter.get("/city/seoul")
            if n < 2 {
                #expect(page.text("//article[@data-post-id='\(id)']/p[@class='reported-placeholder']") == "You reported this post.")
            }
            #expect(page.count("//article[@data-post-id='\(id)']//p[@class='post-body']") == 0)
            #expect(try visible(to: bystander) == (n < 2), "after \(n + 1) reports")
        }
        #expect(try visible(to: author))
        #expect(try author.get("/city/seoul").1.count("//article[@data-post-id='\(id)'][contains(@class,'is-hidden')]") == 1)
        #expect(try visible(to: admin))
        // a second report by the same person is a friendly no-op
        try reporters[0].get("/city/seoul")
        #expect(try reporters[0].post("/posts/\(id)/report", [("reason", "spam")]).0.status == 303)
        #expect(try app.count("SELECT count(*) FROM reports") == 3)
        // each reporter follows the outcome
        let (_, mine) = try reporters[0].get("/settings/reports")
        #expect(mine.nodes("//li[@class='my-report']").first?["data-outcome"] == "pending")
    }

    @Test func reportRulesAndWithdrawal() throws {
        let app = try AppHarness()
        let author = app.browser()
        try author.signUp("poster")
        try author.postOnBoard("seoul", "hello")
        let id = try app.count("SELECT id FROM posts")
        try author.get("/city/seoul")
        #expect(try author.post("/posts/\(id)/report", [("reason", "spam")]).0.status == 400) // own post
        let rita = app.browser()
        try rita.signUp("rita")
        try rita.get("/city/seoul")
        // a refused report comes back as its form: the message, and what was chosen and typed
        #expect(try rita.post("/posts/\(id)/report", [("reason", "boring")]).0.status == 422)
        let (other, otherPage) = try rita.post("/posts/\(id)/report", [("reason", "other"), ("detail", "  "), ("return_to", "/city/seoul?before=99")])
        #expect(other.status == 422)
        #expect(otherPage?.text("//p[@id='report-error']") == "Say what is wrong when the reason is “Other”.")
        #expect(otherPage?.nodes("//select[@name='reason']/option[@selected]").first?["value"] == "other")
        #expect(otherPage?.nodes("//input[@name='return_to']").first?["value"] == "/city/seoul?before=99")
        let long = String(repeating: "x", count: 1001)
        let (tooLong, longPage) = try rita.post("/posts/\(id)/report", [("reason", "spam"), ("detail", long)])
        #expect(tooLong.status == 422)
        #expect(longPage?.text("//textarea[@name='detail']") == long)
        #expect(try app.count("SELECT count(*) FROM reports") == 0)
        // the form has a page of its own too
        let (_, form) = try rita.get("/posts/\(id)/report?return_to=/city/seoul")
        #expect(form.count("//form[@action='/posts/\(id)/report']//select[@name='reason']/option[@value!='']") == ReportReason.allCases.count)
        #expect(form.nodes("//select[@name='reason']/option[@selected]").first?["value"] == "", "no reason is chosen for the reporter")
        #expect(try rita.post("/posts/\(id)/report", [("reason", "other"), ("detail", "weird")]).0.status == 303)
        try rita.get("/city/seoul")
        #expect(try rita.post("/posts/\(id)/report/withdraw", [("return_to", "/city/seoul")]).0.status == 303)
        #expect(try app.count("SELECT count(*) FROM reports") == 0)
        #expect(try rita.get("/city/seoul").1.count("//article[@data-post-id='\(id)']//p[@class='post-body']") == 1)
        try rita.post("/posts/\(id)/report", [("reason", "spam")])
        app.clock.advance(601)
        try rita.get("/city/seoul")
        #expect(try rita.post("/posts/\(id)/report/withdraw", []).0.status == 403)
    }
}

@Suite(.serialized, .onEveryEngine) struct BookmarkTests {
    @Test func guestsKeepBookmarksInACookieAndMembersInTheDatabase() throws {
        let app = try AppHarness()
        let guest = app.browser()
        try guest.get("/city/jeju-city")
        #expect(try guest.post("/bookmarks/jeju-city", [("return_to", "/city/jeju-city")]).0.status == 303)
        let (_, home) = try guest.get("/")
        #expect(home.nodes("//li[@class='city-row']").map { $0["data-slug"] } == ["jeju-city"])
        try guest.post("/bookmarks/jeju-city/delete", [("return_to", "/")])
        // The default list again, after the city read last.
        #expect(try guest.get("/").1.nodes("//li[@class='city-row']").map { $0["data-slug"] ?? "" } == ["jeju-city"] + HomeController.defaultCities)

        let member = app.browser()
        try member.signUp("sam")
        try member.get("/city/paris")
        try member.post("/bookmarks/paris", [])
        app.clock.advance(1)
        try member.get("/city/tokyo")
        try member.post("/bookmarks/tokyo", [])
        #expect(try app.count("SELECT count(*) FROM bookmarks") == 2)
        #expect(try member.get("/").1.nodes("//li[@class='city-row']").map { $0["data-slug"] } == ["paris", "tokyo"])
        #expect(try member.get("/city/paris").1.nodes("//form[@class='bookmark']").first?["action"] == "/bookmarks/paris/delete")
    }
}
