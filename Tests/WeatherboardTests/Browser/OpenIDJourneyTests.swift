import Foundation
import Testing
import HTTPTestSupport
@testable import Weatherboard

/// Issue 66: in Chromium, against Authlib's provider on loopback: sign up with the provider
/// (choosing the name it suggests), sign out, come back by it; a password member connects it
/// in Settings and disconnects it.
@Suite(.serialized) struct OpenIDJourneyTests {
    @Test func signUpWithAProviderComeBackByItConnectAndDisconnect() throws {
        guard let provider = try OpenIDProvider.start() else { return }
        guard let site = try BrowserJourneyTests.start(configure: { configuration in
            configuration.oidcIssuers = ["test": provider.issuer]
            configuration.oidcClientIDs = ["test": "weatherboard"]
            configuration.oidcSecrets = ["test": "provider-secret"]
        }) else { return }
        defer { withExtendedLifetime(site) {} }
        let (app, browser, base) = (site.app, site.browser, site.base)
        // The provider's tokens carry the real time: the site's clock is brought to it before each sign-in.
        let sync = { app.clock.advance(max(0, Date().timeIntervalSince(app.clock.read()))) }
        try waitUntil("the provider is offered", timeout: 15) { app.application.openID.endpoints("test") != nil }

        try browser.go(base + "/login")
        sync()
        try browser.click("a[data-oidc-provider=test]")
        try browser.wait("the name to choose", seconds: 15) { try browser.findAll("form[action='/login/oidc/test/finish']").count == 1 }
        #expect(try browser.script("return document.getElementById('username').value") as? String == "alicekim")
        try browser.click("form[action='/login/oidc/test/finish'] button[type=submit]")
        try browser.wait("signed up") { try browser.findAll("a.me").count == 1 }
        #expect(try app.count("SELECT count(*) FROM oidc_identities") == 1)

        try BrowserJourneyTests.signOut(browser)
        try browser.go(base + "/login")
        sync()
        try browser.click("a[data-oidc-provider=test]")
        try browser.wait("back in by the provider", seconds: 15) { try browser.findAll("a.me").count == 1 }
        #expect(try app.count("SELECT count(*) FROM users") == 1)
        try BrowserJourneyTests.signOut(browser)

        // A member with a password connects it, then disconnects it (Alice's identity is taken:
        // the provider here has one person, so she disconnects from her own account first).
        try app.execute("DELETE FROM oidc_identities")
        try BrowserJourneyTests.signUp(browser, base, "rainy")
        try browser.go(base + "/settings")
        sync()
        try browser.click("ul.oidc-connections a[data-oidc-provider=test]")
        try browser.wait("connected", seconds: 15) { try browser.findAll("[data-oidc-connection=test]").count == 1 }
        try browser.click("form[action='/settings/oidc/test/delete'] button")
        try browser.wait("disconnected") { try browser.findAll("[data-oidc-connection=test]").isEmpty }
        #expect(try app.count("SELECT count(*) FROM oidc_identities") == 0)
        try BrowserJourneyTests.expectCleanConsole(browser)
    }
}
