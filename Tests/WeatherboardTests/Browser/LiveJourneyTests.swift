import Foundation
import HTTPServer
import Testing
@testable import Weatherboard

/// Journeys in Chromium about what changes while a page is open (live boards, surges, event
/// mode, a phone's actions, times read against the reader's clock): the longest of the browser
/// journeys, a suite of their own so that they run beside the others (`BrowserJourneyTests`
/// has the helpers).
@Suite(.serialized, .onEveryEngine) struct LiveJourneyTests {
    /// Issue 22: a person asks on Seoul's board; another replies from the board; the first sees
    /// the unread count, opens the notification, lands on the post's page and agrees with the reply.
    @Test func aQuestionIsAnsweredFromTheBoardAndTheAskerIsTold() throws {
        guard let site = try BrowserJourneyTests.start(configure: { $0.limits.secondsBetweenPosts = 0 }) else { return }
        defer { withExtendedLifetime(site) {} }
        let (app, browser, base) = (site.app, site.browser, site.base)
        try BrowserJourneyTests.signUp(browser, base, "asker")
        try BrowserJourneyTests.post(browser, base, city: "seoul", "퇴근길에 비 그칠까요?")
        let postID = try app.count("SELECT max(id) FROM posts")
        try BrowserJourneyTests.signOut(browser)

        try BrowserJourneyTests.signUp(browser, base, "answerer")
        try browser.go(base + "/city/seoul")
        try browser.click("#post-\(postID) .reply-menu summary")
        try browser.type("#reply-\(postID)", "7시쯤 그친대요, 우산은 챙기세요")
        try browser.click("#post-\(postID) .reply-form button[type=submit]")
        try browser.wait("the reply under the post on the board") {
            try browser.findAll("#post-\(postID) article[data-parent-id='\(postID)']").count == 1
        }
        #expect(try browser.url.contains("/city/seoul"))
        try BrowserJourneyTests.signOut(browser)

        try BrowserJourneyTests.signIn(browser, base, "asker")
        #expect(try browser.text(".notifications-link").contains("1"))
        try browser.click(".notifications-link")
        try browser.wait("the notifications") { try browser.findAll("li[data-notification='reply']").count == 1 }
        try browser.click("li[data-notification='reply'] a")
        try browser.wait("the post's page") { try browser.url.contains("/posts/\(postID)") }
        let replyID = try app.count("SELECT max(id) FROM posts WHERE parent_id = ?", [Int64(postID)])
        try browser.click("#post-\(replyID) form.react button")
        try browser.wait("the agreement counted") {
            try browser.text("#post-\(replyID) [data-reactions]") == "1"
        }
        #expect(try app.count("SELECT count(*) FROM reactions WHERE post_id = ?", [Int64(replyID)]) == 1)
        #expect(try browser.findAll("[data-unread='0']").count == 1)
        try BrowserJourneyTests.expectCleanConsole(browser)
    }

    /// Issue 43 #4: an open city page shows a surge of reports as it begins, without a reload.
    @Test func anOpenCityPageShowsASurgeAsItBegins() throws {
        guard let site = try BrowserJourneyTests.start() else { return }
        defer { withExtendedLifetime(site) {} }
        let (app, watcher, base) = (site.app, site.browser, site.base)
        try watcher.go(base + "/city/seoul")
        try watcher.wait("the page listening") { app.application.live.listenerCount == 1 }
        _ = try watcher.script("window.sameDocument = 42") // gone if the page ever reloads
        #expect(try watcher.findAll("[data-surge]").isEmpty)
        try SurgeTests.report(app, ["hail_a", "hail_b", "hail_c", "hail_d", "hail_e"], sky: "storm")
        try watcher.wait("the surge line", seconds: 20) { try watcher.findAll("[data-surge-slot] [data-surge]").count == 1 }
        #expect(try watcher.text("[data-surge]") == "Reports are surging: 5 in 30 minutes, mostly storm")
        #expect(try watcher.script("return window.sameDocument") as? Int == 42, "no reload")
        try BrowserJourneyTests.expectCleanConsole(watcher)
    }

