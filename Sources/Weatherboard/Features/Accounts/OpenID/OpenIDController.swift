import Crypto
import Foundation
import HTTPServer
import Logging

/// Sign-in through an OpenID Connect provider (Authorization Code with PKCE, OpenID Connect Core
/// §3.1): `GET /login/oidc/{name}` starts an attempt and sends the browser to the provider;
/// `GET /login/oidc/{name}/callback` takes the attempt (single use, bound to this browser by a
/// cookie), exchanges the code, checks the ID token (`IDToken`), and signs the person in, links
/// the provider to the signed-in member who asked (`?connect=1`), or asks a newcomer for a
/// username (`/login/oidc/{name}/finish`). The identity is the issuer's `sub`; an e-mail address
/// never joins accounts. Nothing of the provider's tokens is logged or kept.
struct OpenIDController {
    static let keeping = [Keeping("oidc_attempts", "expires_at"), Keeping("oidc_pending", "expires_at")]

    let pages: Pages
    let store: AccountStore
    let identity: Identity
    let accounts: AccountsController
    let providers: OpenIDProviders
    let limits: SiteLimits
    let clientAddress: ClientAddress
    let publicURL: String?
    let logger: Logger
    let clock: @Sendable () -> Date
    /// Posts a form to a URL and gives the answer's status and bytes (`Curl` in the site).
    let post: @Sendable (String, [(String, String)]) throws -> (status: Int, body: [UInt8])

    static let attemptCookie = "oidc", pendingCookie = "oidc_signup"
    static let attemptLasts: TimeInterval = 600, pendingLasts: TimeInterval = 1800

    func addRoutes(to router: Router<AppContext>) {
        router.get("/login/oidc/{name}", start)
        router.get("/login/oidc/{name}/callback", callback)
        // Apple's `response_mode=form_post`: the same answer, POSTed from appleid.apple.com
        // (`Identity` lets this one route's cross-site POST through; its state is its authority).
        router.post("/login/oidc/{name}/callback", callback)
        router.get("/login/oidc/{name}/finish", showFinish)
        router.post("/login/oidc/{name}/finish", finish)
        router.post("/settings/oidc/{name}/delete", disconnect)
    }

    private func provider(_ request: Request) throws -> OpenIDProviders.Provider {
        guard let provider = providers.provider(named: request.parameters["name"] ?? "") else { throw HTTPError(.notFound) }
        return provider
    }

    /// `--public-url` + the callback's path; without it (development), this request's own host.
    private func redirectURI(_ provider: OpenIDProviders.Provider, _ request: Request) -> String {
        let base = publicURL ?? "http://" + (request.headers["Host"] ?? "localhost")
        return base + "/login/oidc/\(provider.name)/callback"
    }

    private func refused(_ context: AppContext, _ key: String, next: String = "/", status: HTTPStatus = .unprocessableContent) -> Response {
        accounts.signInPage(context, username: "", next: next, error: pages.string(key, context.language), status: status)
    }

    // MARK: - Starting

    func start(_ request: Request, _ context: AppContext) throws -> Response {
        let provider = try provider(request)
        let query = try request.queryItems()
        let next = safeReturnPath(query["next"])
        guard let endpoints = providers.endpoints(provider.name) else { return refused(context, "error_oidc_unavailable", next: next, status: .serviceUnavailable) }
        let connecting = query["connect"] == "1" ? context.user : nil
        let now = clock()
        // Each start stores an attempt for ten minutes: a page asks once, a script may not ask forever.
        try store.count([(RateLimit(limit: 30, window: 60), "oidc:start:ip:\(clientAddress.of(request))")], now: now)
        let (state, nonce, verifier, cookie) = (Tokens.random(), Tokens.random(), Tokens.random(), Tokens.random())
        try store.database.write(.subjects) { db in  // one attempt, by its own row; expired ones go with it
            try db.execute("DELETE FROM oidc_attempts WHERE expires_at <= ?", now.timeIntervalSince1970)
            try db.execute("""
                INSERT INTO oidc_attempts (state_hash, binding, provider, nonce, verifier, next, user_id, expires_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """, Tokens.digest(state), Tokens.digest(cookie), provider.name, nonce, verifier, connecting == nil ? next : "/settings",
                           connecting?.id, now.timeIntervalSince1970 + Self.attemptLasts)
        }
        let challenge = Tokens.base64URL(Array(SHA256.hash(data: Array(verifier.utf8))))
        var parameters = [("response_type", "code"), ("client_id", provider.clientID), ("redirect_uri", redirectURI(provider, request)),
                          ("scope", provider.apple == nil ? "openid profile email" : "openid name email"), ("state", state), ("nonce", nonce),
                          ("code_challenge", challenge), ("code_challenge_method", "S256")]
        // Apple sends the name only by form_post.
        if provider.apple != nil { parameters.append(("response_mode", "form_post")) }
        let separator = endpoints.authorization.contains("?") ? "&" : "?"
        var response = Response.redirect(to: endpoints.authorization + separator + parameters.map { "\($0)=\(percentEncode($1))" }.joined(separator: "&"),
                                         status: .found)
        // Over HTTPS the cookie goes along with Apple's cross-site POST back (SameSite=None, Secure);
        // otherwise (development on loopback) Lax, which a GET back carries.
        response.setCookie(SetCookie(name: Self.attemptCookie, value: cookie, maxAge: Int(Self.attemptLasts), secure: identity.secureCookies,
                                     sameSite: identity.secureCookies ? SetCookie.SameSite.none : .lax))
        response.headers.set("Cache-Control", "no-store")
        return response
    }

