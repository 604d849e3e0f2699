import Foundation
import HTTPServer

/// Recovery codes: a member makes ten at `/settings/recovery` (shown once), and anyone holding
/// one gets back in at `/login/recover` by setting a new password.
struct RecoveryController {
    let pages: Pages
    let store: AccountStore
    let identity: Identity
    let hasher: PasswordHasher
    let limits: SiteLimits
    let clientAddress: ClientAddress
    let party: PasskeyParty
    let clock: @Sendable () -> Date

    func addRoutes(to router: Router<AppContext>) {
        router.get("/settings/recovery", showCodes)
        router.post("/settings/recovery", makeCodes)
        router.get("/login/recover", showRecover)
        router.post("/login/recover", recover)
    }

    // MARK: - Making codes

    /// `?welcome=1` (right after a passkey sign-up, `PasskeysController`): an account with only
    /// that passkey is asked first to keep a way back in; `next` is where "Not now" goes.
    func showCodes(_ request: Request, _ context: AppContext) throws -> Response {
        let query = try request.queryItems()
        return try codesPage(context, user: try context.requireUser(), welcome: query["welcome"] == "1",
                             next: safeReturnPath(query["next"]))
    }

    private func codesPage(_ context: AppContext, user: User, codes: [String] = [], error: String? = nil,
                           welcome: Bool = false, next: String = "/settings", status: HTTPStatus = .ok) throws -> Response {
        let (left, madeAt) = try store.recoverySummary(userID: user.id)
        let language = context.language
        let hasPassword = try store.hasPassword(userID: user.id)
        let view = RecoveryCodesPage(layout: pages.layout(context, title: pages.string(welcome && !hasPassword ? "way_back_title" : "recovery_title", language)),
                                     codes: codes.map { RecoveryCodesPage.Code(code: $0) },
                                     leftText: codes.isEmpty ? pages.string(left == 0 ? "recovery_none" : "recovery_left", language,
                                                                           ["n": String(left)]) : nil,
                                     madeAt: codes.isEmpty ? madeAt.map { Moment($0, language) } : nil, error: error,
                                     hasPassword: hasPassword, wayBack: welcome && !hasPassword,
                                     later: AccountsController.landing(next),
                                     download: Self.download(codes, heading: pages.string("recovery_file_heading", language, [
                                         "site": pages.string("site_name", language), "username": user.username])))
        return pages.html(context, status: status) { Templates.settings_recovery(view, &$0, $1) }
    }

    /// The codes as a text file to keep, in a `data:` link (made in the answer, never stored).
    static func download(_ codes: [String], heading: String) -> String {
        let text = ([heading, ""] + codes).joined(separator: "\n") + "\n"
        return "data:text/plain;charset=utf-8," + percentEncode(text)
    }

    /// New codes, after the password (a stolen session must not be able to keep itself a way in).
    func makeCodes(_ request: Request, _ context: AppContext) throws -> Response {
        let user = try context.requireUser()
        try store.countPasswordCheck(userID: user.id, limits: limits, now: clock())
        guard try store.reauthenticate(userID: user.id, password: context.form["password"] ?? "", hasher: hasher,
                                       client: clientAddress.of(request)) else {
            return try codesPage(context, user: user, error: pages.string("error_password_wrong", context.language),
                                 status: .unprocessableContent)
        }
        let codes = (0..<RecoveryCodes.count).map { _ in RecoveryCodes.make() }
        try store.replaceRecoveryCodes(userID: user.id, with: codes, now: clock())
        // Shown once, in this answer: never a page kept anywhere.
        return try codesPage(context, user: user, codes: codes)
    }

    // MARK: - Using one

    func showRecover(_ request: Request, _ context: AppContext) throws -> Response {
        recoverPage(context, username: "", code: "", errors: [:])
    }

    private func recoverPage(_ context: AppContext, username: String, code: String, errors: [String: String],
                             status: HTTPStatus = .ok) -> Response {
        let view = RecoverPage(layout: pages.layout(context, title: pages.string("recover_title", context.language)),
                               username: username, code: code, error: errors["code"], passwordError: errors["new_password"],
                               passkeys: party.offered(to: context.request))
        var response = pages.html(context, status: status) { Templates.login_recover(view, &$0, $1) }
        response.headers.set("Cache-Control", "no-store") // it may hold a code as typed
        return response
    }

