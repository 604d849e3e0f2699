import Foundation
import Testing
import HTTPTestSupport
@testable import Weatherboard

/// Issue 41 #5 and #1's e-mail channel: the digest and notices by e-mail, through a real SMTP
/// server on loopback (aiosmtpd). The test's "now" is Sunday 2026-11-22, 14:45 in Seoul.
@Suite(.serialized, .onEveryEngine) struct DigestTests {
    static func site(_ catcher: MailCatcher) throws -> AppHarness {
        try MailTests.site(catcher) { $0.scheduleInterval = 0.1 }
    }

    /// Every topic on the site as by default, and the given e-mail choices, in Seoul's time.
    static func choose(_ member: Browser, _ extra: [(String, String)]) throws {
        try member.get("/settings/notifications")
        let site = NotificationChoices.Topic.allCases.map { ("\($0.rawValue)_site", "on") }
        #expect(try member.post("/settings/notifications", site + extra + [("time_zone", "Asia/Seoul")]).0.status == 303)
    }

    /// A member with a confirmed address who bookmarked Seoul, a post of theirs there, and a
    /// daily digest; nothing yet to tell them.
    static func reader(_ app: AppHarness, _ catcher: MailCatcher, every: String = "daily") throws -> (Browser, Int64) {
        let reader = try MailTests.memberWithAddress(app, catcher, "reader", "reader@example.org")
        try reader.get("/city/seoul")
        #expect(try reader.post("/bookmarks/seoul", []).0.status == 303)
        try reader.postOnBoard("seoul", "Frost on the cars this morning")
        try choose(reader, [("digest_email", "on"), ("digest_every", every)])
        return (reader, Int64(try app.count("SELECT max(id) FROM posts")))
    }

    /// A neighbour replies to the post and agrees with it (two unread notices), and a walker
    /// agrees with the reply (an agreed post in the reader's city, not theirs).
    static func news(_ app: AppHarness, about postID: Int64, round: Int = 1) throws {
        let neighbour = app.browser(), walker = app.browser()
        try neighbour.signUp("neighbour\(round)")
        try walker.signUp("walker\(round)")
        app.clock.advance(11)
        try ConversationTests.reply(neighbour, to: postID, "Mine too, scraped for ten minutes")
        let replyID = try app.count("SELECT max(id) FROM posts")
        try neighbour.get("/posts/\(postID)")
        #expect(try neighbour.post("/posts/\(postID)/react", []).0.status == 303)
        try walker.get("/posts/\(postID)")
        #expect(try walker.post("/posts/\(replyID)/react", []).0.status == 303)
    }

    /// Moves the clock to 07:00 in Seoul `days` days after the test's day.
    static func sevenAM(_ app: AppHarness, after days: Int) {
        let target = AppHarness.fixedNow.addingTimeInterval(Double(days * 86_400 - (7 * 3600 + 45 * 60)))
        app.clock.advance(target.timeIntervalSince(app.clock.read()))
    }

    @Test func theDailyDigestSaysWhatIsNewAndStopsWithOneClick() throws {
        guard let catcher = try MailCatcher.start() else { return }
        let app = try Self.site(catcher)
        let (_, postID) = try Self.reader(app, catcher)
        try Self.news(app, about: postID)
        let before = catcher.messages().count
        Self.sevenAM(app, after: 1)
        let digest = try #require(try catcher.waitForMessages(before + 1).last)
        #expect(digest.to == "<reader@example.org>")
        #expect(digest.subject == "Your Weatherboard digest")
        #expect(digest.text.contains("Unread notifications: 2"))
        #expect(digest.text.contains("Neighbour1 replied to your post in Seoul"))
        #expect(digest.text.contains("1 person agreed with your post in Seoul"))
        #expect(digest.text.contains("Seoul, 1 agreed: “Mine too, scraped for ten minutes”\nhttps://weather.example/posts/\(postID)#post-"))
        #expect(digest.text.contains("Your cities today") && digest.text.contains("Seoul: "))
        #expect(digest.html.contains("<a href=\"https://weather.example/city/seoul\">"))
        // RFC 8058: an HTTPS link and the one-click header.
        let unsubscribe = try #require(digest.header("List-Unsubscribe"))
        #expect(unsubscribe.hasPrefix("<https://weather.example/digest/unsubscribe/") && unsubscribe.hasSuffix(">"))
        #expect(digest.header("List-Unsubscribe-Post") == "List-Unsubscribe=One-Click")
        try app.waitForRounds(of: "digest"); try app.waitForRounds(of: "mail")
        #expect(catcher.messages().count == before + 1, "one digest a day")

        // Opening the link asks and changes nothing (a scanner following links).
        let path = String(unsubscribe.dropFirst("<https://weather.example".count).dropLast())
        let provider = app.browser(sendsFetchMetadata: false)
        let (asked, page) = try provider.get(path)
        #expect(asked.status == 200 && page.count("//form[@method='post']") == 1)
        #expect(try app.count("SELECT count(*) FROM users WHERE digest = 'daily'") == 1)
        // The mail provider's POST: no session, no origin, no form token.
        let (stopped, done) = try provider.post(path, [("List-Unsubscribe", "One-Click")])
        #expect(stopped.status == 200)
        #expect(done?.count("//*[@data-unsubscribed]") == 1)
        #expect(try app.count("SELECT count(*) FROM users WHERE digest <> 'off'") == 0)
        // A link that is not one is told so.
        #expect(try provider.post("/digest/unsubscribe/not-a-token-at-all-0000000000000", []).0.status == 410)

        try Self.news(app, about: postID, round: 2)
        Self.sevenAM(app, after: 2)
        try app.waitForRounds(of: "digest"); try app.waitForRounds(of: "mail")
        #expect(catcher.messages().count == before + 1, "no digest after unsubscribing")

        // Links and rain alerts are kept 90 days, like the notices.
        let purge = { (days: Double) in
            try app.application.janitor.purge(now: AppHarness.fixedNow.addingTimeInterval(days * 86_400))
        }
        try purge(89)
        #expect(try app.count("SELECT count(*) FROM unsubscribe_links") == 1)
        try purge(92)
        #expect(try app.count("SELECT count(*) FROM unsubscribe_links") == 0)
        #expect(try provider.get(path).0.status == 410)
    }

