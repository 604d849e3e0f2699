import Foundation
import HTTPTestSupport
import Testing
@testable import Weatherboard

/// Issue 65 #1: the digest and quiet hours ran in GMT for everyone (new accounts stored UTC, the
/// page said "GMT", and nothing let a member choose). A member's zone now comes from their
/// browser at sign-up, or from their next page while none was ever set, is shown as
/// "Asia/Seoul (GMT+9)", and can be chosen from the list.
@Suite(.serialized, .onEveryEngine) struct TimeZoneTests {
    /// The member's stored zone and how it was set.
    func zone(_ app: AppHarness, _ username: String) throws -> (name: String, source: Int) {
        try #require(try app.application.database.readStatement { db in
            try db.one("SELECT time_zone, time_zone_source FROM users WHERE username = ?", [username]) { ($0.string(0), $0.int(1)) }
        })
    }

    @Test func theBrowsersZoneAtSignUpIsShownWithItsOffset() throws {
        let app = try AppHarness()
        let member = app.browser()
        let (_, form) = try member.get("/signup")
        #expect(form.count("//form[@action='/signup']//input[@type='hidden' and @name='time_zone' and @data-detect-time-zone]") == 1)
        let (created, _) = try member.post("/signup", [("username", "commuter"), ("display_name", "Commuter"),
                                                       ("password", "correct horse battery"), ("time_zone", "Asia/Seoul")])
        #expect(created.status == 303)
        #expect(try zone(app, "commuter") == ("Asia/Seoul", 1))
        let (_, page) = try member.get("/settings/notifications")
        #expect(page.text("//span[@data-time-zone]") == "Asia/Seoul (GMT+9)")
        #expect(page.nodes("//select[@name='time_zone']/option[@selected]").map { $0["value"] } == ["Asia/Seoul"])
        #expect(page.count("//select[@name='time_zone']/option[@value='America/Los_Angeles']") == 1)
        #expect(page.count("//*[@data-time-zone-from-browser]") == 1)
        #expect(page.count("//*[@data-time-zone-unset]") == 0)
        #expect(page.count("//*[@data-time-zone-unset-member]") == 0, "nothing to ask")
        member.acceptLanguage = "ko"
        let (_, korean) = try member.get("/settings/notifications")
        #expect(korean.text("//label[@for='time_zone']") == "내 시간대")
        #expect(MemberTimeZone.label("Asia/Kolkata", at: AppHarness.fixedNow) == "Asia/Kolkata (GMT+5:30)")
        #expect(MemberTimeZone.label("America/Los_Angeles", at: AppHarness.fixedNow) == "America/Los_Angeles (GMT−8)")
        // A name the system does not list is no zone (the default stays).
        let other = app.browser()
        try other.get("/signup")
        try other.post("/signup", [("username", "martian"), ("display_name", "Martian"), ("password", "correct horse battery"),
                                   ("time_zone", "Mars/Olympus")])
        #expect(try zone(app, "martian") == ("UTC", 0))
    }

    /// An account with no zone (from before, or a browser without scripts) is asked on every
    /// page until its browser's zone is taken; a zone chosen in the list is never overwritten.
    @Test func anAccountWithoutAZoneTakesItsBrowsersOnceAndAChoiceStays() throws {
        let app = try AppHarness()
        let member = app.browser()
        try member.signUp("old")
        #expect(try zone(app, "old") == ("UTC", 0))
        let (_, city) = try member.get("/city/seoul")
        #expect(city.count("//*[@data-time-zone-unset-member]") == 1)
        let (_, settings) = try member.get("/settings/notifications")
        #expect(settings.count("//p[@data-time-zone-unset]") == 1)
        #expect(settings.count("//select[@name='time_zone' and @data-detect-time-zone]") == 1)
        #expect(settings.text("//span[@data-time-zone]") == "UTC (GMT+0)")

        #expect(try member.post("/settings/time-zone", [("time_zone", "Mars/Olympus")]).0.status == 422)
        #expect(try member.post("/settings/time-zone", [("time_zone", "Asia/Seoul")]).0.status == 204)
        #expect(try zone(app, "old") == ("Asia/Seoul", 1))
        #expect(try member.get("/city/seoul").1.count("//*[@data-time-zone-unset-member]") == 0)
        // Another browser of the same member later, elsewhere: taken once, not again.
        #expect(try member.post("/settings/time-zone", [("time_zone", "America/Los_Angeles")]).0.status == 204)
        #expect(try zone(app, "old") == ("Asia/Seoul", 1))
        try member.get("/settings/notifications")
        #expect(try member.post("/settings/notifications", [("time_zone", "Europe/London")]).0.status == 303)
        #expect(try zone(app, "old") == ("Europe/London", 2))
        #expect(try app.browser().post("/settings/time-zone", [("time_zone", "Asia/Seoul")]).0.status == 303, "a guest is sent to sign in")
    }

    /// The digest's 07:00 is the member's: one whose zone was taken from the browser gets it at
    /// 07:00 in Seoul (22:00 UTC), not at 07:00 GMT (16:00 in Seoul).
    @Test func theDigestComesAtSevenInTheMembersZone() throws {
        guard let catcher = try MailCatcher.start() else { return }
        let app = try DigestTests.site(catcher)
        let reader = try MailTests.memberWithAddress(app, catcher, "reader", "reader@example.org")
        #expect(try reader.post("/settings/time-zone", [("time_zone", "Asia/Seoul")]).0.status == 204)
        try reader.postOnBoard("seoul", "Frost on the cars this morning")
        let postID = Int64(try app.count("SELECT max(id) FROM posts"))
        let (_, settings) = try reader.get("/settings/notifications")
        let shownZone = try #require(settings.nodes("//select[@name='time_zone']/option[@selected]").first?["value"])
        #expect(shownZone == "Asia/Seoul")
        let site = NotificationChoices.Topic.allCases.map { ("\($0.rawValue)_site", "on") }
        #expect(try reader.post("/settings/notifications", site + [("digest_email", "on"), ("digest_every", "daily"), ("time_zone", shownZone)]).0.status == 303)
        try DigestTests.news(app, about: postID)
        let before = catcher.messages().count
        DigestTests.sevenAM(app, after: 1)
        #expect(LocalCalendar(TimeZone.gmt).minuteString(app.clock.read()).hasSuffix("22:00"))
        let digest = try #require(try catcher.waitForMessages(before + 1).last)
        #expect(digest.to == "<reader@example.org>")
    }
}
