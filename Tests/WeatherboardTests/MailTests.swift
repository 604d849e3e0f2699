import Foundation
import Testing
import HTTPTestSupport
@testable import Weatherboard

/// Issue 40 #3: an e-mail address, confirmed by a link, that can reset a forgotten password;
/// mail through a real SMTP server on loopback (aiosmtpd), from a queue in the database.
extension AppConfiguration {
    /// Mail configured to a relay that never answers (port 9 on loopback, where nothing
    /// listens): every page that needs mail is there, and nothing is ever sent.
    static func withUnreachableRelay(_ configuration: inout AppConfiguration) {
        configuration.smtpURL = "smtp://127.0.0.1:9"
        configuration.mailFrom = "weather@example.org"
        configuration.publicURL = "https://weather.example"
    }

    /// Every optional part on (mail to a relay that never answers, Web Push): every page exists.
    static func withEverything(_ configuration: inout AppConfiguration) {
        withUnreachableRelay(&configuration)
        configuration.pushContact = "mailto:ops@example.org"
    }
}

@Suite(.serialized, .onEveryEngine) struct MailTests {
    static let origin = "https://weather.example"

    static func site(_ catcher: MailCatcher, url: String? = nil, configure: (inout AppConfiguration) -> Void = { _ in }) throws -> AppHarness {
        try AppHarness { configuration in
            configuration.smtpURL = url ?? catcher.url
            configuration.mailFrom = "weather@example.org"
            configuration.publicURL = origin
            configuration.mailPollInterval = 0.1
            configuration.mailRetryBase = 1
            configure(&configuration)
        }
    }

    /// A member with a confirmed address (the confirmation mail read and its link followed).
    static func memberWithAddress(_ app: AppHarness, _ catcher: MailCatcher, _ username: String, _ email: String) throws -> Browser {
        let member = app.browser()
        let before = catcher.messages().count
        try member.get("/signup")
        let (created, _) = try member.post("/signup", [("username", username), ("display_name", username.capitalized),
                                                       ("password", "correct horse battery"), ("email", email)])
        #expect(created.status == 303)
        let mail = try #require(try catcher.waitForMessages(before + 1).last)
        let path = try #require(mail.path(at: origin))
        try member.get(path)
        #expect(try member.post(path, []).0.status == 303)
        return member
    }

    @Test func withoutARelayNothingOffersMail() throws {
        let app = try AppHarness()
        let guest = app.browser()
        let (_, login) = try guest.get("/login")
        #expect(login.count("//a[@href='/password/forgot']") == 0)
        #expect(login.count("//a[@href='/login/recover']") == 1)
        #expect(try guest.get("/password/forgot").0.status == 404)
        let (_, signUp) = try guest.get("/signup")
        #expect(signUp.count("//input[@name='email']") == 0)
        try guest.signUp("plain")
        let (_, settings) = try guest.get("/settings")
        #expect(settings.count("//a[@href='/settings/email']") == 0)
        #expect(try guest.get("/settings/email").0.status == 404)
    }

    @Test func anAddressGivenAtSignUpIsConfirmedByItsLinkOnce() throws {
        guard let catcher = try MailCatcher.start() else { return }
        let app = try Self.site(catcher)
        let member = app.browser()
        let (_, form) = try member.get("/signup")
        #expect(form.count("//form[@action='/signup']//input[@name='email' and @type='email']") == 1)
        try member.post("/signup", [("username", "sunny"), ("display_name", "Sunny"), ("password", "correct horse battery"),
                                    ("email", "Sunny.Day@Example.org")])
        let mail = try #require(try catcher.waitForMessages(1).first)
        #expect(mail.to == "<Sunny.Day@Example.org>")
        #expect(mail.subject == "Confirm your e-mail address for Weatherboard")
        #expect(mail.header("From") == "Weatherboard <weather@example.org>")
        #expect(mail.text.contains("@sunny"))
        let path = try #require(mail.path(at: Self.origin))
        #expect(path.hasPrefix("/email/verify/"))
        #expect(mail.html.contains("<a href=\"\(Self.origin)\(path)\">"))
        let token = String(path.dropFirst("/email/verify/".count))
        #expect(try app.count("SELECT count(*) FROM email_tokens WHERE token_hash = ?", [token]) == 0, "only a digest is kept")
        #expect(try app.count("SELECT count(*) FROM users WHERE email IS NOT NULL") == 0, "not the account's until confirmed")
        let (_, waiting) = try member.get("/settings/email")
        #expect(waiting.text("//p[@data-email-pending]")?.contains("Sunny.Day@Example.org") == true)

        // Opened on another device, signed out: a page with a button (a link scanner's GET changes nothing).
        let phone = app.browser()
        let (_, confirm) = try phone.get(path)
        #expect(confirm.text("//strong") == "Sunny.Day@Example.org")
        #expect(try app.count("SELECT count(*) FROM users WHERE email IS NOT NULL") == 0)
        #expect(try phone.post(path, []).0.status == 303)
        let (_, settings) = try member.get("/settings/email")
        #expect(settings.text("//p[@data-email-current]/strong") == "Sunny.Day@Example.org")
        #expect(settings.count("//p[@data-email-pending]") == 0)

        let (again, used) = try app.browser().get(path)
        #expect(again.status == 410)
        #expect(used.count("//p[@data-link-expired]") == 1)
        #expect(try phone.post(path, []).0.status == 410)
    }

