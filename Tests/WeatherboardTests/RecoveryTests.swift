import Foundation
import Testing
import HTTPTestSupport
@testable import Weatherboard

/// Issue 40 #2: recovery codes, a way back into an account whose password is forgotten.
@Suite(.serialized, .onEveryEngine) struct RecoveryTests {
    /// Ten codes made after the password, shown once, stored only as digests.
    static func makeCodes(_ browser: Browser, password: String = "correct horse battery") throws -> [String] {
        try browser.get("/settings/recovery")
        let (response, page) = try browser.post("/settings/recovery", [("password", password)])
        #expect(response.status == 200)
        return page?.nodes("//code[@data-recovery-code]").map { $0.text } ?? []
    }

    @Test func codesAreShownOnceAndStoredOnlyAsDigests() throws {
        let app = try AppHarness()
        let member = app.browser()
        try member.signUp("keeper")
        let (_, settings) = try member.get("/settings")
        #expect(settings.count("//a[@href='/settings/recovery']") == 1)
        let (_, before) = try member.get("/settings/recovery")
        #expect(before.text("//p[@data-recovery-left]") == "You have no recovery codes yet.")

        try member.get("/settings/recovery")
        let (wrong, wrongPage) = try member.post("/settings/recovery", [("password", "not my password")])
        #expect(wrong.status == 422)
        #expect(wrongPage?.count("//code[@data-recovery-code]") == 0)
        #expect(try app.count("SELECT count(*) FROM recovery_codes") == 0)

        let codes = try Self.makeCodes(member)
        #expect(codes.count == 10)
        #expect(Set(codes).count == 10)
        #expect(codes.allSatisfy { $0.range(of: "^[0-9a-z]{4}(-[0-9a-z]{4}){3}$", options: .regularExpression) != nil }, "\(codes)")
        #expect(try app.count("SELECT count(*) FROM recovery_codes") == 10)
        let stored = try app.application.database.read { try $0.all("SELECT code_hash FROM recovery_codes", []) { $0.string(0) } }
        for code in codes {
            let bare = code.replacingOccurrences(of: "-", with: "")
            #expect(!stored.contains { $0.contains(bare) || $0.contains(code) }, "only a digest is stored")
        }
        let (again, page) = try member.get("/settings/recovery")
        #expect(again.headers["Cache-Control"] == "no-store")
        #expect(page.count("//code[@data-recovery-code]") == 0, "shown only when made")
        #expect(page.text("//p[@data-recovery-left]")?.hasPrefix("You have 10 unused codes.") == true)
    }

