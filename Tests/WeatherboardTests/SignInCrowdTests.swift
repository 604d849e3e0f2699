import Foundation
import HTTPServer
import HTTPTestSupport
import Testing
@testable import Weatherboard

/// Issue 39 #2: guesses spread over many addresses and accounts, each under every per-address
/// limit, made a real member's sign-in fail. A browser that signed in before now goes ahead of
/// them and past the brakes; when sign-ins fail across the site, strangers' checks are rationed.
@Suite(.serialized, .onEveryEngine) struct SignInCrowdTests {
    func signIn(_ browser: Browser, _ username: String, _ password: String = "correct horse battery") throws -> (WireResponse, MarkupDocument?) {
        try browser.get("/login")
        return try browser.post("/login", [("username", username), ("password", password)])
    }

    @Test func aKnownBrowserPassesTheBrakesAStrangerWaitsWithTheFormKept() throws {
        let app = try AppHarness { configuration in
            configuration.trustedProxies = ["127.0.0.1"]
            configuration.limits.failedSignInsForBrake = 5
            configuration.limits.signInsPerSecondUnderBrake = 1
        }
        for name in ["owner", "bystander", "passerby"] {
            let browser = app.browser()
            browser.forwardedFor = "192.0.2.\(name.count)"
            try browser.signUp(name)
        }
        let owner = app.browser()
        #expect(try signIn(owner, "owner").0.status == 303)
        let firstDevice = try #require(owner.cookies[KnownDevices.cookieName])
        #expect(try app.count("SELECT count(*) FROM known_devices") == 1)

        // Twelve addresses guess at the owner's account, each within its own limits: the
        // account's brake and the site's are both on.
        for guesser in 1...12 {
            let browser = app.browser()
            browser.forwardedFor = "198.51.100.\(guesser)"
            _ = try signIn(browser, "owner", "wrong guess \(guesser)")
        }

        // The owner's browser signs in at once, its token renewed.
        #expect(try signIn(owner, "owner").0.status == 303)
        #expect(owner.cookies[KnownDevices.cookieName] != firstDevice)

        // Strangers share the rationed checks: one a second, the next told when to come back.
        let first = app.browser(), second = app.browser()
        first.forwardedFor = "203.0.113.1"
        second.forwardedFor = "203.0.113.2"
        #expect(try signIn(first, "bystander").0.status == 303)
        let (refused, page) = try signIn(second, "passerby")
        #expect(refused.status == 429)
        #expect(refused.headers["Retry-After"] == "1")
        #expect(page?.nodes("//input[@name='username']").first?["value"] == "passerby")
        #expect(page?.nodes("//*[contains(@class, 'error')]").first?.text.contains("1 s") == true)
        app.clock.advance(1)
        #expect(try signIn(second, "passerby").0.status == 303)
    }

    @Test func wrongPasswordsFromAKnownBrowserEndItsStanding() throws {
        let app = try AppHarness { $0.trustedProxies = ["127.0.0.1"] }
        let owner = app.browser()
        try owner.signUp("owner")
        #expect(try signIn(owner, "owner").0.status == 303)
        // Someone with the owner's cookie but not the password.
        let thief = app.browser()
        thief.forwardedFor = "203.0.113.9"
        thief.cookies[KnownDevices.cookieName] = owner.cookies[KnownDevices.cookieName]
        for _ in 1...KnownDevices.failuresAllowed { #expect(try signIn(thief, "owner", "a guess").0.status == 422) }
        #expect(try app.count("SELECT count(*) FROM known_devices") == 1)
        #expect(try signIn(thief, "owner", "one guess more").0.status == 422)
        #expect(try app.count("SELECT count(*) FROM known_devices") == 0, "the browser is a stranger again")
    }

    @Test func aResetPasswordForgetsTheAccountsBrowsers() throws {
        let app = try AppHarness()
        let owner = app.browser()
        try owner.signUp("owner")
        #expect(try signIn(owner, "owner").0.status == 303)
        #expect(try app.count("SELECT count(*) FROM known_devices") == 1)
        let admin = app.browser()
        try admin.signUp("chief")
        try app.promoteToAdmin("chief")
        try admin.get("/admin/users/owner")
        #expect(try admin.post("/admin/users/owner/ban", [("duration", "1d"), ("reason", "Spam")]).0.status == 303)
        #expect(try app.count("SELECT count(*) FROM known_devices") == 0)
    }

    /// Real hashing: a crowd from many addresses keeps every hashing place taken; the owner's
    /// browser goes ahead of it each time.
    @Test func aCrowdOfGuessesNeverCrowdsOutAKnownBrowser() throws {
        let app = try AppHarness { configuration in
            // Slow enough for the checks to overlap, quick enough that the one running ends within
            // the queue's wait on a machine busy with the rest of the suite (at 2^14 it did not, twice).
            configuration.passwordCost = 1 << 12
            configuration.trustedProxies = ["127.0.0.1"]
            configuration.limits.signInsPerMinute = 1_000
            configuration.limits.failedSignInsForBrake = 1_000_000 // this test is about the queue, not the site's brake
        }
        let owner = app.browser()
        try owner.signUp("owner")
        #expect(try signIn(owner, "owner").0.status == 303)
        // Forty accounts to guess at (each under its brake's ten free attempts an hour).
        for n in 1...40 {
            try app.execute("""
                INSERT INTO users (username, username_key, display_name, password_hash, created_at)
                SELECT 'member\(n)', 'member\(n)', 'Member \(n)', password_hash, created_at FROM users WHERE username = 'owner'
                """)
        }
        let port = app.port, stop = Locked(false), statuses = Locked<[Int]>([])
        let crowd = DispatchGroup()
        for guesser in 0..<16 {
            crowd.enter()
            Thread.detachNewThread {
                defer { crowd.leave() }
                var round = 0
                while !stop.value && round < 200 {
                    let body = Array("username=member\((guesser + round) % 40 + 1)&password=wrong-guess-\(round)".utf8)
                    let status = (try? TestClient.request(port: port, "POST", "/login", headers: [
                        ("Content-Type", "application/x-www-form-urlencoded"), ("Sec-Fetch-Site", "same-origin"),
                        ("X-Forwarded-For", "198.51.100.\(guesser + 1)")], body: body).status) ?? 0
                    statuses.update { $0.append(status) }
                    round += 1
                }
            }
        }
        try waitUntil("the hashing places are full", timeout: 10) { statuses.value.contains(503) }
        var ownerStatuses: [Int] = []
        for _ in 1...5 { ownerStatuses.append(try signIn(owner, "owner").0.status) }
        stop.update { $0 = true }
        crowd.wait()
        #expect(ownerStatuses == [303, 303, 303, 303, 303])
        #expect(statuses.value.contains(422), "guesses were checked meanwhile")
    }
}
