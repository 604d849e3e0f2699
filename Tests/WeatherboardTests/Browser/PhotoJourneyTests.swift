import Foundation
import Testing
@testable import Weatherboard

/// Issue 44 in Chromium: a person on a phone, in Korean, attaches a photo, sees it previewed,
/// describes it and posts; the board shows it with the description. On a slow connection a
/// board of photos paints first and fetches only the photos in view, at the size the phone needs.
@Suite(.serialized) struct PhotoJourneyTests {
    @Test func aPhotoFromAPhoneInKoreanIsPreviewedPostedAndShownWithItsDescription() throws {
        guard let site = try BrowserJourneyTests.start(width: 375, acceptLanguage: "ko-KR,ko",
                                                       configure: { $0.limits.secondsBetweenPosts = 0; $0.limits.photos.perDay = 20 }) else { return }
        defer { withExtendedLifetime(site) {} }
        let (app, browser, base) = (site.app, site.browser, site.base)
        try BrowserJourneyTests.signUp(browser, base, "haneul")
        try app.inGoodStanding("haneul")
        try browser.devTools("Emulation.setDeviceMetricsOverride", ["width": 375, "height": 812, "deviceScaleFactor": 2, "mobile": true])
        try browser.go(base + "/city/seoul")
        #expect(try browser.text("details.photo-attach summary") == "사진 추가")
        try browser.click("details.photo-attach summary")
        try browser.attach("#post-photo", file: PhotoTests.fixtures + "/gps-rotated.jpg")
        try browser.wait("the preview") {
            try browser.script("const p = document.querySelector('[data-photo-preview]'); return !p.hidden && p.naturalWidth > 0") as? Bool == true
        }
        try browser.type("#post-photo-alt", "한강 위 맑은 하늘")
        try browser.type("#post-body", "오늘 하늘 정말 맑네요")
        try browser.click("form.composer button[type=submit]")
        try browser.wait("the board", seconds: 20) { try browser.url.contains("#post-") || browser.findAll("#post-error").count == 1 }
        #expect(try browser.findAll("#post-error").isEmpty)
        let alt = try browser.script("return document.querySelector('article.post[data-author=haneul] img[data-photo]').alt") as? String
        #expect(alt == "한강 위 맑은 하늘")
        // What was stored is upright and what the phone showed (the page's own script may have
        // shrunk it first: either way, 800 × 1200).
        #expect(try app.count("SELECT width FROM photos") == 800 && app.count("SELECT height FROM photos") == 1200)
        try BrowserJourneyTests.expectCleanConsole(browser)
    }

    @Test func onSlow3GABoardOfPhotosPaintsFirstAndFetchesOnlyWhatIsInViewAtThePhonesSize() throws {
        guard let site = try BrowserJourneyTests.start(width: 375, acceptLanguage: "ko-KR,ko",
                                                       configure: { $0.limits.secondsBetweenPosts = 0; $0.limits.photos.perDay = 20 }) else { return }
        defer { withExtendedLifetime(site) {} }
        let (app, browser, base) = (site.app, site.browser, site.base)
        let poster = app.browser()
        try poster.signUp("photographer")
        try app.inGoodStanding("photographer")
        for index in 0..<20 {
            let file = ["photo.webp", "other.jpg", "text.png", "gps-rotated.jpg"][index % 4]
            #expect(try PhotoTests.post(poster, "하늘 사진 \(index)", photo: file).0.status == 303)
        }
        try browser.go(base + "/offline") // a page of the site, so that the throttling applies from the next load
        // A phone's screen: Chromium's window is at least 500 px wide, so the viewport is emulated.
        try browser.devTools("Emulation.setDeviceMetricsOverride", ["width": 375, "height": 812, "deviceScaleFactor": 1, "mobile": true])
        try browser.devTools("Network.enable")
        // Chrome's "Slow 3G": 400 ms latency (×5 in its own preset's terms), 50 KB/s down.
        try browser.devTools("Network.emulateNetworkConditions", ["offline": false, "latency": 2000,
                                                                  "downloadThroughput": 50_000, "uploadThroughput": 50_000])
        // Opened at the newest post (as a link to it is): its photo is in view at load, the rest below.
        let newest = try app.count("SELECT max(id) FROM posts")
        try browser.go(base + "/city/seoul#post-\(newest)")
        try browser.wait("the page loaded", seconds: 60) { try browser.script("return document.readyState") as? String == "complete" }
        // Lazy images start once the page is laid out at the anchor: wait for the one in view.
        try browser.wait("the photo in view", seconds: 60) {
            try browser.script("return performance.getEntriesByType('resource').some(e => e.name.includes('/photos/') && e.responseEnd > 0)") as? Bool == true
        }
        let facts = try browser.script("""
            const paint = performance.getEntriesByName('first-contentful-paint')[0];
            const photos = performance.getEntriesByType('resource').filter(e => e.name.includes('/photos/'));
            return { paint: paint ? paint.startTime : -1, fetched: photos.map(e => e.name), done: photos.map(e => e.responseEnd),
                     onPage: document.querySelectorAll('img[data-photo]').length };
            """) as? [String: Any] ?? [:]
        try browser.devTools("Network.emulateNetworkConditions", ["offline": false, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1])
        // Scrolled to, a photo comes at the size a 375-px screen needs.
        try browser.script("document.querySelector('img[data-photo]').scrollIntoView()")
        try browser.wait("the first photo", seconds: 20) {
            try browser.script("const i = document.querySelector('img[data-photo]'); return i.complete && i.naturalWidth > 0") as? Bool == true
        }
        let shown = try browser.script("return document.querySelector('img[data-photo]').currentSrc") as? String ?? ""
        #expect(shown.hasSuffix(".480.webp"), "\(shown)")
        let paint = facts["paint"] as? Double ?? -1
        let fetched = facts["fetched"] as? [String] ?? [], done = facts["done"] as? [Double] ?? []
        print("slow 3G: first contentful paint at \(Int(paint)) ms; photos fetched once the one in view came: \(fetched.count) of \(facts["onPage"] ?? 0), done at \(done.map { Int($0) }) ms")
        #expect(paint > 0, "the page painted")
        #expect(facts["onPage"] as? Int == 20)
        #expect(fetched.count >= 1, "the photo in view is fetched")
        #expect(fetched.count < 20, "photos below the fold wait until they are scrolled to (loading=lazy)")
        #expect(done.allSatisfy { $0 > paint }, "no photo held the first paint")
        #expect(fetched.allSatisfy { $0.hasSuffix(".480.webp") }, "a 375-px phone gets the 480-px WebP: \(fetched)")
    }
}