    // MARK: - Coming back

    private struct Attempt {
        let nonce: String
        let verifier: String
        let next: String
        let userID: Int64?
    }

    func callback(_ request: Request, _ context: AppContext) throws -> Response {
        let provider = try provider(request)
        let query = request.method == "POST" ? context.form : try request.queryItems()
        let now = clock()
        // The attempt is taken whatever comes next: a state works once, from the browser that started it.
        let attempt: Attempt? = try query["state"].flatMap { state -> Attempt? in
            guard let cookie = request.cookie(Self.attemptCookie), Tokens.isWellFormed(cookie) else { return nil }
            return try store.database.write(.subjects) { db in
                try db.one("""
                    DELETE FROM oidc_attempts WHERE state_hash = ? AND binding = ? AND provider = ? AND expires_at > ?
                    RETURNING nonce, verifier, next, user_id
                    """, [Tokens.digest(state), Tokens.digest(cookie), provider.name, now.timeIntervalSince1970]) {
                    Attempt(nonce: $0.string(0), verifier: $0.string(1), next: $0.string(2), userID: $0.optionalInt64(3))
                }
            }
        }
        guard let attempt else {
            logger.warning("oidc \(provider.name): a callback with no attempt of this browser's (expired, used, or never started here)")
            return refused(context, "error_oidc_expired", status: .badRequest)
        }
        if query["error"] != nil { return refused(context, "error_oidc_cancelled", next: attempt.next, status: .ok) }
        let token: IDToken
        do {
            token = try verified(provider, code: query["code"] ?? "", attempt: attempt, request, now: now)
        } catch {
            logger.warning("oidc \(provider.name): a sign-in refused: \(error)")
            return refused(context, "error_oidc_refused", next: attempt.next)
        }
        if let userID = attempt.userID {
            return try connect(provider, token, to: userID, context)
        }
        let known = try store.database.readStatement { db in
            try db.one("SELECT user_id FROM oidc_identities WHERE issuer = ? AND subject = ?", [provider.issuer, token.subject]) { $0.int64(0) }
        }
        if let userID = known { return try signIn(userID: userID, next: attempt.next, request, context) }
        return try pending(provider, token, name: token.name ?? Self.appleName(query["user"]), next: attempt.next, now: now)
    }

    /// Apple sends the person's name once, on the first sign-in, as form data beside the code:
    /// `{"name": {"firstName": …, "lastName": …}, "email": …}`.
    static func appleName(_ user: String?) -> String? {
        guard let user, user.utf8.count <= 4096, let json = try? JSONSerialization.jsonObject(with: Data(user.utf8)) as? [String: Any],
              let name = json["name"] as? [String: Any] else { return nil }
        let parts = [name["firstName"], name["lastName"]].compactMap { $0 as? String }.filter { !$0.isEmpty }
        return parts.isEmpty ? nil : String(parts.joined(separator: " ").prefix(200))
    }