    @Test func noDigestWithNothingToSayOrAfterAVisitThatDay() throws {
        guard let catcher = try MailCatcher.start() else { return }
        let app = try Self.site(catcher)
        let (reader, postID) = try Self.reader(app, catcher)
        let before = catcher.messages().count
        Self.sevenAM(app, after: 1)
        try app.waitForRounds(of: "digest"); try app.waitForRounds(of: "mail")
        #expect(catcher.messages().count == before, "nothing new: no digest")
        try Self.news(app, about: postID)
        app.clock.advance(22 * 3600) // 05:00 on the second day: a visit
        try reader.get("/city/seoul")
        Self.sevenAM(app, after: 2)
        try app.waitForRounds(of: "digest"); try app.waitForRounds(of: "mail")
        #expect(catcher.messages().count == before, "visited today: no digest")
        Self.sevenAM(app, after: 3)
        #expect(try catcher.waitForMessages(before + 1).count == before + 1, "the next day, with news and no visit, it goes")
    }

    @Test func aReplyByEMailWhenChosenWithItsLink() throws {
        guard let catcher = try MailCatcher.start() else { return }
        let app = try Self.site(catcher)
        let (reader, postID) = try Self.reader(app, catcher)
        let (_, form) = try reader.get("/settings/notifications")
        #expect(form.count("//input[@type='checkbox'][@name='replies_email'][not(@checked)]") == 1, "e-mail is off by default")
        try Self.choose(reader, [("replies_email", "on")])
        let before = catcher.messages().count
        try Self.news(app, about: postID)
        let mail = try #require(try catcher.waitForMessages(before + 1).last)
        #expect(mail.subject == "Neighbour1 replied to your post in Seoul")
        #expect(mail.text.contains("“Mine too, scraped for ten minutes”"))
        let replyID = try app.count("SELECT max(id) FROM posts")
        #expect(mail.text.contains("https://weather.example/posts/\(postID)#post-\(replyID)"))
        try app.waitForRounds(of: "mail")
        #expect(catcher.messages().count == before + 1, "agreement is not by e-mail unless chosen")
    }

    @Test func periods() {
        let seoul = TimeZone(identifier: "Asia/Seoul")!
        // Sunday 14:45: today's 07:00; weekly: last Monday's (the 16th).
        #expect(DigestEvery.daily.periodStart(at: AppHarness.fixedNow, in: seoul) == AppHarness.fixedNow.addingTimeInterval(-(7 * 3600 + 45 * 60)))
        #expect(DigestEvery.weekly.periodStart(at: AppHarness.fixedNow, in: seoul)
            == AppHarness.fixedNow.addingTimeInterval(-(6 * 86_400 + 7 * 3600 + 45 * 60)))
        // 06:59 on Monday: still the day before's; 07:00: Monday's, for both.
        let mondaySeven = AppHarness.fixedNow.addingTimeInterval(86_400 - (7 * 3600 + 45 * 60))
        #expect(DigestEvery.daily.periodStart(at: mondaySeven.addingTimeInterval(-60), in: seoul) == mondaySeven.addingTimeInterval(-86_400))
        #expect(DigestEvery.weekly.periodStart(at: mondaySeven, in: seoul) == mondaySeven)
        #expect(DigestEvery.off.periodStart(at: mondaySeven, in: seoul) == nil)
    }
}
