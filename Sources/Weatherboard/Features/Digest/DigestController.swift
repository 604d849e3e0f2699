import Foundation
import HTTPServer

/// `/digest/unsubscribe/{token}`: the link each digest carries. Opened, it asks (a mail
/// scanner that follows links changes nothing); POSTed, by its button or by the member's mail
/// provider (RFC 8058's one-click, with no session, origin or form token: the token is the
/// authority), it turns the digest off.
struct DigestController {
    let pages: Pages
    let database: AppDatabase
    let clock: @Sendable () -> Date

    /// How long a digest's link works.
    static let linksKeptFor: TimeInterval = 90 * 86_400
    static let keeping = Keeping("unsubscribe_links", "created_at", for: linksKeptFor)

    func addRoutes(to router: Router<AppContext>) {
        router.get("/digest/unsubscribe/{token}", ask)
        router.post("/digest/unsubscribe/{token}", unsubscribe)
    }

    /// The member a live link is for; nil for a link unknown or older than `linksKeptFor`.
    private func member(_ request: Request) throws -> (id: Int64, username: String)? {
        let token = request.parameters["token"] ?? ""
        guard Tokens.isWellFormed(token) else { return nil }
        // The primary's: the link may be opened a moment after it was mailed.
        return try database.readStatement(.current) { db in
            try db.one("""
                SELECT u.id, u.username FROM unsubscribe_links l JOIN users u ON u.id = l.user_id WHERE l.token_hash = ? AND l.created_at > ?
                """, [Tokens.digest(token), clock().addingTimeInterval(-Self.linksKeptFor)]) { ($0.int64(0), $0.string(1)) }
        }
    }

    func ask(_ request: Request, _ context: AppContext) throws -> Response {
        page(context, request, username: try member(request)?.username, done: false)
    }

    func unsubscribe(_ request: Request, _ context: AppContext) throws -> Response {
        guard let found = try member(request) else { return page(context, request, username: nil, done: false) }
        try database.write(.subjects) { try $0.execute("UPDATE users SET digest = 'off' WHERE id = ?", found.id) }  // one member's digest setting
        return page(context, request, username: found.username, done: true)
    }

    /// The question, the answer, or (410) that the link no longer works.
    private func page(_ context: AppContext, _ request: Request, username: String?, done: Bool) -> Response {
        let view = DigestUnsubscribePage(layout: pages.layout(context, title: pages.string("digest_title", context.language)),
                                         username: username ?? "", action: request.path, done: done, expired: username == nil)
        return pages.html(context, status: username == nil ? .gone : .ok) { Templates.digest_unsubscribe(view, &$0, $1) }
    }
}

struct DigestUnsubscribePage {
    var layout: LayoutView
    var username: String
    var action: String
    var done: Bool
    var expired: Bool
    var asks: Bool { !done && !expired }
}
