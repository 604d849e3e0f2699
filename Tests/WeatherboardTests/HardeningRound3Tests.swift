import Foundation
import HTTPTestSupport
import Testing
@testable import Weatherboard

/// Issue 20: cheap requests that cost the site dearly, and the smaller holes found with them.
@Suite(.onEveryEngine) struct HardeningRound3Tests {
    /// #2: a PUT (or any method but GET) of thousands of segments is a 404 at once; and a refused
    /// form still finds the page above its address for its language links.
    @Test func longPathsAreRefusedAndARefusedFormStillLinksToItsPage() throws {
        let app = try AppHarness()
        let deep = "/city/seoul" + String(repeating: "/a", count: 4_000)
        for method in ["PUT", "POST", "DELETE", "OPTIONS"] {
            let response = try TestClient.request(port: app.port, method, deep)
            #expect(response.status == 404, "\(method) \(String(decoding: response.body, as: UTF8.self))")
        }
        let person = app.browser()
        try person.signUp("walker")
        let (refused, page) = try person.postOnBoard("seoul", "   ")
        #expect(refused.status == 422)
        let links = page?.nodes("//ul[@class='lang-switch']//a").compactMap { $0["href"] } ?? []
        #expect(!links.isEmpty)
        #expect(links.allSatisfy { $0.hasPrefix("/city/seoul?lang=") }, "\(links)")
    }

    /// #3: a megabyte-long display name of decomposed characters is refused without normalising
    /// it, and the form gives back at most the limit, at sign-up and in settings.
    @Test func aHugeDisplayNameIsRefusedAndEchoedAtMostTheLimit() throws {
        let app = try AppHarness()
        let huge = String(repeating: "e\u{301}", count: 100_000) // 300 KB, NFC would make it half that
        let guest = app.browser()
        try guest.get("/signup")
        let (signUp, signUpPage) = try guest.post("/signup", [("username", "decomposed"), ("display_name", huge),
                                                              ("password", "correct horse battery")])
        #expect(signUp.status == 422)
        let echoed = try #require(signUpPage?.nodes("//input[@name='display_name']").first?["value"])
        #expect(echoed.utf8.count <= TextPolicy.displayName.maxBytes)
        #expect(echoed.hasPrefix("e\u{301}e\u{301}") || echoed.hasPrefix("\u{e9}"))
        #expect(signUp.body.count < 30_000)
        #expect(try app.count("SELECT count(*) FROM users WHERE username = 'decomposed'") == 0)

        let member = app.browser()
        try member.signUp("renamer")
        try member.get("/settings")
        let (rename, settingsPage) = try member.post("/settings/profile", [("display_name", huge)])
        #expect(rename.status == 422)
        let kept = try #require(settingsPage?.nodes("//input[@name='display_name']").first?["value"])
        #expect(kept.utf8.count <= TextPolicy.displayName.maxBytes)
        #expect(rename.body.count < 30_000)

        // A name of 40 Hangul syllables typed as decomposed jamo (9 bytes each) is still accepted.
        let jamo = String(repeating: "\u{1100}\u{1161}\u{11A8}", count: 40)
        try member.get("/settings")
        #expect(try member.post("/settings/profile", [("display_name", jamo)]).0.status == 303)
        #expect(try app.count("SELECT count(*) FROM users WHERE display_name = '\(String(repeating: "각", count: 40))'") == 1)
    }

    /// #3, every other text field: a report's detail and a post are cut before any Unicode work
    /// and given back at most at their limits.
    @Test func otherTextFieldsAreCutBeforeAnyUnicodeWork() {
        let huge = String(repeating: "a\u{308}", count: 200_000)
        for policy in [TextPolicy.post, .reportDetail, .moderationReason, .displayName] {
            let typed = policy.typed(huge)
            #expect(typed.wasCut)
            #expect(typed.text.utf8.count <= policy.inputBytes)
            #expect(policy.normalise(typed) == .failure(.tooLong))
            #expect(policy.echo(typed).utf8.count <= policy.maxBytes)
            // A cut never splits a character's bytes.
            #expect(TextPolicy.prefix("가나다", bytes: 4) == "가")
        }
    }
}
