import Foundation
import HTTPServer

/// Sign-up, sign-in, sign-out and settings.
struct AccountsController {
    let pages: Pages
    let store: AccountStore
    let identity: Identity
    let hasher: PasswordHasher
    /// A guest's bookmarks become the account's at sign-up and sign-in.
    let bookmarks: Bookmarks
    let limits: SiteLimits
    let clientAddress: ClientAddress
    /// With a relay: sign-up takes an optional address, sign-in offers "Forgot password?".
    let mail: MailSender?
    /// Where passkeys work, for offering them.
    let party: PasskeyParty
    /// With Web Push: settings link to the browsers that get it.
    var pushEnabled = false
    /// OpenID Connect providers the operator configured (a button each, where reachable).
    var openID: OpenIDProviders?
    let clock: @Sendable () -> Date

    /// The providers' buttons for a page leading on to `next` (`connect`: from Settings).
    func openIDButtons(_ language: Language, next: String, connected: Set<String> = [], connect: Bool = false) -> [OpenIDButton] {
        (openID?.offered ?? []).map { provider in
            let key = ["apple", "kakao", "google"].contains(provider.name) ? "oidc_button_\(provider.name)" : "oidc_button"
            let href = "/login/oidc/\(provider.name)" + (connect ? "?connect=1" : next == "/" ? "" : "?next=" + percentEncode(next))
            return OpenIDButton(name: provider.name, label: pages.string(key, language, ["provider": OpenIDController.label(provider.name)]),
                                href: href, connected: connected.contains(provider.name))
        }
    }

    func addRoutes(to router: Router<AppContext>) {
        router.get("/signup", showSignUp)
        router.post("/signup", signUp)
        router.get("/login", showSignIn)
        router.post("/login", signIn)
        router.post("/logout", signOut)
        router.get("/settings", settings)
        router.post("/settings/profile", updateProfile)
        router.post("/settings/password", changePassword)
        router.post("/settings/delete", deleteAccount)
    }

    // MARK: - Sign-up

    func showSignUp(_ request: Request, _ context: AppContext) throws -> Response {
        let next = safeReturnPath(try request.queryItems()["next"])
        return signUpPage(context, values: ["next": next], errors: [:])
    }

    private func signUpPage(_ context: AppContext, values: [String: String], errors: [String: String], status: HTTPStatus = .ok,
                            wait: Int? = nil) -> Response {
        let next = values["next"] ?? "/"
        let language = context.language
        let view = SignUpPage(layout: pages.layout(context, title: pages.string("sign_up", language)), hasErrors: !errors.isEmpty,
                              limitText: wait.map { pages.string("error_sign_up_limit", language, ["wait": pages.span(Double($0), language)]) },
                              next: next, signInHref: Self.address("/login", keeping: next),
                              username: values["username"] ?? "", displayName: values["display_name"] ?? "",
                              usernameError: errors["username"], displayNameError: errors["display_name"], passwordError: errors["password"],
                              mailEnabled: mail != nil, email: values["email"] ?? "", emailError: errors["email"],
                              passkeys: party.offered(to: context.request), providers: openIDButtons(language, next: next))
        var response = pages.html(context, status: wait == nil ? status : .tooManyRequests) { Templates.signup(view, &$0, $1) }
        if let wait { response.headers.add("Retry-After", String(wait)) }
        return response
    }

    /// A sign-up form as read: what was typed, every problem with it, and whether the address
    /// must wait (the per-address limits; this attempt is counted).
    struct SignUpForm {
        var username: String
        var displayName: String
        var email: MailAddress?
        var next: String
        var values: [String: String]
        var errors: [String: String]
        var wait: Int?
        /// The zone the browser gave (`time_zone`, filled in by app.js), else the default.
        var timeZone: MemberTimeZone = .default
        /// The limit an account made counts against, and its bucket.
        var made: (RateLimit, String)
    }