    /// The code exchanged at the token endpoint (with the attempt's verifier), and the ID token checked.
    private func verified(_ provider: OpenIDProviders.Provider, code: String, attempt: Attempt, _ request: Request, now: Date) throws -> IDToken {
        guard !code.isEmpty, code.utf8.count <= 2048, let endpoints = providers.endpoints(provider.name) else {
            throw IDToken.Failure("no code, or the provider is not offered now")
        }
        let answer = try post(endpoints.token, [("grant_type", "authorization_code"), ("code", code),
                                                ("redirect_uri", redirectURI(provider, request)), ("client_id", provider.clientID),
                                                ("client_secret", try provider.secret(now: now)), ("code_verifier", attempt.verifier)])
        guard answer.status == 200, let json = try? JSONSerialization.jsonObject(with: Data(answer.body)) as? [String: Any],
              let idToken = json["id_token"] as? String else { throw IDToken.Failure("the token endpoint answered \(answer.status) without an ID token") }
        let header = try IDToken.header(of: idToken)
        let key = try providers.key(provider, id: header.keyID)
        return try IDToken(idToken, key: key, issuer: provider.issuer, clientID: provider.clientID, nonce: attempt.nonce, now: now)
    }

    private func signIn(userID: Int64, next: String, _ request: Request, _ context: AppContext) throws -> Response {
        let now = clock()
        // Counted like a password's sign-in from this address.
        try AccountsController.countSignIn(from: clientAddress.of(request), limits: limits, store: store, now: now)
        let (token, device) = try store.signIn(userID: userID, replacing: context.sessionTokenHash, device: KnownDevices.token(in: request),
                                               language: context.language, sessions: identity.sessions, now: now)
        let username = try store.database.readStatement { try User.find(id: userID, $0) }?.username ?? ""
        var response = try accounts.signedIn(userID: userID, username: username, token: token, next: next, request, context)
        response.setCookie(KnownDevices.cookie(device, secure: identity.secureCookies))
        response.setCookie(.expired(Self.attemptCookie))
        return response
    }

    private func connect(_ provider: OpenIDProviders.Provider, _ token: IDToken, to userID: Int64, _ context: AppContext) throws -> Response {
        // The member who started it, still signed in here.
        guard context.user?.id == userID else { return refused(context, "error_oidc_expired", status: .badRequest) }
        let linked = try store.database.write(.subject(.member(userID))) { db -> Bool in
            if let owner = try db.one("SELECT user_id FROM oidc_identities WHERE issuer = ? AND subject = ?", [provider.issuer, token.subject], { $0.int64(0) }) {
                return owner == userID
            }
            try db.execute("INSERT INTO oidc_identities (issuer, subject, user_id, provider, created_at) VALUES (?, ?, ?, ?, ?)",
                           provider.issuer, token.subject, userID, provider.name, clock().timeIntervalSince1970)
            return true
        }
        guard linked else { return try accounts.settingsPage(context, user: context.requireUser(), connectionError: pages.string("error_oidc_taken", context.language), status: .conflict) }
        context.nextFlash = Flash(.oidcConnected)
        var response = Response.redirect(to: "/settings#connections")
        response.setCookie(.expired(Self.attemptCookie))
        return response
    }

    // MARK: - A newcomer's username

    private struct Pending {
        let issuer: String
        let subject: String
        let name: String
        let email: String?
        let next: String
    }

    private func pending(_ provider: OpenIDProviders.Provider, _ token: IDToken, name: String?, next: String, now: Date) throws -> Response {
        let cookie = Tokens.random()
        try store.database.write(.subjects) { db in  // a first sign-in waiting, by its own row
            try db.execute("DELETE FROM oidc_pending WHERE expires_at <= ?", now.timeIntervalSince1970)
            try db.execute("""
                INSERT INTO oidc_pending (token_hash, issuer, subject, provider, name, email, next, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """, Tokens.digest(cookie), provider.issuer, token.subject, provider.name, name ?? "", token.verifiedEmail,
                           next, now.timeIntervalSince1970 + Self.pendingLasts)
        }
        var response = Response.redirect(to: "/login/oidc/\(provider.name)/finish")
        response.setCookie(SetCookie(name: Self.pendingCookie, value: cookie, maxAge: Int(Self.pendingLasts), secure: identity.secureCookies))
        response.setCookie(.expired(Self.attemptCookie))
        return response
    }

    private func pendingSignUp(_ provider: OpenIDProviders.Provider, _ request: Request) throws -> Pending? {
        guard let cookie = request.cookie(Self.pendingCookie), Tokens.isWellFormed(cookie) else { return nil }
        return try store.database.readStatement { db in
            try db.one("SELECT issuer, subject, name, email, next FROM oidc_pending WHERE token_hash = ? AND provider = ? AND expires_at > ?",
                       [Tokens.digest(cookie), provider.name, clock().timeIntervalSince1970]) {
                Pending(issuer: $0.string(0), subject: $0.string(1), name: $0.string(2), email: $0.optionalString(3), next: $0.string(4))
            }
        }
    }

