import Crypto
import Foundation
import HTTPServer
import HTTPTestSupport
import Testing
@testable import Weatherboard
#if canImport(Glibc)
import Glibc
#endif

/// A real OpenID Connect provider on loopback: Authlib's authorization server (PyPI), in
/// `Fixtures/openid_provider.py`, started by the test like the SMTP server. It signs "alice" in
/// without a form; `faults` makes it a hostile or broken provider for the next answers.
final class OpenIDProvider {
    let port: Int
    let issuer: String
    private var process: ChildProcess?
    /// Brings the site's clock to the real time the provider stamps its tokens with.
    var sync: (() throws -> Void)?

    static let unavailableReason: String? = {
        guard let check = try? ChildProcess(shell: "exec python3 -c 'import authlib, flask'"), check.wait() == 0 else {
            return "python3 with authlib and flask is missing (pip install authlib flask)"
        }
        return nil
    }()

    /// A provider, or nil (after saying why) when Authlib is missing and not required; CI sets
    /// WEATHERBOARD_REQUIRE_OIDC=1 so that a missing one fails instead.
    static func start(algorithm: String = "RS256") throws -> OpenIDProvider? {
        if let reason = unavailableReason {
            if ProcessInfo.processInfo.environment["WEATHERBOARD_REQUIRE_OIDC"] == "1" {
                Issue.record("an OpenID provider is required here: \(reason)")
            } else {
                print("OpenID tests not run: \(reason)")
            }
            return nil
        }
        // A free port can be taken by another test's provider before this one binds it: the
        // document names its process, and another port is tried when it is not this one.
        for attempt in 1...3 {
            do { return try OpenIDProvider(port: freeLoopbackPort(), algorithm: algorithm) } catch where attempt < 3 { continue }
        }
        return nil
    }

    private init(port: Int, algorithm: String) throws {
        self.port = port
        issuer = "http://127.0.0.1:\(port)"
        let script = AppConfiguration.repositoryFolder("Tests/WeatherboardTests/Fixtures/openid_provider.py")
        let instance = UUID().uuidString
        process = try ChildProcess(shell: "AUTHLIB_INSECURE_TRANSPORT=1 exec python3 '\(script)' \(port) \(algorithm) \(instance) 2>/dev/null")
        do {
            try waitUntil("the OpenID provider listens", timeout: 20) {
                guard let answer = try? TestClient.request(port: port, "GET", "/.well-known/openid-configuration") else { return false }
                return answer.status == 200 && answer.text.contains(instance)
            }
        } catch {
            process?.signal(SIGKILL)
            process?.wait()
            process = nil
            throw error
        }
    }

    deinit {
        process?.signal(SIGKILL)
        process?.wait()
    }

    /// The faults of the next answers (`openid_provider.py` lists them); `[:]` for none.
    func faults(_ faults: [String: String]) throws {
        let body = try JSONSerialization.data(withJSONObject: faults)
        _ = try TestClient.request(port: port, "POST", "/_test/faults", headers: [("Content-Type", "application/json")], body: Array(body))
    }

    /// What a person's browser does at the provider: the authorize address answered with the
    /// redirect back to the site (or nil when it did not redirect).
    func authorize(_ location: String) throws -> String? {
        guard location.hasPrefix(issuer) else { return nil }
        let answer = try TestClient.request(port: port, "GET", String(location.dropFirst(issuer.count)))
        return answer.status == 302 ? answer.headers["Location"] : nil
    }
}

/// Issue 66: signing in with an OpenID Connect provider, against a real one, on both engines.
@Suite(.serialized, .onEveryEngine) struct OpenIDTests {
    static func site(_ provider: OpenIDProvider, _ more: (inout AppConfiguration) -> Void = { _ in }) throws -> AppHarness {
        let app = try AppHarness { configuration in
            configuration.oidcIssuers = ["test": provider.issuer]
            configuration.oidcClientIDs = ["test": "weatherboard"]
            configuration.oidcSecrets = ["test": "provider-secret"]
            more(&configuration)
        }
        // The provider stamps its tokens with the real time: the site's clock is set to it before
        // each sign-in (a loaded machine may take minutes between them).
        let clock = app.clock
        provider.sync = { clock.advance(max(0, Date().timeIntervalSince(clock.read()))) }
        try provider.sync?()
        try waitUntil("the provider is offered", timeout: 15) { app.application.openID.endpoints("test") != nil }
        return app
    }

