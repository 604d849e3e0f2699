import Foundation
import HTTPServer
import Logging
import Synchronization

/// Passkeys: added and removed at `/settings/passkeys`, used to sign in at `/login` (a button,
/// and the browser's own suggestion in the username field), or to sign up with no password.
/// The browser's part needs JavaScript (`passkeys.js`): it asks for options as JSON, runs the
/// ceremony, and posts the answer as an ordinary form, so that the outcome is an ordinary page.
struct PasskeysController {
    let pages: Pages
    let store: AccountStore
    let identity: Identity
    let accounts: AccountsController
    let party: PasskeyParty
    let limits: SiteLimits
    let clientAddress: ClientAddress
    let logger: Logger
    let clock: @Sendable () -> Date

    /// Binds a ceremony to the browser before there is a session: HttpOnly, five minutes.
    static let ceremonyCookie = "webauthn"

    func addRoutes(to router: Router<AppContext>) {
        router.get("/settings/passkeys", list)
        router.post("/settings/passkeys/options", addOptions)
        router.post("/settings/passkeys", add)
        router.post("/settings/passkeys/{id}/delete", remove)
        router.post("/settings/passkeys/{id}/name", rename)
        router.post("/login/passkey/options", signInOptions)
        router.post("/login/passkey", signIn)
        router.post("/signup/passkey/options", signUpOptions)
        router.post("/signup/passkey", signUp)
    }

    // MARK: - Settings

    func list(_ request: Request, _ context: AppContext) throws -> Response {
        try listPage(context, request, user: try context.requireUser())
    }

    private func listPage(_ context: AppContext, _ request: Request, user: User, error: String? = nil,
                          status: HTTPStatus = .ok) throws -> Response {
        let language = context.language
        let keys = try store.passkeys(userID: user.id).map { key in
            PasskeysPage.Key(id: key.id, name: key.name, added: Moment(key.createdAt, language),
                             lastUsed: key.lastUsedAt.map { Moment($0, language) })
        }
        let view = PasskeysPage(layout: pages.layout(context, title: pages.string("passkeys_title", language)), keys: keys,
                                offered: party.offered(to: request), error: error)
        return pages.html(context, status: status) { Templates.settings_passkeys(view, &$0, $1) }
    }

    func addOptions(_ request: Request, _ context: AppContext) throws -> Response {
        let user = try context.requireUser()
        guard let relying = party.resolve(), let binding = context.sessionTokenHash else { throw HTTPError(.notFound) }
        let challenge = Tokens.random()
        let name = TextPolicy.prefix(context.form["name"] ?? "", bytes: 200).trimmingCharacters(in: .whitespacesAndNewlines)
        try store.begin(WebAuthnChallenge(challenge: challenge, purpose: .register, userID: user.id, name: name),
                        binding: binding, now: clock())
        let existing = try store.passkeys(userID: user.id).map(\.credentialID)
        return .json(creationOptions(relying, challenge: challenge, handle: try store.passkeyHandle(userID: user.id),
                                    username: user.username, displayName: user.displayName, exclude: existing))
    }

    func add(_ request: Request, _ context: AppContext) throws -> Response {
        let user = try context.requireUser()
        let language = context.language
        let refused = { (key: String) in
            try listPage(context, request, user: user, error: pages.string(key, language), status: .unprocessableContent)
        }
        guard let relying = party.resolve(), let binding = context.sessionTokenHash,
              let clientData = bytes("client_data", context), let attestation = bytes("attestation", context),
              let challenge = try? WebAuthn.ClientData(clientData).challenge else { return try refused("error_passkey") }
        let now = clock()
        let outcome = try store.database.write(.subject(.member(user.id))) { db -> String? in  // a passkey added to the member's
            guard let ceremony = try AccountStore.take(challenge, .register, binding: binding, now: now, db), ceremony.userID == user.id else {
                return "error_passkey_expired"
            }
            do {
                let credential = try WebAuthn.register(clientDataJSON: clientData, attestationObject: attestation, challenge: challenge, relying)
                let name = ceremony.name.flatMap { $0.isEmpty ? nil : $0 } ?? defaultName(request, language)
                return try AccountStore.insertPasskey(credential, userID: user.id, name: name, now: now, db) ? nil : "error_passkey_known"
            } catch let failure as WebAuthn.Failure {
                logger.warning("passkey: a new passkey for user \(user.id) refused: \(failure)")
                return "error_passkey"
            }
        }
        if let key = outcome { return try refused(key) }
        context.nextFlash = Flash(.passkeyAdded)
        return .redirect(to: "/settings/passkeys")
    }

