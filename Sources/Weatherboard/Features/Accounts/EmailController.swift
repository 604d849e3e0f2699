import Foundation
import HTTPServer

/// A member's e-mail address: given at `/settings/email` (or at sign-up), confirmed by a link,
/// and only then the account's. Only with a relay configured (`--smtp-url`).
struct EmailController {
    let pages: Pages
    let store: AccountStore
    let hasher: PasswordHasher
    let mail: MailSender
    let limits: SiteLimits
    let clientAddress: ClientAddress
    let clock: @Sendable () -> Date

    func addRoutes(to router: Router<AppContext>) {
        router.get("/settings/email", show)
        router.post("/settings/email", change)
        router.get("/email/verify/{token}", showConfirm)
        router.post("/email/verify/{token}", confirm)
    }

    func show(_ request: Request, _ context: AppContext) throws -> Response {
        try page(context, user: try context.requireUser(), typed: nil)
    }

    private func page(_ context: AppContext, user: User, typed: String?, errors: [String: String] = [:],
                      status: HTTPStatus = .ok) throws -> Response {
        let (current, pending) = try store.emailState(userID: user.id, now: clock())
        let language = context.language
        let view = EmailSettingsPage(layout: pages.layout(context, title: pages.string("email_title", language)),
                                     current: current, pending: pending.map { pages.string("email_pending", language, ["address": $0]) },
                                     email: typed ?? current ?? "", emailError: errors["email"], passwordError: errors["password"],
                                     hasPassword: try store.hasPassword(userID: user.id))
        return pages.html(context, status: status) { Templates.settings_email(view, &$0, $1) }
    }

    /// A new address gets a link to confirm it, and the old one (if any) is told; an empty field
    /// removes the address (the old one is told too). After the password: a stolen session must
    /// not be able to point the account's resets at its thief.
    func change(_ request: Request, _ context: AppContext) throws -> Response {
        let user = try context.requireActiveUser()
        let typed = TextPolicy.prefix(context.form["email"] ?? "", bytes: MailAddress.maxBytes + 8).trimmingCharacters(in: .whitespaces)
        let language = context.language
        let address = MailAddress(typed)
        if !typed.isEmpty && address == nil {
            return try page(context, user: user, typed: typed, errors: ["email": pages.string("error_email", language)],
                            status: .unprocessableContent)
        }
        let now = clock()
        try store.countPasswordCheck(userID: user.id, limits: limits, now: now)
        guard try store.reauthenticate(userID: user.id, password: context.form["password"] ?? "", hasher: hasher,
                                       client: clientAddress.of(request)) else {
            return try page(context, user: user, typed: typed, errors: ["password": pages.string("error_password_wrong", language)],
                            status: .unprocessableContent)
        }
        // Each change may send two messages: a handful an hour keeps the site from being a way
        // to fill someone's inbox.
        try store.count([(RateLimit(limit: 5, window: 3600), "email:user:\(user.id)")], now: now)
        try store.changeEmail(userID: user.id, to: address, language: language, now: now)
        mail.wake()
        context.nextFlash = Flash(address == nil ? .emailRemoved : .emailSent)
        return .redirect(to: "/settings/email")
    }

    func showConfirm(_ request: Request, _ context: AppContext) throws -> Response {
        let found = try store.emailToken(request.parameters["token"] ?? "", .verify, now: clock())
        let view = LinkPage(layout: pages.layout(context, title: pages.string("email_confirm_title", context.language)),
                            address: found?.address ?? "", action: request.path, expired: found == nil)
        return pages.html(context, status: found == nil ? .gone : .ok) { Templates.email_verify(view, &$0, $1) }
    }

    func confirm(_ request: Request, _ context: AppContext) throws -> Response {
        guard try store.confirmEmail(token: request.parameters["token"] ?? "", now: clock()) else {
            return try showConfirm(request, context)
        }
        context.nextFlash = Flash(.emailConfirmed)
        return .redirect(to: context.user == nil ? "/" : "/settings/email")
    }
}

extension AccountStore {
    /// The confirmed address, and one waiting for its link to be opened.
    func emailState(userID: Int64, now: Date) throws -> (current: String?, pending: String?) {
        try database.read { db in
            let current = try db.one("SELECT email FROM users WHERE id = ?", [userID]) { $0.isNull(0) ? nil : $0.string(0) } ?? nil
            let pending = try db.one("""
                SELECT address FROM email_tokens WHERE user_id = ? AND purpose = 'verify' AND expires_at > ?
                UNION ALL SELECT address FROM mail_queue WHERE user_id = ? AND kind = 'verify'
                """, [userID, now, userID]) { $0.string(0) }
            return (current, pending)
        }
    }

    /// Asks for `address` to become the member's (nil: no address): a link goes to it, and the
    /// old address is told. Links sent earlier for another address stop working.
    func changeEmail(userID: Int64, to address: MailAddress?, language: Language, now: Date) throws {
        try database.write(.subject(.member(userID))) { db in  // the member's own links
            try db.execute("DELETE FROM email_tokens WHERE user_id = ? AND purpose = 'verify'", userID)
            try db.execute("DELETE FROM mail_queue WHERE user_id = ? AND kind = 'verify'", userID)
            try db.execute("UPDATE users SET language = ? WHERE id = ?", language.rawValue, userID)
            let old = try db.one("SELECT email FROM users WHERE id = ?", [userID]) { $0.isNull(0) ? nil : $0.string(0) } ?? nil
            if let address {
                try MailQueue.enqueue(.verify, userID: userID, to: address, language: language, now: now, db)
            } else {
                try db.execute("UPDATE users SET email = NULL, email_key = NULL WHERE id = ?", userID)
            }
            if let old, let oldAddress = MailAddress(old), oldAddress.key != address?.key {
                try MailQueue.enqueue(.addressChanged, userID: userID, to: oldAddress, detail: address?.masked ?? "",
                                      language: language, now: now, db)
            }
        }
    }

    func emailToken(_ token: String, _ purpose: EmailTokens.Purpose, now: Date) throws -> (userID: Int64, address: String)? {
        // The primary's: the link may be opened a moment after it was mailed.
        try database.readStatement(.current) { try EmailTokens.find(token, purpose, now: now, $0) }
    }

    /// Uses a confirmation link: its address becomes the account's. False when the link is
    /// unknown, used or expired.
    func confirmEmail(token: String, now: Date) throws -> Bool {
        try database.write(.cluster) { db in  // an address becomes one account's
            guard let (userID, address) = try EmailTokens.use(token, .verify, now: now, db) else { return false }
            try db.execute("UPDATE users SET email = ?, email_key = ? WHERE id = ?", address, address.lowercased(), userID)
            return true
        }
    }
}

/// `/settings/email`.
struct EmailSettingsPage {
    var layout: LayoutView
    var current: String?
    var pending: String?
    var email: String
    var emailError: String?
    var passwordError: String?
    var hasPassword: Bool
}

/// A page a mailed link opens: what it is for and a button, or that it no longer works.
struct LinkPage {
    var layout: LayoutView
    var address: String
    var action: String
    var expired: Bool
    var passwordError: String?
}
