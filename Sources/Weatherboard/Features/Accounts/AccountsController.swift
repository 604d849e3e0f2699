import Foundation
import HTTPServer

/// Sign-up, sign-in, sign-out and settings.
struct AccountsController {
    let pages: Pages
    let database: AppDatabase
    let identity: Identity
    let hasher: PasswordHasher
    let limits: AppConfiguration.Limits
    let clientAddress: ClientAddress
    let versions: PageVersions
    let clock: @Sendable () -> Date

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

    private func signUpPage(_ context: AppContext, values: [String: String], errors: [String: String], status: HTTPStatus = .ok) -> Response {
        let view = SignUpPage(layout: pages.layout(context, title: pages.string("sign_up", context.language)), hasErrors: !errors.isEmpty,
                              next: values["next"] ?? "/", username: values["username"] ?? "", displayName: values["display_name"] ?? "",
                              usernameError: errors["username"], displayNameError: errors["display_name"], passwordError: errors["password"])
        return pages.html(context, status: status) { Templates.signup(view, &$0, $1) }
    }

    func signUp(_ request: Request, _ context: AppContext) throws -> Response {
        let form = context.form
        let username = (form["username"] ?? "").trimmingCharacters(in: .whitespaces)
        let displayName = (form["display_name"] ?? "").trimmingCharacters(in: .whitespacesAndNewlines).precomposedStringWithCanonicalMapping
        let password = form["password"] ?? ""
        let next = safeReturnPath(form["next"])
        let language = context.language
        var errors: [String: String] = [:]
        if let problem = Validation.username(username) { errors["username"] = pages.string(problem, language) }
        if let problem = Validation.displayName(displayName) { errors["display_name"] = pages.string(problem, language) }
        if let problem = Validation.password(password, username: username) { errors["password"] = pages.string(problem, language) }
        let values = ["username": username, "display_name": displayName, "next": next]
        if !errors.isEmpty { return signUpPage(context, values: values, errors: errors, status: .unprocessableContent) }
        let now = clock()
        try database.write { db in
            try RateLimit(limit: limits.signUpsPerHour, window: 3600).hit("signup:ip:\(clientAddress.of(request))", now: now, db)
        }
        let hash = try hasher.hash(password)
        let token: String? = try database.write { db in
            guard try User.find(username: username, db) == nil,
                  try !db.exists("SELECT 1 FROM retired_usernames WHERE username_key = ?", username.lowercased())
            else { return nil }
            let user = try NewUser(username: username, displayName: displayName, passwordHash: hash, role: "user", createdAt: now).insert(db)
            return try identity.sessions.create(userID: user.id, now: now, db)
        }
        guard let token else {
            errors["username"] = pages.string("error_username_taken", language)
            return signUpPage(context, values: values, errors: errors, status: .unprocessableContent)
        }
        if let old = context.sessionTokenHash { try identity.sessions.revoke(tokenHash: old) }
        var response = Response.redirect(to: next)
        response.setCookie(identity.sessionCookie(token))
        return response
    }

    // MARK: - Sign-in

    func showSignIn(_ request: Request, _ context: AppContext) throws -> Response {
        signInPage(context, username: "", next: safeReturnPath(try request.queryItems()["next"]), error: nil)
    }

    private func signInPage(_ context: AppContext, username: String, next: String, error: String?, status: HTTPStatus = .ok) -> Response {
        let view = SignInPage(layout: pages.layout(context, title: pages.string("sign_in", context.language)), error: error,
                              next: next, username: username)
        return pages.html(context, status: status) { Templates.login(view, &$0, $1) }
    }

