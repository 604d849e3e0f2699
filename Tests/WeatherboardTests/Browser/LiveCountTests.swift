import Foundation
import Testing
import HTTPTestSupport
@testable import Weatherboard

/// Issue 41 #6: the header's count follows notices on an open page, and on a phone it stays in
/// reach wherever the page is scrolled.
@Suite(.serialized) struct LiveCountTests {
    @Test func theCountChangesInPlaceAndStaysInReachOnAPhone() throws {
        guard let site = try BrowserJourneyTests.start(width: 375) else { return }
        let browser = site.browser
        try BrowserJourneyTests.signUp(browser, site.base, "watcher")
        try BrowserJourneyTests.post(browser, site.base, city: "seoul", "Fog rolling in over the river")
        let postID = try site.app.count("SELECT max(id) FROM posts")
        try browser.go(site.base + "/city/seoul")
        #expect(try browser.script("return document.querySelector('.notifications-link').dataset.unread") as? String == "0")
        try browser.wait("the stream is open", seconds: 10) { site.app.application.live.listenerCount == 1 }

        let neighbour = site.app.browser()
        try neighbour.signUp("neighbour")
        try ConversationTests.reply(neighbour, to: Int64(postID), "Thick here as well")
        try browser.wait("the count changes in place", seconds: 10) {
            try browser.script("return document.querySelector('.notifications-link').dataset.unread") as? String == "1"
        }
        #expect(try browser.text(".notifications-link .unread-count").hasPrefix("1"))

        // At the top it sits in the header, covering nothing; scrolled to the bottom of a long
        // page, it is on screen and big enough to tap.
        #expect(try browser.script("return getComputedStyle(document.querySelector('.notifications-link')).position") as? String == "static")
        try browser.script("window.scrollTo(0, document.body.scrollHeight)")
        try browser.wait("the link floats", seconds: 5) {
            try browser.script("return getComputedStyle(document.querySelector('.notifications-link')).position") as? String == "fixed"
        }
        let box = try browser.script("""
            const r = document.querySelector('.notifications-link').getBoundingClientRect();
            return [r.top, r.left, r.bottom, r.right, r.width, r.height, window.innerHeight, window.innerWidth];
            """) as? [Double] ?? []
        #expect(box.count == 8)
        if box.count == 8 {
            #expect(box[0] >= 0 && box[2] <= box[6] && box[1] >= 0 && box[3] <= box[7], "on screen: \(box)")
            #expect(box[4] >= 44 && box[5] >= 44, "a target of at least 44 × 44: \(box)")
        }
        try BrowserJourneyTests.expectCleanConsole(browser)
    }
}