    /// Issue 43 #2: while a severe warning is in force the board is in event mode, and new posts
    /// come onto an open board on their own (no bar to press, the reader not moved), said to
    /// screen readers.
    @Test func inEventModeNewPostsComeOnTheirOwn() throws {
        let stub = try NWSStub()
        try stub.alerts([WarningTests.alert("urn:oid:flood-live", event: "Flash Flood Warning", geometry: WarningTests.losAngeles)])
        guard let site = try BrowserJourneyTests.start(configure: {
            $0.warningsNWSURL = stub.url
            $0.warningsEvery = 3600
            $0.limits.secondsBetweenPosts = 0
        }) else { return }
        defer { withExtendedLifetime(site) {} }
        let (app, watcher, base) = (site.app, site.browser, site.base)
        WarningTests.firstPoll(app)
        try watcher.go(base + "/city/los-angeles")
        #expect(try watcher.findAll("[data-event-mode]").count == 1)
        try watcher.wait("the page listening") { app.application.live.listenerCount == 1 }
        _ = try watcher.script("window.sameDocument = 42") // gone if the page ever reloads
        let witness = app.browser()
        try witness.signUp("witness")
        #expect(try witness.postOnBoard("los-angeles", "Water over the road on Figueroa").0.status == 303)
        try watcher.wait("the post, on its own", seconds: 20) { try watcher.findAll("article[data-author='witness']").count == 1 }
        #expect(try watcher.findAll("button.live-bar").isEmpty, "nothing to press")
        #expect(try watcher.script("return document.querySelector('[data-live-announcer]').textContent") as? String
                == "1 new post added above")
        #expect(try watcher.script("return window.sameDocument") as? Int == 42, "no reload")
        try BrowserJourneyTests.expectCleanConsole(watcher)
    }

    /// Two people in two browsers: one on a phone, in Korean, writes through the forms; the other
    /// watches Seoul's board on a desktop and never reloads.
    @Test func aBoardMovesWithoutAReload() throws {
        guard let site = try BrowserJourneyTests.start(configure: { $0.limits.secondsBetweenPosts = 0 }) else { return }
        defer { withExtendedLifetime(site) {} }
        let (app, watcher, base) = (site.app, site.browser, site.base)
        let phone = try WebDriver(width: 375, height: 800, acceptLanguage: "ko-KR,ko")
        try BrowserJourneyTests.signUp(phone, base, "writer")
        try BrowserJourneyTests.post(phone, base, city: "seoul", "남산에 구름")
        let first = try app.count("SELECT max(id) FROM posts")
        try phone.go(base + "/") // a page without a stream: the one stream open next is the watcher's
        try watcher.wait("the phone's board closed") { app.application.live.listenerCount == 0 }
        try watcher.go(base + "/city/seoul")
        try watcher.wait("the page listening") { app.application.live.listenerCount == 1 }
        _ = try watcher.script("window.sameDocument = 42") // gone if the page ever reloads

        // A new post gathers in the bar, and shows when asked
        try BrowserJourneyTests.post(phone, base, city: "seoul", "마포에 눈이 오기 시작해요")
        let second = try app.count("SELECT max(id) FROM posts")
        try watcher.wait("the bar") { try watcher.findAll("button.live-bar").count == 1 }
        #expect(try watcher.text("button.live-bar") == "1 new post — show")
        #expect(try watcher.findAll("#post-\(second)").isEmpty, "not inserted until asked")
        try watcher.click("button.live-bar")
        try watcher.wait("the new post on the board") { try watcher.findAll("#post-\(second)").count == 1 }
        #expect(try watcher.text("#post-\(second) .post-body") == "마포에 눈이 오기 시작해요")
        #expect(try watcher.findAll("button.live-bar").isEmpty)

        // A reply from the phone appears under its post
        try phone.go(base + "/posts/\(first)")
        try phone.type("#reply-body", "이태원까지 왔어요")
        try phone.click("form.reply-composer button[type=submit]")
        try watcher.wait("the reply under its post") {
            try watcher.findAll("#post-\(first) article[data-parent-id='\(first)']").count == 1
        }
        #expect(app.application.sharedReplies.asked.load(ordering: .relaxed) >= 1, "fetched as everyone with no part in it sees it")
        // … and is said in a polite live region (issue 45 #7), with who and the start of the text.
        let said = try watcher.script("""
            const r = document.querySelector('[data-live-announcer]'); return r && r.getAttribute('aria-live') + ' ' + r.textContent
            """) as? String
        #expect(said?.hasPrefix("polite ") == true && said?.contains("이태원까지 왔어요") == true, "\(said ?? "none")")

        // A removed post disappears
        let chief = app.browser()
        try chief.signUp("chief")
        try app.promoteToAdmin("chief")
        try chief.get("/admin")
        #expect(try chief.post("/admin/posts/\(second)/remove", [("reason", "Off topic")]).0.status == 303)
        try watcher.wait("the removed post gone") { try watcher.findAll("#post-\(second)").isEmpty }
        #expect(try watcher.script("return window.sameDocument") as? Int == 42, "never reloaded")
        try BrowserJourneyTests.expectCleanConsole(watcher)
        try BrowserJourneyTests.expectCleanConsole(phone)
    }

    /// Issue 26 #4, #5, #7, #8 on a phone: Block and Report sit in a menu under each post, every
    /// action target there is at least 44 × 44 px, blocking keeps the reader's place and its
    /// message is in view and focused, and Undo comes back to the same place, not to the
    /// blocked person's profile.
    @Test func actionsOnAPhoneKeepThePlaceAndSayWhatHappened() throws {
        guard let site = try BrowserJourneyTests.start(width: 375) else { return }
        defer { withExtendedLifetime(site) {} }
        let (app, browser, base) = (site.app, site.browser, site.base)
        try browser.devTools("Emulation.setTouchEmulationEnabled", ["enabled": true, "maxTouchPoints": 5])
        // Ten posts by someone else below the post, and ten above: it sits mid-board.
        try app.execute("INSERT INTO users (username, username_key, display_name, password_hash, created_at) VALUES ('chatty', 'chatty', 'Chatty', 'x', 0)")
        func chatter(_ numbers: ClosedRange<Int>) throws {
            for n in numbers {
                try app.execute("""
                    INSERT INTO posts (city_id, user_id, body, created_at)
                    SELECT c.id, u.id, ?, CAST(? AS DOUBLE PRECISION) FROM cities c, users u WHERE c.slug = 'seoul' AND u.username = 'chatty'
                    """, ["Chatter number \(n) about the clouds over the river", AppHarness.fixedNow.addingTimeInterval(Double(n * 10 - 300))])
            }
        }
        try chatter(1...10)
        try BrowserJourneyTests.signUp(browser, base, "noisy")
        try BrowserJourneyTests.post(browser, base, city: "seoul", "Is it going to rain at six?")
        let noisy = try app.count("SELECT max(id) FROM posts")
        try chatter(11...20)
        app.clock.advance(31) // written behind the stores' back: kept pages age out
        try BrowserJourneyTests.signOut(browser)
        try BrowserJourneyTests.signUp(browser, base, "reader")
        try browser.go(base + "/city/seoul")
        #expect(try browser.script("return matchMedia('(pointer: coarse)').matches") as? Bool == true)
        let target = "article[data-post-id='\(noisy)']"
        try browser.script("document.querySelector(\"\(target)\").scrollIntoView({block: 'center'})")
        let before = try #require(browser.script("return window.scrollY") as? Double)
        #expect(before > 500)

        // Everything to tap under the post, the menu opened, is at least 44 × 44 px.
        try browser.click("\(target) details.post-menu summary")
        let small = try #require(browser.script("""
            return Array.from(document.querySelectorAll(arguments[0])).filter(e => e.offsetParent !== null).map(e => {
              const r = e.getBoundingClientRect(); return (r.width < 44 || r.height < 44) ? e.outerHTML.slice(0, 80) + ' ' + r.width + 'x' + r.height : null
            }).filter(x => x)
            """, ["\(target) .post-actions .link, \(target) .post-actions a, \(target) .post-actions summary, \(target) .reply-menu summary, \(target) .permalink"]) as? [Any])
        #expect(small.isEmpty, "smaller than 44 × 44: \(small)")

        try browser.click("\(target) form.block-form button")
        try browser.wait("blocked") { try browser.findAll(target).isEmpty && browser.findAll(".flash").count == 1 }
        let after = try #require(browser.script("return window.scrollY") as? Double)
        #expect(after > 500, "the reader's place: \(after), was \(before)")
        #expect(try browser.script("const r = document.querySelector('.flash').getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight") as? Bool == true,
                "the message is in view")
        #expect(try browser.script("return document.activeElement.classList.contains('flash')") as? Bool == true, "the message has the focus")
        // Issue 45 #7: it covers nothing, now or after scrolling (it was pinned to the top of the
        // screen, over the posts under it).
        let covered = """
            const f = document.querySelector('.flash').getBoundingClientRect();
            return Array.from(document.querySelectorAll('article.post')).filter(a => {
              const r = a.getBoundingClientRect(); return r.height > 0 && r.top < f.bottom && r.bottom > f.top && r.left < f.right && r.right > f.left
            }).length
            """
        #expect(try browser.script(covered) as? Int == 0)
        try browser.script("window.scrollBy(0, 300)")
        #expect(try browser.script(covered) as? Int == 0)
        try browser.script("window.scrollBy(0, -300)")

        try browser.click(".flash form button")
        try browser.wait("unblocked") { try browser.findAll(target).count == 1 }
        #expect(try browser.script("return location.pathname") as? String == "/city/seoul")
        #expect(try #require(browser.script("return window.scrollY") as? Double) > 500)
        // The language switch keeps the place too (issue 26 #11): followed from where the reader is
        // (WebDriver's own click would first scroll the header into view).
        try browser.script("document.querySelector('.lang-switch a[hreflang=ko]').click()")
        try browser.wait("the page in Korean") { try browser.script("return document.documentElement.lang") as? String == "ko" }
        #expect(try #require(browser.script("return window.scrollY") as? Double) > 500)
        try BrowserJourneyTests.expectCleanConsole(browser)
    }

    /// Issue 38: the server writes a post's time in its city's time, and until when it can be
    /// edited, the same at every minute; the page words both relative to the reader's clock (not
    /// the server's), in the page's language, and gives the server's words back when the window
    /// has closed.
    @Test func aPostsTimeAndEditWindowReadRelativeToTheReadersClock() throws {
        guard let site = try BrowserJourneyTests.start() else { return }
        defer { withExtendedLifetime(site) {} }
        let (browser, base) = (site.browser, site.base)
        try BrowserJourneyTests.signUp(browser, base, "walker")
        // One post at the harness's fixed now (22 Nov 2026 05:45 UTC, 14:45 in Seoul)...
        try BrowserJourneyTests.post(browser, base, city: "seoul", "Crisp and clear this morning")
        let older = "#board article.post:nth-of-type(2) time[data-ago]", newest = "#board article.post:first-of-type"
        func days() -> [Int] { let d = Int(Date().timeIntervalSince(AppHarness.fixedNow) / 86_400); return [d, d + 1] }
        // ...one whose edit window ends 25 s from now by the browser's clock (the server's is
        // 14 min 35 s behind it, and would have said "just now" and "15 min left").
        site.app.clock.advance(Date().timeIntervalSince(AppHarness.fixedNow) - 14 * 60 - 35)
        try BrowserJourneyTests.post(browser, base, city: "seoul", "Still clear at noon")
        #expect(try browser.script("return document.querySelector('\(older)').getAttribute('datetime')") as? String == "2026-11-22T05:45:00Z")
        try browser.wait("worded relative") {
            try days().map { "\($0) d ago" }.contains(browser.text(older))
                && ["14 min ago", "15 min ago"].contains(browser.text("\(newest) time[data-ago]"))
        }
        #expect((try browser.script("return document.querySelector('\(older)').title") as? String)?.isEmpty == false)
        let server = try browser.script("return document.querySelector('\(newest) .edit-left').dataset.until") as? String ?? ""
        #expect(server.hasPrefix(" · until "), "\(server)")
        let left = try browser.text("\(newest) .edit-left")
        #expect(left == "· 1 min left" || "· " + left == server.trimmingCharacters(in: .whitespaces), "\(left)")
        try browser.wait("the server's words back once the window closed", seconds: 60) {
            try browser.text("\(newest) .edit-left") == server.trimmingCharacters(in: .whitespaces)
        }
        try browser.click("ul.lang-switch a[hreflang=ko]")
        try browser.wait("in Korean") { try days().map { "\($0)일 전" }.contains(browser.text(older)) }
        try BrowserJourneyTests.expectCleanConsole(browser)
    }
}