    /// `POST /settings/passkeys/{id}/name`: a name the member chose (at most 60 characters).
    func rename(_ request: Request, _ context: AppContext) throws -> Response {
        let user = try context.requireUser()
        guard let id = Int64(request.parameters["id"] ?? "") else { throw HTTPError(.notFound) }
        let name = String(TextPolicy.prefix(context.form["name"] ?? "", bytes: 200).trimmingCharacters(in: .whitespacesAndNewlines).prefix(60))
        guard !name.isEmpty else {
            return try listPage(context, request, user: user, error: pages.string("error_passkey_name", context.language), status: .unprocessableContent)
        }
        guard try store.renamePasskey(id: id, userID: user.id, to: name) else { throw HTTPError(.notFound) }
        context.nextFlash = Flash(.passkeyRenamed)
        return .redirect(to: "/settings/passkeys")
    }

    /// The browser and system it was made on, else "Passkey".
    private func defaultName(_ request: Request, _ language: Language) -> String {
        DeviceName.from(userAgent: request.headers["User-Agent"]) ?? pages.string("passkey_default_name", language)
    }

    func remove(_ request: Request, _ context: AppContext) throws -> Response {
        let user = try context.requireUser()
        guard let id = Int64(request.parameters["id"] ?? "") else { throw HTTPError(.notFound) }
        guard try store.removePasskey(id: id, userID: user.id) else {
            return try listPage(context, request, user: user, error: pages.string("error_passkey_last", context.language),
                                status: .unprocessableContent)
        }
        context.nextFlash = Flash(.passkeyRemoved)
        return .redirect(to: "/settings/passkeys")
    }

    // MARK: - Signing in

    func signInOptions(_ request: Request, _ context: AppContext) throws -> Response {
        guard let relying = party.resolve() else { throw HTTPError(.notFound) }
        // Each answer stores a challenge for five minutes: a page asks once, a script may not ask forever.
        try store.count([(RateLimit(limit: 30, window: 60), "passkey:options:ip:\(clientAddress.of(request))")], now: clock())
        let (cookie, binding) = ceremonyBinding()
        let challenge = Tokens.random()
        try store.begin(WebAuthnChallenge(challenge: challenge, purpose: .authenticate), binding: binding, now: clock())
        var response = Response.json(["challenge": challenge, "rpId": relying.id, "timeout": 300_000, "userVerification": "preferred",
                             "allowCredentials": [Any]()])
        response.setCookie(cookie)
        return response
    }