    /// Reads and checks a sign-up (the password is the caller's: a passkey sign-up has none).
    func readSignUp(_ request: Request, _ context: AppContext) throws -> SignUpForm {
        let form = context.form
        let username = Validation.typedUsername(form["username"])
        let typedName = TextPolicy.displayName.typed(form["display_name"])
        let language = context.language
        let address = clientAddress.of(request)
        // Every attempt counts a fifth as much as an account made: a family or an office behind
        // one address can get a form wrong many times, and a script still cannot hash forever.
        let attempts = RateLimit(limit: limits.signUpsPerHour * 5, window: 3600), made = RateLimit(limit: limits.signUpsPerHour, window: 3600)
        var errors: [String: String] = [:]
        let admins = try store.adminNames(except: nil)
        let usernameProblems = Validation.usernameProblems(username, admins: admins)
        if !usernameProblems.isEmpty {
            errors["username"] = usernameProblems.map { pages.string($0, language) }.joined(separator: " ")
        } else if try !store.isAvailable(username) {
            errors["username"] = pages.string("error_username_taken", language)
        }
        let displayName: String
        switch Validation.displayName(typedName, admins: admins) {
        case .success(let name): displayName = name
        case .failure(let problem):
            displayName = typedName.text
            errors["display_name"] = pages.string(problem.key, language)
        }
        // Optional; only with a relay to confirm it.
        let typedEmail = mail == nil ? "" : TextPolicy.prefix(form["email"] ?? "", bytes: MailAddress.maxBytes + 8).trimmingCharacters(in: .whitespaces)
        let email = MailAddress(typedEmail)
        if !typedEmail.isEmpty && email == nil { errors["email"] = pages.string("error_email", language) }
        let next = safeReturnPath(form["next"])
        let wait = try store.attempt(attempts, "signup:try:ip:\(address)", checking: made, "signup:ip:\(address)", now: clock())
        return SignUpForm(username: username, displayName: displayName, email: email, next: next,
                          values: ["username": username, "display_name": displayName, "next": next, "email": typedEmail],
                          errors: errors, wait: wait,
                          timeZone: MemberTimeZone(form["time_zone"], source: .browser) ?? .default, made: (made, "signup:ip:\(address)"))
    }

    /// The sign-up form again, with what was typed and what is wrong (or when to try again).
    func signUpRefused(_ context: AppContext, _ form: SignUpForm) -> Response {
        signUpPage(context, values: form.values, errors: form.errors, status: .unprocessableContent, wait: form.wait)
    }

    func signUp(_ request: Request, _ context: AppContext) throws -> Response {
        var form = try readSignUp(request, context)
        let password = context.form["password"] ?? ""
        if let problem = Validation.password(password, username: form.username) { form.errors["password"] = pages.string(problem, context.language) }
        if form.wait != nil || !form.errors.isEmpty { return signUpRefused(context, form) }
        let now = clock()
        let hash = try hasher.hash(password, client: clientAddress.of(request))
        return try create(form, request, context) { sessions in
            try store.signUp(NewUser(username: form.username, displayName: form.displayName, passwordHash: hash, role: "user", createdAt: now,
                                     timeZone: form.timeZone),
                             email: form.email, language: context.language, counting: form.made, sessions: sessions, now: now)
        }
    }