    func signIn(_ request: Request, _ context: AppContext) throws -> Response {
        let form = context.form
        let username = (form["username"] ?? "").trimmingCharacters(in: .whitespaces)
        let password = form["password"] ?? ""
        let next = safeReturnPath(form["next"])
        let now = clock()
        // Both limits are counted before the password is checked, and whatever the outcome. The
        // account's limit is per address: guesses from one network cannot lock the account's
        // owner out from another (an address's own limit covers guessing many accounts).
        try database.write { db in
            let limit = RateLimit(limit: limits.signInsPerMinute, window: 60)
            let address = clientAddress.of(request)
            try limit.hit("login:ip:\(address)", now: now, db)
            try limit.hit("login:user:\(username.lowercased()):ip:\(address)", now: now, db)
        }
        let user = try database.readStatement { try User.find(username: username, $0) }
        guard let user, try hasher.verify(password, against: user.passwordHash) else {
            return signInPage(context, username: username, next: next, error: pages.string("error_sign_in", context.language),
                              status: .unprocessableContent)
        }
        let token = try database.write { db in
            // Rotation: the session the browser had (if any) ends, a new one starts.
            if let old = context.sessionTokenHash {
                try db.execute("DELETE FROM sessions WHERE token_hash = ?", old)
            }
            return try identity.sessions.create(userID: user.id, now: now, db)
        }
        // A banned person may sign in to read; the sign-in page tells them why and until when.
        if let ban = try database.readStatement({ try Ban.active(userID: user.id, now: now, $0) }) {
            let view = SignInPage(layout: pages.layout(context, title: pages.string("sign_in", context.language)),
                                  banNotice: ban.explanation(pages, context.language), continueHref: next, next: next, username: username)
            var response = pages.html(context) { Templates.login(view, &$0, $1) }
            response.setCookie(identity.sessionCookie(token))
            return response
        }
        var response = Response.redirect(to: next)
        response.setCookie(identity.sessionCookie(token))
        return response
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
    private func settingsPage(_ context: AppContext, user: User, displayName: String? = nil, profileError: String? = nil,
                              passwordError: String? = nil, deleteError: String? = nil, status: HTTPStatus = .ok) throws -> Response {
        let blocked = try database.readStatement { db in
            try db.all("""
                SELECT u.username, u.display_name FROM blocks b JOIN users u ON u.id = b.blocked_id
                WHERE b.blocker_id = ? ORDER BY b.created_at DESC
                """, [user.id]) { SettingsPage.Person(username: $0.string(0), displayName: $0.string(1)) }
        }
        let view = SettingsPage(layout: pages.layout(context, title: pages.string("settings", context.language)),
                                displayName: displayName ?? user.displayName, profileError: profileError, passwordError: passwordError,
                                deleteError: deleteError, blocked: blocked)
        return pages.html(context, status: status) { Templates.settings(view, &$0, $1) }
    }

    func updateProfile(_ request: Request, _ context: AppContext) throws -> Response {
        let user = try context.requireActiveUser() // a banned person cannot rename themselves
        let displayName = (context.form["display_name"] ?? "").trimmingCharacters(in: .whitespacesAndNewlines).precomposedStringWithCanonicalMapping
        if let problem = Validation.displayName(displayName) {
            return try settingsPage(context, user: user, displayName: displayName, profileError: pages.string(problem, context.language),
                                    status: .unprocessableContent)
        }
        try database.write { db in
            try db.execute("UPDATE users SET display_name = ? WHERE id = ?", displayName, user.id)
        }
        versions.changed(.everything)
        context.nextFlash = Flash(.settingsSaved)
        return .redirect(to: "/settings")
    }

    /// Password checks outside sign-in (changing it, deleting the account) count against the
    /// same per-minute limit, per account: a stolen session must not become a guessing oracle.
    private func countPasswordCheck(_ user: User) throws {
        try database.write { db in
            try RateLimit(limit: limits.signInsPerMinute, window: 60).hit("password:user:\(user.id)", now: clock(), db)
        }
    }

    func changePassword(_ request: Request, _ context: AppContext) throws -> Response {
        let user = try context.requireUser()
        try countPasswordCheck(user)
        let current = context.form["current_password"] ?? ""
        let new = context.form["new_password"] ?? ""
        let language = context.language
        guard try hasher.verify(current, against: user.passwordHash) else {
            return try settingsPage(context, user: user, passwordError: pages.string("error_password_wrong", language),
                                    status: .unprocessableContent)
        }
        if let problem = Validation.password(new, username: user.username) {
            return try settingsPage(context, user: user, passwordError: pages.string(problem, language), status: .unprocessableContent)
        }
        let hash = try hasher.hash(new)
        try database.write { db in
            try db.execute("UPDATE users SET password_hash = ? WHERE id = ?", hash, user.id)
            // Other sessions end with the old password; this one stays.
            try db.execute("DELETE FROM sessions WHERE user_id = ? AND token_hash <> ?", user.id, context.sessionTokenHash)
        }
        context.nextFlash = Flash(.settingsSaved)
        return .redirect(to: "/settings")
    }

    func deleteAccount(_ request: Request, _ context: AppContext) throws -> Response {
        let user = try context.requireUser()
        try countPasswordCheck(user)
        guard try hasher.verify(context.form["password"] ?? "", against: user.passwordHash) else {
            return try settingsPage(context, user: user, deleteError: pages.string("error_password_wrong", context.language),
                                    status: .unprocessableContent)
        }
        // Sessions, blocks and bookmarks go with the row; posts stay as "deleted user"; reports
        // stay without their reporter. What must outlive the account is kept first: the blocks
        // on this person as hidden posts, the name as reserved, the bans as history.
        try database.write { db in
            try db.execute("""
                INSERT INTO hidden_posts (viewer_id, post_id)
                SELECT b.blocker_id, p.id FROM blocks b JOIN posts p ON p.user_id = b.blocked_id WHERE b.blocked_id = ?
                ON CONFLICT DO NOTHING
                """, user.id)
            try db.execute("INSERT INTO retired_usernames (username_key, retired_at) VALUES (?, ?) ON CONFLICT DO NOTHING",
                           user.usernameKey, clock())
            try db.execute("""
                INSERT INTO retired_bans (username_key, reason, created_at, until, lifted_at)
                SELECT CAST(? AS TEXT), reason, created_at, until, lifted_at FROM bans WHERE user_id = ?
                """, user.usernameKey, user.id)
            try db.execute("DELETE FROM users WHERE id = ?", user.id)
        }
        versions.changed(.everything)
        var response = Response.redirect(to: "/")
        response.setCookie(.expired(SessionStore.cookieName))
        return response
    }
}

/// Form rules; each returns the catalog key of its message, or nil when the value is fine.
enum Validation {
    static func username(_ value: String) -> String? {
        guard (3...20).contains(value.count) else { return "error_username_length" }
        guard value.unicodeScalars.allSatisfy({ ($0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0))) || $0 == "_" })
        else { return "error_username_characters" }
        return nil
    }

    static func displayName(_ value: String) -> String? {
        TextPolicy.displayName.problem(value).map { $0.key(lengthKey: "error_display_name_length") }
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
    var next: String
    var username: String
    var displayName: String
    var usernameError: String?
    var displayNameError: String?
    var passwordError: String?
}

/// The sign-in form; for a banned person, the ban and a way on.
struct SignInPage {
    var layout: LayoutView
    var error: String?
    var banNotice: String?
    var continueHref = ""
    var next: String
    var username: String
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
}