    @Test func aBadAddressAtSignUpKeepsEverythingTyped() throws {
        guard let catcher = try MailCatcher.start() else { return }
        let app = try Self.site(catcher)
        let browser = app.browser()
        try browser.get("/signup")
        for bad in ["not an address", "a@b", "x@example.org\r\nBcc: victim@example.org", "<x@example.org>"] {
            let (refused, page) = try browser.post("/signup", [("username", "typist"), ("display_name", "Typist"),
                                                               ("password", "correct horse battery"), ("email", bad)])
            #expect(refused.status == 422, "\(bad)")
            #expect(page?.text("//span[@id='email-error']") == "That does not look like an e-mail address (name@example.org).")
            #expect(page?.nodes("//input[@id='username']").first?["value"] == "typist")
        }
        #expect(try app.count("SELECT count(*) FROM users") == 0)
        #expect(try app.count("SELECT count(*) FROM mail_queue") == 0)
    }

    /// Changing the address asks for the password, sends a link to the new one and tells the
    /// old one, which is told only part of the new address.
    @Test func changingTheAddressTellsTheOldOne() throws {
        guard let catcher = try MailCatcher.start() else { return }
        let app = try Self.site(catcher)
        let member = try Self.memberWithAddress(app, catcher, "mover", "old@example.org")
        let (_, form) = try member.get("/settings/email")
        #expect(form.count("//form[@action='/settings/email']//input[@name='email']") == 1)
        let (wrong, _) = try member.post("/settings/email", [("email", "new@example.net"), ("password", "wrong password")])
        #expect(wrong.status == 422)
        #expect(try member.post("/settings/email", [("email", "new@example.net"), ("password", "correct horse battery")]).0.status == 303)
        let mails = try catcher.waitForMessages(3)
        let notice = try #require(mails.first { $0.to == "<old@example.org>" && $0.subject.contains("changing") })
        #expect(notice.text.contains("ne•••@example.net"))
        #expect(!notice.text.contains("new@example.net"))
        #expect(mails.contains { $0.to == "<new@example.net>" && $0.subject.hasPrefix("Confirm") })
        #expect(try app.count("SELECT count(*) FROM users WHERE email = 'old@example.org'") == 1, "the old one holds until the new is confirmed")
    }