    func signIn(_ request: Request, _ context: AppContext) throws -> Response {
        let next = safeReturnPath(context.form["next"])
        let address = clientAddress.of(request)
        let now = clock()
        // Counted like a password's sign-in from this address (there is no name to count against).
        try AccountsController.countSignIn(from: address, limits: limits, store: store, now: now)
        let refused = { accounts.signInPage(context, username: "", next: next, error: pages.string("error_passkey_sign_in", context.language),
                                            status: .unprocessableContent) }
        guard let relying = party.resolve(), let binding = request.cookie(Self.ceremonyCookie).map(Tokens.digest),
              let clientData = bytes("client_data", context), let authenticatorData = bytes("authenticator_data", context),
              let signature = bytes("signature", context), let credentialID = context.form["credential_id"],
              let challenge = try? WebAuthn.ClientData(clientData).challenge else { return refused() }
        let userHandle = context.form["user_handle"] ?? ""
        // Locks: a sign-in: the challenge is taken once by its row.
        let signedIn = try store.database.write(.subjects) { db -> (userID: Int64, token: String)? in
            guard try AccountStore.take(challenge, .authenticate, binding: binding, now: now, db) != nil,
                  let key = try db.one("SELECT \(Passkey.columns) FROM passkeys WHERE credential_id = ?", [credentialID], Passkey.init(row:)),
                  let handle = try db.one("SELECT passkey_handle FROM users WHERE id = ?", [key.userID], { $0.optionalString(0) }) ?? nil,
                  userHandle.isEmpty || userHandle == handle,
                  let publicKey = Tokens.base64URLDecoded(key.publicKey) else { return nil }
            let count: UInt32
            do {
                count = try WebAuthn.authenticate(clientDataJSON: clientData, authenticatorData: authenticatorData, signature: signature,
                                                  challenge: challenge, publicKey: publicKey, storedCount: key.signCount, relying)
            } catch let failure as WebAuthn.Failure {
                logger.warning("passkey: sign-in with passkey \(key.id) of user \(key.userID) refused: \(failure)")
                return nil
            }
            try db.execute("UPDATE passkeys SET sign_count = ?, last_used_at = ? WHERE id = ?", Int64(count), now, key.id)
            if let old = context.sessionTokenHash { try db.execute("DELETE FROM sessions WHERE token_hash = ?", old) }
            try EmailTokens.dropResets(userID: key.userID, db)
            try db.execute("UPDATE users SET language = ? WHERE id = ?", context.language.rawValue, key.userID)
            return (key.userID, try identity.sessions.create(userID: key.userID, now: now, db))
        }
        guard let signedIn else { return refused() }
        let username = try store.database.readStatement { try User.find(id: signedIn.userID, $0) }?.username ?? ""
        var response = try accounts.signedIn(userID: signedIn.userID, username: username, token: signedIn.token, next: next, request, context)
        response.setCookie(.expired(Self.ceremonyCookie))
        return response
    }

    // MARK: - Signing up with a passkey and no password

    func signUpOptions(_ request: Request, _ context: AppContext) throws -> Response {
        guard let relying = party.resolve() else { throw HTTPError(.notFound) }
        let form = try accounts.readSignUp(request, context)
        if form.wait != nil || !form.errors.isEmpty {
            var response = Response.json(["errors": form.errors.merging(form.wait.map { ["limit": pages.string("error_sign_up_limit", context.language,
                ["wait": pages.span(Double($0), context.language)])] } ?? [:]) { a, _ in a }],
                status: form.wait == nil ? .unprocessableContent : .tooManyRequests)
            if let wait = form.wait { response.headers.add("Retry-After", String(wait)) }
            return response
        }
        let (cookie, binding) = ceremonyBinding()
        let challenge = Tokens.random(), handle = Tokens.base64URL(randomBytes(32))
        try store.begin(WebAuthnChallenge(challenge: challenge, purpose: .signup, username: form.username, displayName: form.displayName,
                                          email: form.email?.text, userHandle: handle), binding: binding, now: clock())
        var response = Response.json(creationOptions(relying, challenge: challenge, handle: handle, username: form.username,
                                            displayName: form.displayName, exclude: []))
        response.setCookie(cookie)
        return response
    }

