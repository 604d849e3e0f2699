import Foundation
import Testing
import HTTPTestSupport
@testable import Weatherboard

/// Issue 41 #4: an installable site: a manifest on every page, a service worker, an offline page.
@Suite(.serialized) struct InstallableTests {
    @Test func everyPageNamesAManifestInItsLanguage() throws {
        let app = try AppHarness()
        let browser = app.browser()
        for (target, language) in [("/", "en"), ("/city/seoul?lang=ko", "ko")] {
            let (_, page) = try browser.get(target)
            #expect(page.nodes("//head/link[@rel='manifest']").first?["href"] == "/manifest.webmanifest?lang=\(language)", "\(target)")
        }
        let (response, _) = try browser.get("/manifest.webmanifest?lang=ko")
        #expect(response.headers["Content-Type"] == "application/manifest+json")
        let manifest = try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
        #expect(manifest["name"] as? String == "웨더보드")
        #expect(manifest["lang"] as? String == "ko")
        #expect(manifest["start_url"] as? String == "/")
        #expect(manifest["display"] as? String == "standalone")
        let icons = manifest["icons"] as? [[String: String]] ?? []
        #expect(Set(icons.map { "\($0["sizes"] ?? "") \($0["purpose"] ?? "")" }) == ["192x192 any", "512x512 any", "192x192 maskable", "512x512 maskable"])
        for icon in icons { #expect(try browser.get(icon["src"] ?? "").0.headers["Content-Type"] == "image/png", "\(icon)") }
        let (worker, _) = try browser.get("/sw.js")
        #expect(worker.headers["Content-Type"] == "text/javascript; charset=utf-8")
        let (offline, page) = try browser.get("/offline")
        #expect(offline.status == 200)
        #expect(page.count("//*[@data-offline]") == 1)
    }

    /// Chromium finds nothing that keeps the site from being installed, the worker registers,
    /// and when the site cannot be reached a navigation shows the offline page.
    @Test func chromiumCanInstallItAndShowsTheOfflinePageWhenTheSiteIsGone() throws {
        guard let site = try BrowserJourneyTests.start() else { return }
        let browser = site.browser
        try browser.go(site.base + "/")
        let scope = try browser.asyncScript("""
            const done = arguments[arguments.length - 1];
            navigator.serviceWorker.ready.then(r => done(r.scope)).catch(e => done(String(e)));
            """) as? String
        #expect(scope == site.base + "/")
        let errors = try browser.devTools("Page.getInstallabilityErrors") as? [String: Any]
        #expect((errors?["installabilityErrors"] as? [Any])?.isEmpty == true, "\(String(describing: errors))")
        let manifest = try browser.devTools("Page.getAppManifest") as? [String: Any]
        #expect((manifest?["errors"] as? [Any])?.isEmpty == true, "\(String(describing: manifest))")

        // Once the worker controls the page, the site goes away.
        try browser.go(site.base + "/city/seoul")
        try browser.wait("the worker controls the page", seconds: 10) {
            try browser.script("return navigator.serviceWorker.controller !== null") as? Bool == true
        }
        site.app.application.server.shutdown()
        try browser.wait("the site is gone", seconds: 10) { (try? site.app.get("/healthz", overSocket: true)) == nil }
        try browser.go(site.base + "/city/busan")
        try browser.wait("the offline page", seconds: 10) { try browser.findAll("[data-offline]").count == 1 }
        #expect(try browser.text("h1") == "You are offline")
    }
}