    /// Issue 62 #1: with the access log on and every level kept, no line a node writes during a
    /// confirmation, a reset and an unsubscribe holds the link's token: logs name the route
    /// (`/password/reset/{token}`). Issue 61 #10: those pages send no `Referer` to anything they load.
    @Test func noLogLineHoldsAnEmailedLinksToken() throws {
        guard let catcher = try MailCatcher.start() else { return }
        let app = try Self.site(catcher) { $0.logLevel = .trace; $0.server.accessLog = true }
        let member = try Self.memberWithAddress(app, catcher, "rainy", "rainy@example.org")
        let verified = try #require(catcher.messages().last?.path(at: Self.origin))
        let guest = app.browser()
        try guest.get("/password/forgot")
        try guest.post("/password/forgot", [("username", "rainy")])
        let reset = try #require(try catcher.waitForMessages(2).last?.path(at: Self.origin))
        let (resetPage, _) = try guest.get(reset)
        #expect(resetPage.headers["Referrer-Policy"] == "no-referrer")
        #expect(try guest.post(reset, [("new_password", "short")]).0.status == 422)
        #expect(try guest.post(reset, [("new_password", "a fresh new password")]).0.status == 303)
        #expect(try guest.get(reset).0.status == 410)
        let unsubscribe = "/digest/unsubscribe/" + String(repeating: "Zq9", count: 12)
        let (asked, _) = try guest.get(unsubscribe)
        #expect(asked.headers["Referrer-Policy"] == "no-referrer")
        try guest.post(unsubscribe, [])
        #expect(try member.get(verified).0.headers["Referrer-Policy"] == "no-referrer")
        #expect(try guest.get("/city/seoul").0.headers["Referrer-Policy"] == "same-origin")

        let lines = app.log.lines
        #expect(lines.contains { $0.contains("path=/password/reset/{token}") }, "the access log was on")
        #expect(lines.contains { $0.contains("/email/verify/{token}") })
        for path in [verified, reset, unsubscribe] {
            let token = try #require(path.split(separator: "/").last.map(String.init))
            let holding = lines.filter { $0.contains(token) }
            #expect(holding.isEmpty, "\(holding.prefix(3))")
        }
    }

    /// Forgot → a link by mail → a new password: every other session ends, the link works once,
    /// Issue 65 #2: an account with only a passkey asks for a way back in; its mail speaks of
    /// setting a password, not of resetting one it never had.
    @Test func aPasskeyOnlyAccountsMailSetsAPasswordRatherThanResettingOne() throws {
        guard let catcher = try MailCatcher.start() else { return }
        let app = try Self.site(catcher)
        _ = try Self.memberWithAddress(app, catcher, "keyonly", "keyonly@example.org")
        try app.execute("UPDATE users SET password_hash = '' WHERE username = 'keyonly'")
        let guest = app.browser()
        try guest.get("/password/forgot")
        try guest.post("/password/forgot", [("username", "keyonly")])
        let mail = try #require(try catcher.waitForMessages(2).last)
        #expect(mail.subject == "Get back into your Weatherboard account")
        #expect(mail.text.contains("which has only a passkey so far") && !mail.text.contains("reset the password"))
    }

    /// and the old password is gone.
    @Test func aForgottenPasswordIsResetThroughTheMailedLink() throws {
        guard let catcher = try MailCatcher.start() else { return }
        let app = try Self.site(catcher)
        let member = try Self.memberWithAddress(app, catcher, "rainy", "rainy@example.org")
        let guest = app.browser()
        let (_, login) = try guest.get("/login")
        #expect(login.count("//a[@href='/password/forgot']") == 1)
        let (_, forgot) = try guest.get("/password/forgot")
        #expect(forgot.count("//form[@action='/password/forgot']//input[@name='username']") == 1)
        let (asked, sentPage) = try guest.post("/password/forgot", [("username", "RAINY")])
        #expect(asked.status == 200)
        #expect(sentPage?.count("//p[@data-forgot-sent]") == 1)
        let mail = try #require(try catcher.waitForMessages(2).last)
        #expect(mail.subject == "Reset your Weatherboard password")
        let path = try #require(mail.path(at: Self.origin))
        #expect(path.hasPrefix("/password/reset/"))
        let (_, resetForm) = try guest.get(path)
        #expect(resetForm.count("//form[@action='\(path)']//input[@name='new_password']") == 1)
        let (short, shortPage) = try guest.post(path, [("new_password", "short")])
        #expect(short.status == 422)
        #expect(shortPage?.text("//span[@id='new-password-error']") == "A password has at least 10 characters.")
        let (done, _) = try guest.post(path, [("new_password", "a fresh new password")])
        #expect(done.status == 303)
        #expect(try guest.get("/settings").0.status == 200, "the browser that reset is signed in")
        #expect(try member.get("/settings").0.headers["Location"]?.hasPrefix("/login") == true, "every other session ended")
        #expect(try app.browser().post("/password/reset/x", [("new_password", "a fresh new password")]).0.status == 410)
        let (twice, _) = try app.browser().post(path, [("new_password", "another fresh password")])
        #expect(twice.status == 410)
        let third = app.browser()
        try third.get("/login")
        #expect(try third.post("/login", [("username", "rainy"), ("password", "correct horse battery")]).0.status == 422)
        #expect(try third.post("/login", [("username", "rainy"), ("password", "a fresh new password")]).0.status == 303)
    }