    /// Starts at the site's button, goes through the provider, and comes back: the answer to
    /// the callback.
    @discardableResult
    static func signIn(_ browser: Browser, _ provider: OpenIDProvider, start: String = "/login/oidc/test") throws -> (WireResponse, MarkupDocument) {
        let back = try sentBack(browser, provider, start: start)
        return try browser.get(try #require(back.map { $0.percentEncodedPath + "?" + ($0.percentEncodedQuery ?? "") }))
    }

    /// Starts at the site and goes through the provider: the address it sends the browser back to.
    static func sentBack(_ browser: Browser, _ provider: OpenIDProvider, start: String = "/login/oidc/test") throws -> URLComponents? {
        try provider.sync?()
        let (started, _) = try browser.get(start)
        #expect(started.status == 302)
        let location = try #require(started.headers["Location"])
        return URLComponents(string: try #require(try provider.authorize(location)))
    }

    /// A P-256 key whose coordinate begins with a zero byte, written without it (as Authlib writes
    /// about one key in a hundred): the site reads it as the same key instead of refusing sign-ins.
    @Test func aKeyWithAShortCoordinateIsTheSameKey() throws {
        var key = P256.Signing.PrivateKey()
        while key.publicKey.x963Representation[1] != 0 { key = P256.Signing.PrivateKey() }
        let point = Array(key.publicKey.x963Representation)
        let x = Array(point[1...32].drop { $0 == 0 }), y = Array(point[33...64])
        let jwk = ["kty": "EC", "crv": "P-256", "kid": "short", "x": Tokens.base64URL(x), "y": Tokens.base64URL(y)]
        let read = try #require(IDToken.Key(jwk))
        #expect(read.es256?.x963Representation == key.publicKey.x963Representation)
    }

    @Test func aNewcomerSignsUpWithTheProviderAndComesBackByIt() throws {
        guard let provider = try OpenIDProvider.start() else { return }
        let app = try Self.site(provider)
        let browser = app.browser()
        let (_, login) = try browser.get("/login")
        #expect(login.nodes("//a[@data-oidc-provider='test']").first?["href"] == "/login/oidc/test")
        #expect(try browser.get("/signup").1.count("//a[@data-oidc-provider='test']") == 1)
        let (answer, _) = try Self.signIn(browser, provider, start: "/login/oidc/test?next=%2Fcity%2Fseoul")
        #expect(answer.status == 303 && answer.headers["Location"] == "/login/oidc/test/finish")
        let (_, finish) = try browser.get("/login/oidc/test/finish")
        #expect(finish.nodes("//input[@name='username']").first?["value"] == "alicekim")
        #expect(finish.nodes("//input[@name='display_name']").first?["value"] == "Alice Kim")
        let (made, _) = try browser.post("/login/oidc/test/finish", [("username", "alicekim"), ("display_name", "Alice Kim"), ("next", "/city/seoul")])
        #expect(made.status == 303 && made.headers["Location"] == "/city/seoul#board")
        #expect(try app.count("SELECT count(*) FROM users WHERE username = 'alicekim' AND password_hash = ''") == 1)
        #expect(try app.count("SELECT count(*) FROM oidc_identities WHERE subject = 'alice-sub'") == 1)
        #expect(try app.count("SELECT count(*) FROM oidc_pending") == 0)

        // Signed out and back by the same identity: straight in, no second account.
        try browser.post("/logout", [])
        let (again, _) = try Self.signIn(browser, provider)
        #expect(again.status == 303 && again.headers["Location"] == "/")
        #expect(try browser.get("/").1.count("//a[@class='me']") == 1)
        #expect(try app.count("SELECT count(*) FROM users") == 1)
        // The provider is the only way in: it cannot be disconnected.
        let (_, settings) = try browser.get("/settings")
        #expect(settings.count("//*[@data-oidc-connection='test']") == 1)
        #expect(try browser.post("/settings/oidc/test/delete", []).0.status == 422)
        // Nothing of the provider's tokens in the log.
        #expect(!app.log.lines.contains { $0.contains("eyJ") })
    }

    /// A member with a password connects the provider in Settings, then disconnects it; an
    /// address the provider vouches for never joins accounts by itself.
    @Test func aPasswordMemberConnectsAndDisconnectsIt() throws {
        guard let provider = try OpenIDProvider.start(algorithm: "ES256") else { return }
        let app = try Self.site(provider)
        let member = app.browser()
        try member.signUp("rainy")
        let (_, settings) = try member.get("/settings")
        #expect(settings.nodes("//ul[@class='oidc-connections']//a[@data-oidc-provider='test']").first?["href"] == "/login/oidc/test?connect=1")
        let (connected, _) = try Self.signIn(member, provider, start: "/login/oidc/test?connect=1")
        #expect(connected.status == 303 && connected.headers["Location"] == "/settings#connections")
        #expect(try app.count("SELECT count(*) FROM oidc_identities i JOIN users u ON u.id = i.user_id WHERE u.username = 'rainy'") == 1)
        // Another browser signing in with it is the same member.
        let other = app.browser()
        let (signedIn, _) = try Self.signIn(other, provider)
        #expect(signedIn.status == 303)
        #expect(try other.get("/settings").1.nodes("//input[@id='display_name']").first?["value"] == "Rainy")
        #expect(try member.post("/settings/oidc/test/delete", []).0.status == 303)
        #expect(try app.count("SELECT count(*) FROM oidc_identities") == 0)
    }

    /// Issue 66 #6: each hostile answer is refused with a log line naming why, nothing written,
    /// the process going on; the person reads why on the sign-in page. One provider and site for
    /// the ID tokens; a site of its own for each key set (a refused set is not fetched again
    /// within the minute).
    @Test func badIDTokensAndKeySetsAreRefused() throws {
        guard let provider = try OpenIDProvider.start() else { return }
        let app = try Self.site(provider)
        for (fault, reason) in [("alg-none", "signed with none"), ("hs256-public-key", "signed with HS256"),
                                ("wrong-aud", "meant for another client"), ("expired", "expired"),
                                ("other-nonce", "its nonce is not this attempt's"), ("wrong-key", "the signature does not verify")] {
            try provider.faults(["id_token": fault])
            let (answer, page) = try Self.signIn(app.browser(), provider)
            #expect(answer.status == 422, "\(fault)")
            #expect(page.text("//p[@id='sign-in-error']")?.hasPrefix("The provider’s answer could not be trusted") == true, "\(fault)")
            #expect(app.log.lines.contains { $0.contains("oidc test: a sign-in refused: \(reason)") }, "\(fault)")
        }
        #expect(try app.count("SELECT count(*) FROM oidc_pending") + app.count("SELECT count(*) FROM oidc_identities") == 0)
        #expect(try app.get("/healthz").status == 200)
        for (fault, reason) in [("huge", "larger than"), ("slow", "timed out"), ("not-json", "not a JSON key set")] {
            try provider.faults(["jwks": fault])
            let site = try Self.site(provider)
            let (answer, _) = try Self.signIn(site.browser(), provider)
            #expect(answer.status == 422, "\(fault)")
            #expect(try site.count("SELECT count(*) FROM oidc_pending") == 0)
            #expect(site.log.lines.contains { $0.contains("oidc test: a sign-in refused") && $0.contains(reason) }, "\(fault)")
        }
    }

    /// A state works once, from the browser that started it; a cancelled attempt says so.
    @Test func aReplayedOrForeignCallbackIsRefused() throws {
        guard let provider = try OpenIDProvider.start() else { return }
        let app = try Self.site(provider)
        let browser = app.browser()
        let back = try Self.sentBack(browser, provider)
        let callback = try #require(back.map { $0.percentEncodedPath + "?" + ($0.percentEncodedQuery ?? "") })
        // Another browser with the link: no attempt of its own.
        let (foreign, foreignPage) = try app.browser().get(callback)
        #expect(foreign.status == 400 && foreignPage.text("//p[@id='sign-in-error']")?.hasPrefix("That sign-in attempt has expired") == true)
        #expect(try browser.get(callback).0.status == 303)
        #expect(try browser.get(callback).0.status == 400, "the same state again")
        let (cancelStart, _) = try browser.get("/login/oidc/test")
        let cancelLocation = try #require(cancelStart.headers["Location"])
        let state = try #require(URLComponents(string: cancelLocation)?.queryItems?.first { $0.name == "state" }?.value)
        let (cancelled, cancelledPage) = try browser.get("/login/oidc/test/callback?error=access_denied&state=\(percentEncode(state))")
        #expect(cancelled.status == 200 && cancelledPage.text("//p[@id='sign-in-error']") == "Signing in was cancelled at the provider. Nothing changed.")
    }

    /// Issue 66 #3: Apple's `form_post` shape: the provider's answer POSTed from its own site
    /// (`Sec-Fetch-Site: cross-site`) with `state`, `code` and `user` is taken on the strength of
    /// its state and the browser's cookie; the same POST without them changes nothing, and any
    /// other route still refuses a cross-site POST.
    @Test func aFormPostCallbackFromTheProvidersSiteIsTakenByItsState() throws {
        guard let provider = try OpenIDProvider.start() else { return }
        let app = try Self.site(provider)
        let browser = app.browser()
        let items = try #require(try Self.sentBack(browser, provider)?.queryItems)
        let fields = items.map { ($0.name, $0.value ?? "") } + [("user", #"{"name":{"firstName":"Alice","lastName":"Kim"},"email":"x@privaterelay.appleid.com"}"#)]
        browser.fetchSite = "cross-site"
        let stranger = app.browser()
        stranger.fetchSite = "cross-site"
        #expect(try stranger.post("/login/oidc/test/callback", fields).0.status == 400, "another browser: no attempt of its own")
        let (answer, _) = try browser.post("/login/oidc/test/callback", fields)
        #expect(answer.status == 303 && answer.headers["Location"] == "/login/oidc/test/finish")
        #expect(try app.count("SELECT count(*) FROM oidc_pending") == 1)
        #expect(try browser.post("/city/seoul/posts", [("body", "cross-site")]).0.status == 403)
        #expect(OpenIDController.appleName(#"{"name":{"firstName":"하늘","lastName":"김"}}"#) == "하늘 김")
        #expect(OpenIDController.appleName("not json") == nil)
    }

    /// Sign in with Apple's client secret: an ES256 JWT for Apple, signed with the team's key.
    @Test func appleClientSecretIsAJWTSignedWithTheTeamsKey() throws {
        let key = P256.Signing.PrivateKey()
        let secret = try AppleClientSecret(pem: key.pemRepresentation, keyID: "KEY123", teamID: "TEAM456")
            .secret(clientID: "example.weatherboard", now: Date(timeIntervalSince1970: 1_800_000_000))
        let parts = secret.split(separator: ".").map(String.init)
        #expect(parts.count == 3)
        let header = try JSONSerialization.jsonObject(with: Data(try #require(Tokens.base64URLDecoded(parts[0])))) as? [String: Any]
        let claims = try JSONSerialization.jsonObject(with: Data(try #require(Tokens.base64URLDecoded(parts[1])))) as? [String: Any]
        #expect(header?["alg"] as? String == "ES256" && header?["kid"] as? String == "KEY123")
        #expect(claims?["iss"] as? String == "TEAM456" && claims?["sub"] as? String == "example.weatherboard")
        #expect(claims?["aud"] as? String == "https://appleid.apple.com" && claims?["exp"] as? Int == 1_800_000_300)
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: try #require(Tokens.base64URLDecoded(parts[2])))
        #expect(key.publicKey.isValidSignature(signature, for: Array((parts[0] + "." + parts[1]).utf8)))
    }

    /// Two providers side by side: a button each, in the order configured, and each identity its own.
    @Test func twoProvidersAreOfferedSideBySide() throws {
        guard let first = try OpenIDProvider.start(), let second = try OpenIDProvider.start(algorithm: "ES256") else { return }
        let app = try AppHarness { configuration in
            configuration.oidcIssuers = ["first": first.issuer, "second": second.issuer]
            configuration.oidcClientIDs = ["first": "weatherboard", "second": "weatherboard"]
            configuration.oidcSecrets = ["first": "provider-secret", "second": "provider-secret"]
        }
        let clock = app.clock
        second.sync = { clock.advance(max(0, Date().timeIntervalSince(clock.read()))) }
        try waitUntil("both are offered", timeout: 15) { app.application.openID.offered.count == 2 }
        let browser = app.browser()
        #expect(try browser.get("/login").1.nodes("//a[@data-oidc-provider]").map { $0["data-oidc-provider"] ?? "" } == ["first", "second"])
        let (answer, _) = try Self.signIn(browser, second, start: "/login/oidc/second")
        #expect(answer.status == 303 && answer.headers["Location"] == "/login/oidc/second/finish")
        #expect(try browser.post("/login/oidc/second/finish", [("username", "alice"), ("display_name", "Alice")]).0.status == 303)
        #expect(try app.count("SELECT count(*) FROM oidc_identities WHERE provider = 'second' AND issuer = ?", [second.issuer]) == 1)
    }

    /// A discovery document naming another issuer is not used: the provider is not offered,
    /// and the site runs.
    @Test func aDocumentNamingAnotherIssuerLeavesTheProviderOut() throws {
        guard let provider = try OpenIDProvider.start() else { return }
        try provider.faults(["issuer": "http://127.0.0.1:1"])
        let app = try AppHarness { configuration in
            configuration.oidcIssuers = ["test": provider.issuer]
            configuration.oidcClientIDs = ["test": "weatherboard"]
            configuration.oidcSecrets = ["test": "provider-secret"]
        }
        try waitUntil("the refusal is logged", timeout: 15) { app.log.lines.contains { $0.contains("oidc test: its discovery document could not be used") } }
        #expect(try app.page("/login").1.count("//a[@data-oidc-provider]") == 0)
        #expect(try app.get("/login/oidc/test").status == 503)
    }
}