    /// Makes the account with `make` (nil when the name was taken meanwhile) and signs its
    /// browser in: the welcome, the guest's bookmarks, the address's confirmation on its way.
    /// `passkeyOnly`: the account's one way in is the passkey just made; it lands first on the
    /// offer of another (recovery codes, an e-mail, a second passkey), then goes on to `next`.
    func create(_ form: SignUpForm, _ request: Request, _ context: AppContext, passkeyOnly: Bool = false,
                _ make: (SessionStore) throws -> String?) throws -> Response {
        let created: String?
        do {
            created = try make(identity.sessions)
        } catch let refusal as HTTPError where refusal.status == .tooManyRequests { // another sign-up took the last room
            return signUpPage(context, values: form.values, errors: [:], wait: refusal.retryAfter ?? 3600)
        }
        guard let token = created else {
            var errors = form.errors
            errors["username"] = pages.string("error_username_taken", context.language)
            return signUpPage(context, values: form.values, errors: errors, status: .unprocessableContent)
        }
        if let old = context.sessionTokenHash { try identity.sessions.revoke(tokenHash: old) }
        if form.email != nil { mail?.wake() }
        let wayBack = "/settings/recovery?welcome=1" + (form.next == "/" ? "" : "&next=" + percentEncode(form.next))
        var response = Response.redirect(to: passkeyOnly ? wayBack : Self.landing(form.next))
        response.setCookie(identity.sessionCookie(token))
        // A new account holds none yet, and a guest's cookie at most the limit: all fit.
        if bookmarks.hasGuestCookie(request), let user = try store.user(named: form.username) {
            _ = try bookmarks.adoptGuestBookmarks(request, userID: user.id, into: &response)
        }
        context.nextFlash = Flash(.welcome)
        return response
    }

    /// `/signup` or `/login` carrying where the person was going, so that switching between the
    /// two forms does not lose the way back.
    static func address(_ form: String, keeping next: String) -> String {
        next == "/" ? form : form + "?next=" + percentEncode(next)
    }

    /// Where a person lands after signing up or in: where they were, and on a city page its
    /// board (where they came to write), not the top of the weather.
    static func landing(_ next: String) -> String {
        next.hasPrefix("/city/") && !next.contains("#") ? next + "#board" : next
    }

    // MARK: - Sign-in

    func showSignIn(_ request: Request, _ context: AppContext) throws -> Response {
        signInPage(context, username: "", next: safeReturnPath(try request.queryItems()["next"]), error: nil)
    }

    func signInPage(_ context: AppContext, username: String, next: String, error: String?, status: HTTPStatus = .ok) -> Response {
        let view = SignInPage(layout: pages.layout(context, title: pages.string("sign_in", context.language)), error: error,
                              next: next, signUpHref: Self.address("/signup", keeping: next), username: username, mailEnabled: mail != nil,
                              passkeys: party.offered(to: context.request), providers: openIDButtons(context.language, next: next))
        return pages.html(context, status: status) { Templates.login(view, &$0, $1) }
    }

    func signIn(_ request: Request, _ context: AppContext) throws -> Response {
        let form = context.form
        let username = Validation.typedUsername(form["username"])
        let password = form["password"] ?? ""
        let next = safeReturnPath(form["next"])
        let now = clock()
        let address = clientAddress.of(request)
        let device = KnownDevices.token(in: request)
        let found = try store.credentials(username: username)
        let user: User
        do {
            let priority = try Self.countSignIn(username, address: address, device: (device, found?.user.id), limits: limits,
                                                store: store, now: now)
            // An account with passkeys only has no password ('') that any password could match.
            guard let found, !found.passwordHash.isEmpty,
                  try hasher.verify(password, against: found.passwordHash, client: address, priority: priority) else {
                try store.signInFailed(knownDevice: priority == .knownDevice ? device : nil, now: now)
                return signInPage(context, username: username, next: next, error: pages.string("error_sign_in", context.language),
                                  status: .unprocessableContent)
            }
            user = found.user
        } catch let refusal as HTTPError where refusal.status == .tooManyRequests || refusal.status == .serviceUnavailable {
            // Too many attempts (this address, this account, the site's brake) or checks at once:
            // the form again with the name kept, and how long to wait.
            let wait = refusal.retryAfter ?? 1, language = context.language
            let waitText = wait < 60 ? pages.string("span_seconds", language, ["n": String(wait)]) : pages.span(Double(wait), language)
            var response = signInPage(context, username: username, next: next,
                                      error: pages.string("error_sign_in_wait", language, ["wait": waitText]), status: refusal.status)
            response.headers.add("Retry-After", String(wait))
            return response
        }
        let (token, deviceToken) = try store.signIn(userID: user.id, replacing: context.sessionTokenHash, device: device,
                                                    language: context.language, sessions: identity.sessions, now: now)
        var response = try signedIn(userID: user.id, username: username, token: token, next: next, request, context)
        response.setCookie(KnownDevices.cookie(deviceToken, secure: identity.secureCookies))
        return response
    }