    /// The forgot page says the same for a name with an address, a name without, an unknown
    /// name and an unknown address: the same status and the same words.
    @Test func askingNeverSaysWhetherAnAccountExists() throws {
        guard let catcher = try MailCatcher.start() else { return }
        let app = try Self.site(catcher)
        _ = try Self.memberWithAddress(app, catcher, "known", "known@example.org")
        try app.browser().signUp("noaddress")
        var answers: [String] = []
        for typed in ["known", "known@example.org", "noaddress", "nobody_here", "nobody@example.org"] {
            let guest = app.browser()
            try guest.get("/password/forgot")
            let (response, page) = try guest.post("/password/forgot", [("username", typed)])
            #expect(response.status == 200, "\(typed)")
            answers.append(page?.text("//main") ?? "")
        }
        #expect(Set(answers).count == 1, "\(answers)")
        // Links went only to the one account with an address (the newer ask may replace the older
        // one while it waits): the confirmation, then resets to known@ and nothing else.
        try waitUntil("the queue empties", timeout: 30) { try app.count("SELECT count(*) FROM mail_queue") == 0 }
        let resets = catcher.messages().dropFirst()
        #expect(!resets.isEmpty)
        #expect(resets.allSatisfy { $0.to == "<known@example.org>" && $0.subject == "Reset your Weatherboard password" })
    }

    /// A newer ask while the older link is being sent: the sender, done with the older message,
    /// takes away nothing but it, and the newer link goes too (SQLite gave the deleted message's
    /// id to the newer one, which the sender then deleted as sent).
    @Test func aNewerAskWhileTheOlderIsBeingSentIsSentToo() throws {
        guard let catcher = try MailCatcher.start() else { return }
        let app = try Self.site(catcher)
        _ = try Self.memberWithAddress(app, catcher, "misty", "misty@example.org")
        // The confirmation's send over first: the relay has it once its text is in, but frozen
        // while the sender still says QUIT, it would be the message the sender holds.
        try waitUntil("the confirmation is done", timeout: 30) { try app.count("SELECT count(*) FROM mail_queue") == 0 }
        let guest = app.browser()
        try guest.get("/password/forgot")
        catcher.freeze()
        try guest.post("/password/forgot", [("username", "misty")])
        try waitUntil("the sender holds the first link", timeout: 20) {
            try app.count("SELECT count(*) FROM mail_queue WHERE kind = 'reset' AND claimed_until IS NOT NULL") == 1
        }
        try guest.post("/password/forgot", [("username", "misty@example.org")])
        catcher.thaw()
        let links = try catcher.waitForMessages(3).dropFirst().compactMap { $0.path(at: Self.origin) }
        #expect(links.count == 2)
        #expect(try guest.get(try #require(links.last)).0.status == 200, "the newer link works")
        try waitUntil("the queue empties", timeout: 30) { try app.count("SELECT count(*) FROM mail_queue") == 0 }
    }

    /// A newer link voids the older; signing in voids every link; an hour ends one.
    @Test func linksEndWithANewerOneASignInOrAnHour() throws {
        guard let catcher = try MailCatcher.start() else { return }
        let app = try Self.site(catcher)
        let member = try Self.memberWithAddress(app, catcher, "cloudy", "cloudy@example.org")
        let guest = app.browser()
        try guest.get("/password/forgot")
        try guest.post("/password/forgot", [("username", "cloudy")])
        let first = try #require(try catcher.waitForMessages(2).last?.path(at: Self.origin))
        try guest.post("/password/forgot", [("username", "cloudy@example.org")])
        let second = try #require(try catcher.waitForMessages(3).last?.path(at: Self.origin))
        #expect(try guest.get(first).0.status == 410, "a newer link voids the older")
        #expect(try guest.get(second).0.status == 200)

        try member.get("/login")
        #expect(try member.post("/login", [("username", "cloudy"), ("password", "correct horse battery")]).0.status == 303)
        #expect(try guest.get(second).0.status == 410, "signing in voids it")

        try guest.post("/password/forgot", [("username", "cloudy")])
        let third = try #require(try catcher.waitForMessages(4).last?.path(at: Self.origin))
        app.clock.advance(3601)
        let (expired, page) = try guest.get(third)
        #expect(expired.status == 410)
        #expect(page.count("//a[@href='/password/forgot']") == 1)
    }