    /// A code signs in once (typed loosely: capitals, spaces, O for 0), sets the new password and
    /// signs every other device out; the same code never works again.
    @Test func aCodeGetsBackInOnceAndEndsEveryOtherSession() throws {
        let app = try AppHarness()
        let member = app.browser()
        try member.signUp("forgetful")
        let codes = try Self.makeCodes(member)
        let other = app.browser()
        let (_, signIn) = try other.get("/login")
        #expect(signIn.count("//a[@href='/login/recover']") == 1)
        let (_, form) = try other.get("/login/recover")
        for field in ["username", "code", "new_password"] { #expect(form.count("//form[@action='/login/recover']//input[@name='\(field)']") == 1) }

        let typed = codes[3].uppercased().replacingOccurrences(of: "-", with: " ").replacingOccurrences(of: "0", with: "O")
        let (used, _) = try other.post("/login/recover", [("username", "Forgetful"), ("code", typed), ("new_password", "a brand new secret")])
        #expect(used.status == 303)
        #expect(used.headers["Location"] == "/settings/recovery")
        let (_, landing) = try other.get("/settings/recovery")
        #expect(landing.text("//div[@class='flash']")?.hasPrefix("You are back in") == true)
        #expect(landing.text("//p[@data-recovery-left]")?.hasPrefix("You have 9 unused codes.") == true)
        #expect(try member.get("/settings").0.headers["Location"]?.hasPrefix("/login") == true, "the other device is signed out")

        let third = app.browser()
        try third.get("/login")
        #expect(try third.post("/login", [("username", "forgetful"), ("password", "correct horse battery")]).0.status == 422)
        #expect(try third.post("/login", [("username", "forgetful"), ("password", "a brand new secret")]).0.status == 303)

        let replay = app.browser()
        try replay.get("/login/recover")
        let (refused, page) = try replay.post("/login/recover", [("username", "forgetful"), ("code", codes[3]), ("new_password", "another new secret")])
        #expect(refused.status == 422)
        #expect(page?.text("//p[@id='code-error']") == "That username and recovery code do not match, or the code was already used.")
        #expect(page?.nodes("//input[@name='username']").first?["value"] == "forgetful")
    }

    @Test func newCodesVoidTheOldAndAShortPasswordKeepsTheCode() throws {
        let app = try AppHarness()
        let member = app.browser()
        try member.signUp("renewer")
        let old = try Self.makeCodes(member)
        let new = try Self.makeCodes(member)
        #expect(Set(old).isDisjoint(with: new))
        #expect(try app.count("SELECT count(*) FROM recovery_codes") == 10)
        let stranger = app.browser()
        try stranger.get("/login/recover")
        #expect(try stranger.post("/login/recover", [("username", "renewer"), ("code", old[0]), ("new_password", "a brand new secret")]).0.status == 422)

        let (short, page) = try stranger.post("/login/recover", [("username", "renewer"), ("code", new[0]), ("new_password", "short")])
        #expect(short.status == 422)
        #expect(page?.text("//span[@id='new-password-error']") == "A password has at least 10 characters.")
        #expect(page?.nodes("//input[@name='code']").first?["value"] == new[0], "what was typed is kept")
        #expect(try app.count("SELECT count(*) FROM recovery_codes") == 10, "the code is not used up by a refused form")
        #expect(try stranger.post("/login/recover", [("username", "renewer"), ("code", new[0]), ("new_password", "a brand new secret")]).0.status == 303)
    }

    /// Guessing codes draws on the sign-in limits: an unknown name and a wrong code answer alike,
    /// and the seventh guess in a minute is 429.
    @Test func guessesAreLimitedLikeSignInAndAnswerAlike() throws {
        let app = try AppHarness()
        let member = app.browser()
        try member.signUp("target")
        _ = try Self.makeCodes(member)
        let guesser = app.browser()
        try guesser.get("/login/recover")
        let (unknown, unknownPage) = try guesser.post("/login/recover", [("username", "nobody"), ("code", "0000-0000-0000-0000"), ("new_password", "a brand new secret")])
        let (wrong, wrongPage) = try guesser.post("/login/recover", [("username", "target"), ("code", "0000-0000-0000-0000"), ("new_password", "a brand new secret")])
        #expect(unknown.status == wrong.status)
        #expect(unknownPage?.text("//p[@id='code-error']") == wrongPage?.text("//p[@id='code-error']"))
        for _ in 0..<4 { _ = try guesser.post("/login/recover", [("username", "target"), ("code", "0000-0000-0000-0001"), ("new_password", "a brand new secret")]) }
        let (limited, _) = try guesser.post("/login/recover", [("username", "target"), ("code", "0000-0000-0000-0002"), ("new_password", "a brand new secret")])
        #expect(limited.status == 429)
        #expect(limited.headers["Retry-After"] != nil)
    }

    /// The other way back: the code signs in (every other device out) and leads to adding a
    /// passkey, the password left as it was.
    @Test func aCodeCanLeadToAPasskeyInstead() throws {
        let app = try AppHarness()
        let member = app.browser()
        try member.signUp("keyless")
        let codes = try Self.makeCodes(member)
        let phone = app.browser()
        let (_, form) = try phone.get("/login/recover")
        #expect(form.count("//form[@action='/login/recover']//button[@name='then' and @value='passkey']") == 1)
        let (used, _) = try phone.post("/login/recover", [("username", "keyless"), ("code", codes[0]), ("new_password", ""), ("then", "passkey")])
        #expect(used.status == 303)
        #expect(used.headers["Location"] == "/settings/passkeys")
        let (_, page) = try phone.get("/settings/passkeys")
        #expect(page.text("//div[@class='flash']")?.hasPrefix("You are back in") == true)
        #expect(page.count("//button[@data-passkey-add]") == 1)
        #expect(try member.get("/settings").0.headers["Location"]?.hasPrefix("/login") == true, "other devices are signed out")
        #expect(try app.count("SELECT count(*) FROM recovery_codes") == 9)
        let again = app.browser()
        try again.get("/login")
        #expect(try again.post("/login", [("username", "keyless"), ("password", "correct horse battery")]).0.status == 303, "the password stays")
    }

    @Test func codesAreReadAsTheyWereMade() {
        let code = RecoveryCodes.make()
        #expect(RecoveryCodes.normalised(code.uppercased()) == RecoveryCodes.normalised(code))
        #expect(RecoveryCodes.normalised("0011-2233-4455-6677") == "0011223344556677")
        #expect(RecoveryCodes.normalised("OOIl-2233-4455-6677") == "0011223344556677")
        #expect(RecoveryCodes.normalised("0011-2233-4455-667") == nil)
        #expect(RecoveryCodes.normalised("0011-2233-4455-667u") == nil)
        #expect(RecoveryCodes.normalised(String(repeating: "0", count: 10_000)) == nil)
    }

    /// Issue 65 #2 and #3: an account with only a passkey reads of its device, not of a password
    /// it does not have; Enter on the recovery form takes the passkey way for it; the sign-in
    /// page has one way for a lost device.
    @Test func aPasskeyOnlyAccountIsSpokenToAboutItsDeviceAndRecoversToAPasskey() throws {
        let app = try AppHarness()
        let member = app.browser()
        try member.signUp("keyonly")
        try app.execute("UPDATE users SET password_hash = '' WHERE username = 'keyonly'")
        let (_, settings) = try member.get("/settings")
        #expect(settings.text("//form[@action='/settings/delete']/p") == "Your posts stay, signed “deleted user”. This cannot be undone.")
        let (_, welcome) = try member.get("/settings/recovery?welcome=1&next=%2Fcity%2Fseoul")
        #expect(welcome.count("//section[@data-way-back]//a[@href='/settings/email' or @href='/settings/passkeys']") == 2)
        #expect(welcome.nodes("//section[@data-way-back]//a").last?["href"] == "/city/seoul#board")
        #expect(welcome.text("//section[@class='settings']/p[1]")?.hasPrefix("If you lose the device your passkey is on") == true)
        #expect(welcome.count("//input[@name='password']") == 0)
        let (made, codesPage) = try member.post("/settings/recovery", [])
        #expect(made.status == 200)
        let codes = codesPage?.nodes("//code[@data-recovery-code]").map(\.text) ?? []
        #expect(codes.count == 10)
        let download = try #require(codesPage?.nodes("//a[@data-recovery-download]").first?["href"])
        #expect(download.hasPrefix("data:text/plain;charset=utf-8,") && codes.allSatisfy { download.contains($0) })
        #expect(codesPage?.count("//form[@action='/settings/recovery']") == 0, "no button right under the codes replaces them")
        // A member with a password is not asked again.
        let other = app.browser()
        try other.signUp("withpassword")
        #expect(try other.get("/settings/recovery?welcome=1").1.count("//section[@data-way-back]") == 0)

        let guest = app.browser()
        let (_, login) = try guest.get("/login")
        #expect(login.count("//a[@data-lost-device][@href='/login/recover']") == 1)
        try guest.get("/login/recover")
        let (recovered, _) = try guest.post("/login/recover", [("username", "keyonly"), ("code", codes[0]), ("new_password", "")])
        #expect(recovered.status == 303)
        #expect(recovered.headers["Location"] == "/settings/passkeys")
        #expect(try app.count("SELECT count(*) FROM users WHERE username = 'keyonly' AND password_hash = ''") == 1)
    }
}
