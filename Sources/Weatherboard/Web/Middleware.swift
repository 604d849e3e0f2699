import Foundation
import HTTPServer

/// Middleware every request passes through.
enum Middleware {
    /// Pages declare their policy once here: scripts, styles and images only from our own
    /// origin, no inline code at all (colours computed from temperatures are classes in a
    /// stylesheet, not `style` attributes), no framing, forms only to ourselves. `blob:` images
    /// are the post form's preview of a photo chosen on this device.
    static let contentSecurityPolicy = [
        "default-src 'self'", "script-src 'self'", "style-src 'self'", "img-src 'self' data: blob:",
        "object-src 'none'", "base-uri 'none'", "form-action 'self'", "frame-ancestors 'none'",
    ].joined(separator: "; ")

    /// Every request's database work has a deadline (a 503 past it), counted from its arrival:
    /// a request that waited its time out in the workers' queue (behind others waiting on a
    /// frozen database) is answered 503 at once rather than given 2 s more.
    static func databaseDeadline(_ request: Request, _ context: AppContext, _ next: Router<AppContext>.Handler) throws -> Response {
        let left = DatabaseDeadline.allowed - Double(request.millisecondsSinceArrival) / 1000
        guard left > 0 else { throw HTTPError(.serviceUnavailable, headers: HTTPHeaders([("Retry-After", "5")])) }
        return try DatabaseDeadline.$current.withValue(Date().addingTimeInterval(left)) { try next(request, context) }
    }

    static func securityHeaders(_ request: Request, _ context: AppContext,
                                _ next: Router<AppContext>.Handler) throws -> Response {
        var response = try next(request, context)
        secure(&response, signedIn: context.user != nil, pathHoldsSecret: request.redactedPath != nil)
        return response
    }

    /// The headers of `securityHeaders`, for a response made without the router (answered on
    /// the event loop: `SharedReplies.immediateResponse`).
    /// A page whose address holds a secret (an e-mailed link's token) sends no `Referer` at all,
    /// not even to the site's own style sheet and scripts.
    static func secure(_ response: inout Response, signedIn: Bool, pathHoldsSecret: Bool = false) {
        response.headers.set("X-Content-Type-Options", "nosniff")
        // A signed-in person's pages (their name, their token) are never kept by a shared or
        // browser cache; guests' pages say their own policy.
        if signedIn && response.headers["Cache-Control"] == nil {
            response.headers.set("Cache-Control", "no-store")
        }
        if response.headers["Content-Type"]?.hasPrefix("text/html") == true {
            response.headers.set("Content-Security-Policy", contentSecurityPolicy)
            response.headers.set("Referrer-Policy", pathHoldsSecret ? "no-referrer" : "same-origin")
            response.headers.set("X-Frame-Options", "DENY")
        }
    }

    /// For a POST, says how to find the page its links should reload (see `AppContext.pageAddress`):
    /// the form's address, or the nearest one above it that answers GET. Found only if a page is
    /// rendered (a refused form), in one walk of the routes.
    static func pageAddress(nearestPage: @escaping @Sendable (String) -> String) -> Router<AppContext>.Middleware {
        { request, context, next in
            if request.method != "GET" && request.method != "HEAD" {
                let path = request.path
                context.findPageAddress = { nearestPage(path) }
            }
            return try next(request, context)
        }
    }

    /// Where replicas serve reads: a GET's reads may go to one, and what a request writes is
    /// seen by its own later reads and, through a cookie on any node, by the client's next
    /// requests until every replica has it (`ReplicaSet`). The cookie holds a position in the
    /// database's log, nothing of the person.
    static func readYourWrites(replicas: ReplicaSet, secure: Bool) -> Router<AppContext>.Middleware {
        let lifetime = Int(replicas.maximumLag.rounded(.up)) + 10
        return { request, context, next in
            let carried = request.cookie(RequestReads.cookieName).flatMap { UInt64($0) } ?? 0
            let reads = RequestReads(mayUseReplica: request.method == "GET" || request.method == "HEAD", floor: carried)
            var response = try RequestReads.$current.withValue(reads) { try next(request, context) }
            let wrote = reads.wrote.load(ordering: .relaxed)
            if wrote > 0 {
                // Never lower than what the client carried: a slower response to an older write
                // must not take back a newer one's.
                response.setCookie(SetCookie(name: RequestReads.cookieName, value: String(max(wrote, carried)), maxAge: lifetime, secure: secure))
            }
            return response
        }
    }

    /// Remembers a language chosen with `?lang=` for a year.
    static func languageCookie(secure: Bool) -> Router<AppContext>.Middleware {
        { request, context, next in
            var response = try next(request, context)
            if context.languageChosenByQuery {
                response.setCookie(SetCookie(name: AppContext.languageCookie, value: context.language.rawValue,
                                             maxAge: 365 * 24 * 3600, secure: secure))
            }
            return response
        }
    }
}