    /// A username from the provider's name ("Alice Kim" → "alicekim"), else none.
    static func suggestedUsername(_ name: String) -> String {
        String(name.lowercased().unicodeScalars.filter { ("a"..."z").contains($0) || ("0"..."9").contains($0) }.prefix(20).map(Character.init))
    }

    func showFinish(_ request: Request, _ context: AppContext) throws -> Response {
        let provider = try provider(request)
        guard let pending = try pendingSignUp(provider, request) else { return refused(context, "error_oidc_expired", status: .badRequest) }
        return finishPage(provider, context, values: ["username": Self.suggestedUsername(pending.name), "display_name": pending.name,
                                                      "email": pending.email ?? "", "next": pending.next], errors: [:])
    }

    private func finishPage(_ provider: OpenIDProviders.Provider, _ context: AppContext, values: [String: String], errors: [String: String],
                            status: HTTPStatus = .ok) -> Response {
        let language = context.language
        let view = OpenIDFinishPage(layout: pages.layout(context, title: pages.string("oidc_finish_title", language)),
                                    action: "/login/oidc/\(provider.name)/finish",
                                    intro: pages.string("oidc_finish_help", language, ["provider": Self.label(provider.name)]),
                                    username: values["username"] ?? "", displayName: values["display_name"] ?? "", next: values["next"] ?? "/",
                                    email: values["email"] ?? "", mailEnabled: accounts.mail != nil,
                                    usernameError: errors["username"], displayNameError: errors["display_name"], emailError: errors["email"])
        return pages.html(context, status: status) { Templates.oidc_finish(view, &$0, $1) }
    }

    func finish(_ request: Request, _ context: AppContext) throws -> Response {
        let provider = try provider(request)
        guard let pending = try pendingSignUp(provider, request) else { return refused(context, "error_oidc_expired", status: .badRequest) }
        let form = try accounts.readSignUp(request, context)
        if form.wait != nil || !form.errors.isEmpty {
            return finishPage(provider, context, values: form.values, errors: form.errors, status: form.wait == nil ? .unprocessableContent : .tooManyRequests)
        }
        let now = clock()
        var response = try accounts.create(form, request, context) { sessions in
            try store.signUp(NewUser(username: form.username, displayName: form.displayName, passwordHash: "", role: "user", createdAt: now,
                                     timeZone: form.timeZone),
                             email: form.email, language: context.language, counting: form.made, sessions: sessions, now: now) { id, db in
                try db.execute("INSERT INTO oidc_identities (issuer, subject, user_id, provider, created_at) VALUES (?, ?, ?, ?, ?)",
                               pending.issuer, pending.subject, id, provider.name, now.timeIntervalSince1970)
                try db.execute("DELETE FROM oidc_pending WHERE issuer = ? AND subject = ?", pending.issuer, pending.subject)
            }
        }
        response.setCookie(.expired(Self.pendingCookie))
        return response
    }

    // MARK: - Settings

    /// `POST /settings/oidc/{name}/delete`: unless it is the member's last way in.
    func disconnect(_ request: Request, _ context: AppContext) throws -> Response {
        let user = try context.requireUser()
        let provider = try provider(request)
        let removed = try store.database.write(.subject(.member(user.id))) { db -> Bool in  // counts the member's ways in
            guard try AccountStore.hasAnotherWayIn(user.id, besidesProvider: provider.name, db) else { return false }
            try db.execute("DELETE FROM oidc_identities WHERE user_id = ? AND provider = ?", user.id, provider.name)
            return true
        }
        guard removed else {
            return try accounts.settingsPage(context, user: user, connectionError: pages.string("error_oidc_last", context.language),
                                             status: .unprocessableContent)
        }
        context.nextFlash = Flash(.oidcDisconnected)
        return .redirect(to: "/settings#connections")
    }

    /// A provider's button words: Apple, Kakao and Google as their guidelines write them, else its name.
    static func label(_ name: String) -> String {
        ["apple": "Apple", "kakao": "Kakao", "google": "Google"][name] ?? name.capitalized
    }
}

/// `/login/oidc/{name}/finish`: a first sign-in's username and display name.
struct OpenIDFinishPage {
    var layout: LayoutView
    var action: String
    var intro: String
    var username: String
    var displayName: String
    var next: String
    var email: String
    var mailEnabled: Bool
    var usernameError: String?
    var displayNameError: String?
    var emailError: String?
}

/// A provider's button on the sign-in and sign-up pages, and its line in Settings.
struct OpenIDButton {
    var name: String
    var label: String
    var href: String
    var connected = false
}
