import Foundation
import HTTPServer

/// "Forgot password?": a link by mail to the account's confirmed address, good for an hour and
/// once, void once a newer one is sent or the member signs in. The answer to asking is the same
/// whether or not any account matched.
struct PasswordResetController {
    let pages: Pages
    let store: AccountStore
    let identity: Identity
    let hasher: PasswordHasher
    let mail: MailSender
    let clientAddress: ClientAddress
    let clock: @Sendable () -> Date

    /// Asks per client address an hour; links per account an hour (past it, nothing is sent and
    /// the answer is the same).
    static let asksPerAddress = RateLimit(limit: 10, window: 3600)
    static let linksPerAccount = RateLimit(limit: 3, window: 3600)

    func addRoutes(to router: Router<AppContext>) {
        router.get("/password/forgot", showForgot)
        router.post("/password/forgot", forgot)
        router.get("/password/reset/{token}", showReset)
        router.post("/password/reset/{token}", reset)
    }

    func showForgot(_ request: Request, _ context: AppContext) throws -> Response {
        forgotPage(context, username: "", sent: false)
    }

    private func forgotPage(_ context: AppContext, username: String, sent: Bool, wait: Int? = nil) -> Response {
        let language = context.language
        let view = ForgotPage(layout: pages.layout(context, title: pages.string("forgot_title", language)), username: username, sent: sent,
                              limitText: wait.map { pages.string("error_forgot_limit", language, ["wait": pages.span(Double($0), language)]) })
        var response = pages.html(context, status: wait == nil ? .ok : .tooManyRequests) { Templates.password_forgot(view, &$0, $1) }
        if let wait { response.headers.add("Retry-After", String(wait)) }
        return response
    }

    func forgot(_ request: Request, _ context: AppContext) throws -> Response {
        let typed = TextPolicy.prefix(context.form["username"] ?? "", bytes: MailAddress.maxBytes + 8).trimmingCharacters(in: .whitespaces)
        let sent: Bool
        do {
            sent = try store.askForReset(nameOrAddress: typed, bucket: "forgot:ip:\(clientAddress.of(request))", now: clock())
        } catch let refusal as HTTPError where refusal.status == .tooManyRequests {
            return forgotPage(context, username: typed, sent: false, wait: refusal.retryAfter ?? 3600)
        }
        if sent { mail.wake() }
        // The same page whatever matched: it names no account and no address.
        return forgotPage(context, username: "", sent: true)
    }

    func showReset(_ request: Request, _ context: AppContext) throws -> Response {
        let found = try store.emailToken(request.parameters["token"] ?? "", .reset, now: clock())
        return resetPage(context, request, expired: found == nil, error: nil)
    }

    private func resetPage(_ context: AppContext, _ request: Request, expired: Bool, error: String?) -> Response {
        var view = LinkPage(layout: pages.layout(context, title: pages.string("reset_title", context.language)),
                            address: "", action: request.path, expired: expired)
        view.passwordError = error
        return pages.html(context, status: expired ? .gone : error == nil ? .ok : .unprocessableContent) {
            Templates.password_reset(view, &$0, $1)
        }
    }

    func reset(_ request: Request, _ context: AppContext) throws -> Response {
        let token = request.parameters["token"] ?? ""
        let now = clock()
        guard let (userID, _) = try store.emailToken(token, .reset, now: now),
              let user = try store.database.readStatement({ try User.find(id: userID, $0) }) else {
            return resetPage(context, request, expired: true, error: nil)
        }
        let password = context.form["new_password"] ?? ""
        if let problem = Validation.password(password, username: user.username) {
            return resetPage(context, request, expired: false, error: pages.string(problem, context.language))
        }
        let hash = try hasher.hash(password, client: clientAddress.of(request))
        guard let session = try store.resetPassword(token: token, hash: hash, replacing: context.sessionTokenHash,
                                                    sessions: identity.sessions, now: now) else {
            return resetPage(context, request, expired: true, error: nil) // used meanwhile
        }
        var response = Response.redirect(to: "/")
        response.setCookie(identity.sessionCookie(session))
        context.nextFlash = Flash(.passwordReset)
        return response
    }
}

extension AccountStore {
    /// Counts the ask against the address's limit (429 past it), and queues a reset link for each
    /// account the name or address names that has a confirmed address and room under its own
    /// limit; whether any was queued.
    func askForReset(nameOrAddress typed: String, bucket: String, now: Date) throws -> Bool {
        try database.write(.cluster) { db in  // counts the account's links
            try PasswordResetController.asksPerAddress.hit(bucket, now: now, db)
            let accounts: [(id: Int64, email: String, language: String)]
            let columns = "SELECT id, email, language FROM users WHERE email IS NOT NULL AND "
            if typed.contains("@") {
                guard let address = MailAddress(typed) else { return false }
                // An address several accounts share (a family's) gets a link for each, a few at most.
                accounts = try db.all(columns + "email_key = ? ORDER BY id LIMIT 5", [address.key]) { ($0.int64(0), $0.string(1), $0.string(2)) }
            } else {
                accounts = try db.all(columns + "username_key = ?", [typed.lowercased()]) { ($0.int64(0), $0.string(1), $0.string(2)) }
            }
            var queued = false
            for account in accounts {
                let perAccount = "forgot:user:\(account.id)"
                guard try PasswordResetController.linksPerAccount.wait(perAccount, now: now, db) == nil,
                      let address = MailAddress(account.email) else { continue }
                try PasswordResetController.linksPerAccount.hit(perAccount, now: now, db)
                try MailQueue.dropResets(userID: account.id, db) // the newest ask is the one that counts
                try MailQueue.enqueue(.reset, userID: account.id, to: address, language: Language(rawValue: account.language) ?? .en,
                                      now: now, db)
                queued = true
            }
            return queued
        }
    }

    /// Uses a reset link: the new password, every session of the member ended (this browser gets
    /// a new one), every other reset link void. nil when the link is unknown, used or expired.
    func resetPassword(token: String, hash: String, replacing oldTokenHash: String?, sessions: SessionStore,
                       now: Date) throws -> String? {
        try database.write(.cluster) { db in  // a link used once, every other link void
            guard let (userID, _) = try EmailTokens.use(token, .reset, now: now, db) else { return nil }
            try db.execute("UPDATE users SET password_hash = ? WHERE id = ?", hash, userID)
            try SessionStore.revokeAll(userID: userID, db)
            if let oldTokenHash { try db.execute("DELETE FROM sessions WHERE token_hash = ?", oldTokenHash) }
            try EmailTokens.dropResets(userID: userID, db)
            return try sessions.create(userID: userID, now: now, db)
        }
    }
}

/// `/password/forgot`: the form, or that a link was sent if anything matched.
struct ForgotPage {
    var layout: LayoutView
    var username: String
    var sent: Bool
    var limitText: String?
}