    func recover(_ request: Request, _ context: AppContext) throws -> Response {
        let form = context.form
        let username = Validation.typedUsername(form["username"])
        let code = TextPolicy.prefix(form["code"] ?? "", bytes: 64)
        let password = form["new_password"] ?? ""
        let now = clock()
        let language = context.language
        // The same limits as signing in, in the same buckets: guessing codes and guessing
        // passwords draw on one allowance.
        try AccountsController.countSignIn(username, address: clientAddress.of(request), limits: limits, store: store, now: now)
        let mismatch = ["code": pages.string("error_recovery_code", language)]
        guard let user = try store.user(named: username), try store.hasRecoveryCode(code, userID: user.id) else {
            return recoverPage(context, username: username, code: "", errors: mismatch, status: .unprocessableContent)
        }
        // Either a new password, or ("then=passkey") straight in to add a passkey, the password
        // left as it was.
        // An account with no password goes the passkey way unless a password was typed (Enter in
        // the form takes its first button, the password's).
        let addPasskey = try form["then"] == "passkey" || (password.isEmpty && !store.hasPassword(userID: user.id))
        var hash: String?
        if !addPasskey {
            if let problem = Validation.password(password, username: user.username) {
                return recoverPage(context, username: username, code: code, errors: ["new_password": pages.string(problem, language)],
                                   status: .unprocessableContent)
            }
            hash = try hasher.hash(password, client: clientAddress.of(request))
        }
        // The code is used, the password set and every other session ended in one transaction;
        // a code used meanwhile by another request is refused here.
        guard let token = try store.recover(userID: user.id, code: code, passwordHash: hash, replacing: context.sessionTokenHash,
                                            sessions: identity.sessions, now: now) else {
            return recoverPage(context, username: username, code: "", errors: mismatch, status: .unprocessableContent)
        }
        var response = Response.redirect(to: addPasskey ? "/settings/passkeys" : "/settings/recovery")
        response.setCookie(identity.sessionCookie(token))
        context.nextFlash = Flash(addPasskey ? .recoveredForPasskey : .recovered)
        return response
    }
}

extension AccountStore {
    func recoverySummary(userID: Int64) throws -> (left: Int, madeAt: Date?) {
        try database.readStatement { try RecoveryCodes.summary(userID: userID, $0) }
    }

    func replaceRecoveryCodes(userID: Int64, with codes: [String], now: Date) throws {
        // Locks: the member's own codes.
        try database.write(.subject(.member(userID))) { try RecoveryCodes.replace(userID: userID, with: codes, now: now, $0) }
    }

    /// Whether `code` is one of the member's unused codes (checked before the password is hashed).
    func hasRecoveryCode(_ code: String, userID: Int64) throws -> Bool {
        guard let hash = RecoveryCodes.digest(code, userID: userID) else { return false }
        return try database.readStatement {
            try $0.exists("SELECT 1 FROM recovery_codes WHERE user_id = ? AND code_hash = ?", userID, hash)
        }
    }

    /// Uses `code`, sets the new password, ends every session of the member and starts this
    /// browser's: the new session's token, or nil (nothing written) when the code is not theirs.
    func recover(userID: Int64, code: String, passwordHash: String?, replacing oldTokenHash: String?,
                 sessions: SessionStore, now: Date) throws -> String? {
        try database.write(.subject(.member(userID))) { db in  // a code used once, the member's sessions
            guard try RecoveryCodes.use(code, userID: userID, db) else { return nil }
            if let passwordHash { try db.execute("UPDATE users SET password_hash = ? WHERE id = ?", passwordHash, userID) }
            try SessionStore.revokeAll(userID: userID, db)
            if let oldTokenHash { try db.execute("DELETE FROM sessions WHERE token_hash = ?", oldTokenHash) }
            return try sessions.create(userID: userID, now: now, db)
        }
    }

    /// Password checks outside sign-in (changing it, deleting the account, new recovery codes)
    /// count against the same per-minute limit, per account: a stolen session must not become a
    /// guessing oracle.
    func countPasswordCheck(userID: Int64, limits: SiteLimits, now: Date) throws {
        try count([(RateLimit(limit: limits.signInsPerMinute, window: 60), "password:user:\(userID)")], now: now)
    }
}

/// `/settings/recovery`: how many codes are left, or the new codes, shown this once.
struct RecoveryCodesPage {
    struct Code { var code: String }
    var layout: LayoutView
    var codes: [Code]
    var hasCodes: Bool { !codes.isEmpty }
    var leftText: String?
    var madeAt: Moment?
    var error: String?
    var hasPassword: Bool
    /// Right after a passkey sign-up: ways back in offered first.
    var wayBack: Bool
    var later: String
    var download: String
}

/// `/login/recover`: a username, a code and the new password.
struct RecoverPage {
    var layout: LayoutView
    var username: String
    var code: String
    var error: String?
    var passwordError: String?
    /// "Sign in and add a passkey instead", where passkeys work.
    var passkeys: Bool
}
