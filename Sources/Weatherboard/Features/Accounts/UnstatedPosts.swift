import Foundation
import HTTPServer
import HTTPMultipart

/// A state change from a client that says neither where it comes from (`RequestSource.unstated`:
/// no `Sec-Fetch-Site`, no `Origin`; an old browser or a script) is neither refused nor trusted.
/// It is answered with a page that says what is about to happen, keeps the form's fields, and
/// carries a one-time token bound to this browser and this action; confirming sends the form
/// again with it. A forged form on another site can make an old browser open that page, but
/// cannot read the token, and the person sees what they are asked to do (docs/security.md).
/// No other page carries anything of a session, so every page is the same bytes for every client.
struct UnstatedPosts {
    static let keeping = Keeping("form_confirmations", "expires_at")

    let database: AppDatabase
    let pages: Pages
    let clock: @Sendable () -> Date

    /// The field that carries the confirmation's token.
    static let field = "confirm_token"
    /// Long enough to read the page and decide; a token is used once in any case.
    static let validFor: TimeInterval = 30 * 60
    /// Confirmations one browser may hold at once (a script repeating itself replaces its oldest).
    static let heldAtOnce = 20

    /// nil when the request carries a valid confirmation (taken, so it works once; its field is
    /// removed from the form and the handler runs); otherwise the confirmation page (200,
    /// nothing changed). A token that is wrong, used or expired is 403.
    func answer(_ request: Request, _ context: AppContext) throws -> Response? {
        guard request.isForm || request.isMultipartForm else {
            // A script's JSON cannot be shown back for confirming; a browser's script sends `Origin`.
            throw HTTPError(.forbidden, message: "cross-origin")
        }
        let action = request.method + " " + request.path
        if let token = context.form[Self.field] {
            guard let holder = holder(context), try take(token, holder: holder, action: action) else {
                throw HTTPError(.forbidden, message: "confirmation")
            }
            context.form.removeAll(named: Self.field)
            return nil
        }
        let holder: String
        if let known = self.holder(context) {
            holder = known
        } else {
            // A guest with no cookie yet: one is set with the page, and the confirmation bound to it.
            let cookie = Tokens.random()
            context.guestBinding = cookie
            context.newGuestToken = cookie
            holder = "g:" + Tokens.digest(cookie)
        }
        return page(request, context, token: try issue(holder: holder, action: action))
    }

    /// Whose confirmation it is: the session's, or a guest's cookie (digested: the table holds no cookie).
    private func holder(_ context: AppContext) -> String? {
        if let session = context.sessionTokenHash { return "s:" + session }
        return context.guestBinding.map { "g:" + Tokens.digest($0) }
    }

    private func issue(holder: String, action: String) throws -> String {
        let token = Tokens.random(), now = clock().timeIntervalSince1970
        try database.write(.subjects) { db in  // one browser's confirmations; expired ones go with them
            try db.execute("DELETE FROM form_confirmations WHERE expires_at <= ?", now)
            let held = try db.one("SELECT count(*) FROM form_confirmations WHERE holder = ?", [holder]) { $0.int(0) } ?? 0
            if held >= Self.heldAtOnce {
                try db.execute("""
                    DELETE FROM form_confirmations WHERE token_hash IN (
                        SELECT token_hash FROM form_confirmations WHERE holder = ? ORDER BY expires_at LIMIT ?)
                    """, holder, held - Self.heldAtOnce + 1)
            }
            try db.execute("INSERT INTO form_confirmations (token_hash, holder, action, expires_at) VALUES (?, ?, ?, ?)",
                           Tokens.digest(token), holder, action, now + Self.validFor)
        }
        return token
    }

    /// Whether `token` was issued to `holder` for `action` and is still good; it is gone once taken.
    private func take(_ token: String, holder: String, action: String) throws -> Bool {
        guard Tokens.isWellFormed(token) else { return false }
        return try database.write(.subjects) { db in
            try db.one("DELETE FROM form_confirmations WHERE token_hash = ? AND holder = ? AND action = ? AND expires_at > ? RETURNING 1",
                       [Tokens.digest(token), holder, action, clock().timeIntervalSince1970]) { _ in true } ?? false
        }
    }

    /// Fields typed as secrets are not written back into a page: the person types them again.
    static func isSecret(_ name: String) -> Bool { name.contains("password") || name == "code" }

    /// The catalog key that says what a route does ("unstated_city_posts" for
    /// `/city/{slug}/posts`): one per state-changing route, checked by a test over the router's table.
    static func descriptionKey(route: String) -> String {
        "unstated_" + route.split(separator: "/").filter { !$0.hasPrefix("{") }.joined(separator: "_").replacingOccurrences(of: "-", with: "_")
    }

    private func page(_ request: Request, _ context: AppContext, token: String) -> Response {
        let language = context.language
        var fields: [ConfirmPage.Field] = [.init(name: Self.field, value: token)]
        var retype: [ConfirmPage.Input] = []
        for (name, value) in context.form.fields where name != Self.field {
            if Self.isSecret(name) {
                if !retype.contains(where: { $0.name == name }) { retype.append(.init(name: name, label: pages.string(name == "code" ? "recovery_code" : name, language))) }
            } else {
                fields.append(.init(name: name, value: value))
            }
        }
        let files = Set(context.files.map(\.name)).sorted().map { ConfirmPage.Input(name: $0, label: pages.string("unstated_file_again", language)) }
        var details = [ConfirmPage.Detail(text: pages.string("unstated_why", language))]
        if !retype.isEmpty || !files.isEmpty { details.append(.init(text: pages.string("unstated_type_again", language))) }
        let heading = pages.string(request.route.map(Self.descriptionKey) ?? "confirm_heading", language)
        let view = ConfirmPage(layout: pages.layout(context, title: heading), heading: heading,
                               quote: context.form["body"].flatMap { $0.isEmpty ? nil : $0 }, details: details,
                               question: pages.string("unstated_question", language), action: request.path,
                               fields: fields, retype: retype, files: files,
                               button: pages.string("unstated_confirm", language), buttonClass: "primary", cancelHref: context.pageAddress ?? "/")
        var response = pages.html(context) { Templates.confirm(view, &$0, $1) }
        response.headers.set("Cache-Control", "no-store")
        return response
    }
}