    /// The answer once a session is made, with a password or a passkey: the way on, the guest's
    /// bookmarks adopted; a banned person may sign in to read, and the sign-in page tells them
    /// why and until when.
    func signedIn(userID: Int64, username: String, token: String, next: String, _ request: Request, _ context: AppContext) throws -> Response {
        if let ban = try store.activeBan(userID: userID, now: clock()) {
            let view = SignInPage(layout: pages.layout(context, title: pages.string("sign_in", context.language)),
                                  banNotice: ban.notice(pages, context.language), continueHref: next, next: next,
                                  signUpHref: Self.address("/signup", keeping: next), username: username, mailEnabled: mail != nil,
                                  passkeys: party.offered(to: context.request))
            var response = pages.html(context) { Templates.login(view, &$0, $1) }
            response.setCookie(identity.sessionCookie(token))
            return response
        }
        var response = Response.redirect(to: Self.landing(next))
        response.setCookie(identity.sessionCookie(token))
        if try bookmarks.adoptGuestBookmarks(request, userID: userID, into: &response) > 0 {
            context.nextFlash = Flash(.bookmarksLeftOut)
        }
        return response
    }

    /// Counts an attempt to get into `username`'s account, with a password or a recovery code,
    /// before anything is checked and whatever the outcome. The account's limit is per address:
    /// guesses from one network cannot lock the account's owner out from another (an address's
    /// own limit covers guessing many accounts); guesses spread over many addresses slow down on
    /// the account's brake and the site's instead, which a browser the account knows passes.
    /// Returns the place the password check takes in line.
    /// Counts a sign-in with no name typed (a passkey, a provider) against the address's
    /// allowance, the one a password's sign-in from it also draws on.
    static func countSignIn(from address: String, limits: SiteLimits, store: AccountStore, now: Date) throws {
        try store.count([(RateLimit(limit: limits.signInsPerMinute, window: 60), "login:ip:\(address)")], now: now)
    }

    @discardableResult
    static func countSignIn(_ username: String, address: String, device: (token: String?, userID: Int64?) = (nil, nil),
                            limits: SiteLimits, store: AccountStore, now: Date) throws -> ConcurrencyLimit.Priority {
        let limit = RateLimit(limit: limits.signInsPerMinute, window: 60)
        return try store.countSignIn([(limit, "login:ip:\(address)"), (limit, "login:user:\(username.lowercased()):ip:\(address)")],
                                     on: username, device: device, brake: GuessingBrake(),
                                     siteBrake: SiteWideBrake(failuresPerMinute: limits.failedSignInsForBrake,
                                                              admittedPerSecond: limits.signInsPerSecondUnderBrake),
                                     now: now)
    }

    func signOut(_ request: Request, _ context: AppContext) throws -> Response {
        if let hash = context.sessionTokenHash { try identity.sessions.revoke(tokenHash: hash) }
        var response = Response.redirect(to: "/")
        response.setCookie(.expired(SessionStore.cookieName))
        return response
    }

    // MARK: - Settings

    func settings(_ request: Request, _ context: AppContext) throws -> Response {
        let user = try context.requireUser()
        return try settingsPage(context, user: user)
    }