    func signUp(_ request: Request, _ context: AppContext) throws -> Response {
        let next = safeReturnPath(context.form["next"])
        let language = context.language
        let now = clock()
        let expired = AccountsController.SignUpForm(username: "", displayName: "", email: nil, next: next, values: ["next": next],
                                                    errors: ["username": pages.string("error_passkey_expired", language)], wait: nil,
                                                    made: (RateLimit(limit: limits.signUpsPerHour, window: 3600), ""))
        guard let relying = party.resolve(), let binding = request.cookie(Self.ceremonyCookie).map(Tokens.digest),
              let clientData = bytes("client_data", context), let attestation = bytes("attestation", context),
              let challenge = try? WebAuthn.ClientData(clientData).challenge,
              let ceremony = try store.database.write(.cluster, { try AccountStore.take(challenge, .signup, binding: binding, now: now, $0) }),
              let username = ceremony.username, let displayName = ceremony.displayName, let handle = ceremony.userHandle else {
            return accounts.signUpRefused(context, expired)
        }
        var form = expired
        form.username = username
        form.displayName = displayName
        form.email = ceremony.email.flatMap(MailAddress.init)
        form.values = ["username": username, "display_name": displayName, "next": next, "email": ceremony.email ?? ""]
        form.made.1 = "signup:ip:\(clientAddress.of(request))"
        let credential: WebAuthn.NewCredential
        do {
            credential = try WebAuthn.register(clientDataJSON: clientData, attestationObject: attestation, challenge: challenge, relying)
        } catch let failure as WebAuthn.Failure {
            logger.warning("passkey: a sign-up's passkey refused: \(failure)")
            form.errors = ["username": pages.string("error_passkey", language)]
            return accounts.signUpRefused(context, form)
        }
        form.errors = [:]
        return try accounts.create(form, request, context, passkeyOnly: true) { sessions in
            try store.signUp(NewUser(username: username, displayName: displayName, passwordHash: "", role: "user", createdAt: now),
                             email: form.email, language: language, counting: form.made, sessions: sessions, now: now) { id, db in
                try db.execute("UPDATE users SET passkey_handle = ? WHERE id = ?", handle, id)
                guard try AccountStore.insertPasskey(credential, userID: id, name: defaultName(request, language), now: now, db) else {
                    throw HTTPError(.unprocessableContent, message: "this passkey belongs to another account")
                }
            }
        }
    }

    // MARK: - Pieces

    /// A fresh ceremony cookie and the digest a challenge is bound to.
    private func ceremonyBinding() -> (SetCookie, String) {
        let token = Tokens.random()
        return (SetCookie(name: Self.ceremonyCookie, value: token, maxAge: Int(WebAuthnChallenge.validFor), secure: identity.secureCookies),
                Tokens.digest(token))
    }

    /// A form field in base64url, decoded (at most 16 KiB).
    private func bytes(_ field: String, _ context: AppContext) -> [UInt8]? {
        context.form[field].flatMap { Tokens.base64URLDecoded($0, limit: 16_384) }
    }

    private func creationOptions(_ relying: WebAuthn.RelyingParty, challenge: String, handle: String, username: String,
                                 displayName: String, exclude: [String]) -> [String: Any] {
        [
            "challenge": challenge,
            "rp": ["id": relying.id, "name": pages.string("site_name", .en)],
            "user": ["id": handle, "name": username, "displayName": displayName],
            "pubKeyCredParams": [["type": "public-key", "alg": WebAuthn.es256], ["type": "public-key", "alg": WebAuthn.rs256]],
            "timeout": 300_000,
            "attestation": "none",
            "authenticatorSelection": ["residentKey": "required", "requireResidentKey": true, "userVerification": "preferred"],
            "excludeCredentials": exclude.map { ["type": "public-key", "id": $0] },
        ]
    }
}

/// Where passkeys are for: `--public-url`'s origin, or, for a node serving on loopback without
/// one (`swift run`), `http://localhost:PORT` (an IP address cannot be an RP ID). Elsewhere no
/// passkeys are offered.
struct PasskeyParty: Sendable {
    let publicURL: String?
    let onLoopback: Bool
    let port: @Sendable () -> Int

    func resolve() -> WebAuthn.RelyingParty? {
        if let publicURL { return WebAuthn.RelyingParty(origin: publicURL) }
        return onLoopback ? WebAuthn.RelyingParty(origin: "http://localhost:\(port())") : nil
    }

    /// Whether to offer passkeys on a page. On another address than the passkeys' the browser
    /// refuses, or the site does (the origin is checked), and the page says so.
    func offered(to request: Request) -> Bool { resolve() != nil }
}

/// The port a node listens on, known once it started (`--port 0` picks one).
final class BoundPort: Sendable {
    private let value = Atomic<Int>(0)
    var port: Int {
        get { value.load(ordering: .relaxed) }
        set { value.store(newValue, ordering: .relaxed) }
    }
}

/// `/settings/passkeys`.
struct PasskeysPage {
    struct Key {
        var id: Int64
        var name: String
        var added: Moment
        var lastUsed: Moment?
    }

    var layout: LayoutView
    var keys: [Key]
    var hasKeys: Bool { !keys.isEmpty }
    /// The browser is on the passkeys' own address: adding one can work.
    var offered: Bool
    var error: String?
}