    /// With the relay down the request is answered at once and nothing is lost: the message
    /// waits in the queue and goes out when the relay is back.
    @Test func aDeadRelayHoldsNoRequestAndTheMessageGoesWhenItIsBack() throws {
        guard let catcher = try MailCatcher.start() else { return }
        let app = try Self.site(catcher)
        _ = try Self.memberWithAddress(app, catcher, "stormy", "stormy@example.org")
        catcher.pause()
        let guest = app.browser()
        try guest.get("/password/forgot")
        #expect(try guest.post("/password/forgot", [("username", "stormy")]).0.status == 200)
        try waitUntil("a first attempt fails", timeout: 30) {
            try app.count("SELECT count(*) FROM mail_queue WHERE attempts >= 1 AND claimed_until IS NULL") == 1
        }
        #expect(app.log.lines.contains { $0.contains("not sent, attempt 1") && !$0.contains("stormy@") }, "logged without the address")
        try catcher.resume()
        app.clock.advance(5) // past the first retry's wait
        let mail = try #require(try catcher.waitForMessages(2).last)
        #expect(mail.subject == "Reset your Weatherboard password")
        // The row goes once the relay has accepted it: a moment after the catcher has the message.
        try waitUntil("the sent message leaves the queue", timeout: 10) { try app.count("SELECT count(*) FROM mail_queue") == 0 }
    }

    /// `?tls=required` never sends in the clear: against a relay without STARTTLS the message
    /// stays queued.
    @Test func tlsRequiredIsNeverSentInTheClear() throws {
        guard let catcher = try MailCatcher.start() else { return }
        let app = try Self.site(catcher, url: catcher.url + "?tls=required")
        let member = app.browser()
        try member.get("/signup")
        try member.post("/signup", [("username", "secret"), ("display_name", "S"), ("password", "correct horse battery"), ("email", "s@example.org")])
        try waitUntil("the attempt fails", timeout: 30) {
            try app.count("SELECT count(*) FROM mail_queue WHERE attempts >= 1 AND claimed_until IS NULL") == 1
        }
        #expect(catcher.messages().isEmpty)
    }

    /// Each message in the member's language: the one they last signed in with.
    @Test func mailIsInTheMembersLanguage() throws {
        guard let catcher = try MailCatcher.start() else { return }
        let app = try Self.site(catcher)
        let member = app.browser()
        member.acceptLanguage = "ko"
        try member.get("/signup")
        try member.post("/signup", [("username", "hanbit"), ("display_name", "한빛"), ("password", "correct horse battery"), ("email", "hanbit@example.kr")])
        let mail = try #require(try catcher.waitForMessages(1).first)
        #expect(mail.subject == "웨더보드 이메일 주소를 확인해 주세요")
        #expect(mail.text.hasPrefix("한빛님, 안녕하세요."))
    }

    @Test func addressesAndHeadersAreSafe() throws {
        #expect(MailAddress("a.b+c@mail.example.org")?.text == "a.b+c@mail.example.org")
        for bad in ["", "a", "a@", "@b.c", "a@b", "a@@b.c", "a b@c.d", "a@b.c\r\nBcc: x@y.z", "a@-b.c", "a@b..c", "\"a\"@b.c", "한@b.c",
                    String(repeating: "a", count: 65) + "@b.c", "a@" + String(repeating: "b", count: 250) + ".c"] {
            #expect(MailAddress(bad) == nil, "\(bad)")
        }
        #expect(MailAddress("jane.doe@example.org")?.masked == "ja•••@example.org")
        let message = MailMessage(from: MailAddress("w@example.org")!, fromName: "Weatherboard", to: MailAddress("t@example.org")!,
                                  subject: "비 소식\r\nBcc: evil@example.org", text: "line\r\n.\r\nend", html: "<p>x</p>")
        let rendered = String(decoding: message.rendered(date: AppHarness.fixedNow, id: "abc"), as: UTF8.self)
        #expect(!rendered.contains("Bcc:"))
        #expect(!rendered.contains("\r\n.\r\n"), "no line of the body can end the data")
        #expect(rendered.contains("Date: Sun, 22 Nov 2026 05:45:00 +0000"))
        #expect(rendered.split(separator: "\r\n", omittingEmptySubsequences: false).allSatisfy { $0.utf8.count <= 78 })
    }
}