    /// The settings page; a refused change comes back with its message (and the typed name).
    func settingsPage(_ context: AppContext, user: User, displayName: String? = nil, profileError: String? = nil,
                      passwordError: String? = nil, deleteError: String? = nil, connectionError: String? = nil,
                      status: HTTPStatus = .ok) throws -> Response {
        let blocked = try store.blocked(by: user.id).map { SettingsPage.Person(username: $0.username, displayName: $0.displayName) }
        let connected = openID == nil ? [] : Set(try store.database.readStatement { db in
            try db.all("SELECT provider FROM oidc_identities WHERE user_id = ?", [user.id]) { $0.string(0) }
        })
        var view = SettingsPage(layout: pages.layout(context, title: pages.string("settings", context.language)),
                                displayName: displayName ?? user.displayName, profileError: profileError, passwordError: passwordError,
                                deleteError: deleteError, blocked: blocked, mailEnabled: mail != nil,
                                hasPassword: try store.hasPassword(userID: user.id), pushEnabled: pushEnabled)
        view.connections = openIDButtons(context.language, next: "/settings", connected: connected, connect: true)
        view.connectionError = connectionError
        return pages.html(context, status: status) { Templates.settings(view, &$0, $1) }
    }

    func updateProfile(_ request: Request, _ context: AppContext) throws -> Response {
        let user = try context.requireActiveUser() // a banned person cannot rename themselves
        let typedName = TextPolicy.displayName.typed(context.form["display_name"])
        let displayName: String
        switch Validation.displayName(typedName, admins: try store.adminNames(except: user.id)) {
        case .success(let name): displayName = name
        case .failure(let problem):
            return try settingsPage(context, user: user, displayName: typedName.text,
                                    profileError: pages.string(problem.key, context.language), status: .unprocessableContent)
        }
        if displayName != user.displayName {
            // Each change re-renders the boards showing the person's posts on every node: a
            // handful an hour is plenty for a person, and bounds what one member can cost.
            try store.count([(RateLimit(limit: limits.profileChangesPerHour, window: 3600), "profile:user:\(user.id)")], now: clock())
            try store.rename(userID: user.id, to: displayName)
        }
        context.nextFlash = Flash(.settingsSaved)
        return .redirect(to: "/settings")
    }

    private func countPasswordCheck(_ user: User) throws {
        try store.countPasswordCheck(userID: user.id, limits: limits, now: clock())
    }

    func changePassword(_ request: Request, _ context: AppContext) throws -> Response {
        let user = try context.requireUser()
        try countPasswordCheck(user)
        let current = context.form["current_password"] ?? ""
        let new = context.form["new_password"] ?? ""
        let language = context.language
        guard try store.reauthenticate(userID: user.id, password: current, hasher: hasher, client: clientAddress.of(request)) else {
            return try settingsPage(context, user: user, passwordError: pages.string("error_password_wrong", language),
                                    status: .unprocessableContent)
        }
        if let problem = Validation.password(new, username: user.username) {
            return try settingsPage(context, user: user, passwordError: pages.string(problem, language), status: .unprocessableContent)
        }
        let hash = try hasher.hash(new, client: clientAddress.of(request))
        // Other sessions end with the old password; this one stays.
        try store.changePassword(userID: user.id, hash: hash, keepingSession: context.sessionTokenHash)
        context.nextFlash = Flash(.settingsSaved)
        return .redirect(to: "/settings")
    }

    func deleteAccount(_ request: Request, _ context: AppContext) throws -> Response {
        let user = try context.requireUser()
        try countPasswordCheck(user)
        guard try store.reauthenticate(userID: user.id, password: context.form["password"] ?? "", hasher: hasher,
                                       client: clientAddress.of(request)) else {
            return try settingsPage(context, user: user, deleteError: pages.string("error_password_wrong", context.language),
                                    status: .unprocessableContent)
        }
        try store.delete(user, now: clock())
        var response = Response.redirect(to: "/")
        response.setCookie(.expired(SessionStore.cookieName))
        return response
    }
}

extension HTTPError {
    /// The seconds a refusal asks to wait (`Retry-After`), when it says.
    var retryAfter: Int? { headers["Retry-After"].flatMap { Int($0) } }
}

/// A refusal named by the catalog key of its message.
struct KeyedProblem: Error, Equatable {
    let key: String
}

/// Form rules; each returns the catalog key of its message, or nil when the value is fine.
enum Validation {
    /// The username field as typed, without surrounding spaces; never more than a little over
    /// the limit (a refused name is echoed, and a sign-in's name becomes a limit's key).
    static func typedUsername(_ raw: String?) -> String {
        TextPolicy.prefix(raw ?? "", bytes: 64).trimmingCharacters(in: .whitespaces)
    }

    /// Everything wrong with a username's form, said at once (a name in Hangul hears about the
    /// letters and the length together, not one round after the other).
    static func username(_ value: String) -> String? { User.usernameFormProblems(value).first }

    /// What keeps a person from taking `value` at sign-up: its form, then a name kept for staff.
    static func usernameProblems(_ value: String, admins: [(username: String, displayName: String)] = []) -> [String] {
        let form = User.usernameFormProblems(value)
        return form.isEmpty ? NamePolicy.usernameProblem(value, admins: admins).map { [$0] } ?? [] : form
    }

    /// The display name as stored, or the catalog key of what is wrong with it: the text policy,
    /// then whom it may not look like (`NamePolicy`).
    static func displayName(_ typed: TextPolicy.Typed, admins: [(username: String, displayName: String)]) -> Result<String, KeyedProblem> {
        switch TextPolicy.displayName.normalise(typed) {
        case .failure(let problem):
            return .failure(KeyedProblem(key: problem.key(lengthKey: "error_display_name_length")))
        case .success(let name):
            if let key = NamePolicy.displayNameProblem(name, admins: admins) { return .failure(KeyedProblem(key: key)) }
            return .success(name)
        }
    }

    static func password(_ value: String, username: String) -> String? {
        guard value.count >= 10 else { return "error_password_length" }
        guard value.lowercased() != username.lowercased() else { return "error_password_username" }
        return nil
    }
}

/// The sign-up form, with what was typed and what is wrong with it.
struct SignUpPage {
    var layout: LayoutView
    var hasErrors: Bool
    /// Too many sign-ups from the address: when to try again, in words.
    var limitText: String?
    var next: String
    /// "Already have an account?": the sign-in form, with the same way back.
    var signInHref: String
    var username: String
    var displayName: String
    var usernameError: String?
    var displayNameError: String?
    var passwordError: String?
    /// The optional address, with a relay configured.
    var mailEnabled: Bool
    var email: String
    var emailError: String?
    /// "Sign up with a passkey", where passkeys work.
    var passkeys: Bool
    /// A button a configured OpenID provider.
    var providers: [OpenIDButton] = []
    var hasProviders: Bool { !providers.isEmpty }
}

/// The sign-in form; for a banned person, the ban and a way on.
struct SignInPage {
    var layout: LayoutView
    var error: String?
    var banNotice: BanNotice?
    var continueHref = ""
    var next: String
    /// "New here?": the sign-up form, with the same way back.
    var signUpHref: String
    var username: String
    /// "Forgot password?", with a relay configured.
    var mailEnabled: Bool
    /// "Sign in with a passkey", where passkeys work.
    var passkeys: Bool
    /// A button a configured OpenID provider.
    var providers: [OpenIDButton] = []
    var hasProviders: Bool { !providers.isEmpty }
}

/// The settings page.
struct SettingsPage {
    struct Person {
        var username: String
        var displayName: String
    }

    var layout: LayoutView
    var displayName: String
    var profileError: String?
    var passwordError: String?
    var deleteError: String?
    var blocked: [Person]
    var hasBlocked: Bool { !blocked.isEmpty }
    var mailEnabled: Bool
    /// An account with passkeys only is asked for no password before a change.
    var hasPassword: Bool
    var pushEnabled: Bool
    /// The OpenID providers, connected or not (`[data-oidc-connection]`).
    var connections: [OpenIDButton] = []
    var hasConnections: Bool { !connections.isEmpty }
    var connectionError: String?
}
