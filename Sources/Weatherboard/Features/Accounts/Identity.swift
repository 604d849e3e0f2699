import Foundation
import HTTPServer
import HTTPMultipart

/// Fills the request context with the signed-in person, and refuses any POST that comes from
/// another site (403, nothing changes) by the browser's own headers (`RequestSource`); one from a
/// client that sends neither is confirmed first (`UnstatedPosts`).
struct Identity {
    let sessions: SessionStore
    let unstated: UnstatedPosts
    let secureCookies: Bool
    let clock: @Sendable () -> Date
    /// Whether a handler exists for the request; a POST nobody handles is the router's 404/405.
    let routeExists: @Sendable (Request) -> Bool
    /// A guest's cookie, set only when a confirmation needs binding to their browser.
    static let guestCookie = "csrf"

    /// Paths that never show forms or personal data: no session look-up for them.
    static let anonymousPrefixes = ["/static/", "/healthz", "/palette.css", "/favicon.ico", "/manifest.webmanifest", "/sw.js", "/offline", "/photos/", "/shared/"]

    /// Addresses that carry their own authority, a secret token, and only turn something off:
    /// RFC 8058's one-click unsubscribe is POSTed by mail providers, with neither `Origin` nor
    /// a browser to confirm with, so any origin may POST them.
    static let tokenAuthorisedPrefixes = ["/digest/unsubscribe/"]

    /// Whether a POST to `path` is judged by its own secret rather than where it comes from: the
    /// unsubscribe links above, and an OpenID provider's callback, which Apple POSTs from its own
    /// site (`form_post`); its single-use `state`, bound to the browser's cookie, is its authority.
    static func isTokenAuthorised(_ path: String) -> Bool {
        tokenAuthorisedPrefixes.contains(where: { path.hasPrefix($0) })
            || (path.hasPrefix("/login/oidc/") && path.hasSuffix("/callback") && path.split(separator: "/").count == 4)
    }

    func middleware(_ request: Request, _ context: AppContext, _ next: Router<AppContext>.Handler) throws -> Response {
        // Anything but GET and HEAD may change state (POST, and DELETE for push subscriptions).
        var changesState = request.method != "GET" && request.method != "HEAD"
        if changesState && Self.isTokenAuthorised(request.path) {
            try Self.readForm(request, context)
            changesState = false
        }
        if !changesState && Self.anonymousPrefixes.contains(where: { request.path.hasPrefix($0) }) {
            return try next(request, context)
        }
        if let token = request.cookie(SessionStore.cookieName), let session = try sessions.find(token: token, now: clock()) {
            context.user = session.user
            context.sessionTokenHash = session.tokenHash
            context.csrfSecret = session.csrfSecret
            context.ban = session.ban
            context.unreadNotices = session.unread
            context.reportsWaiting = session.reportsWaiting
        } else if let guest = request.cookie(Self.guestCookie), Tokens.isWellFormed(guest) {
            context.guestBinding = guest
        }
        if changesState && routeExists(request) {
            switch RequestSource(request) {
            // A form's fields, or nothing for a script's JSON (read by its handler).
            case .thisSite: try Self.readForm(request, context)
            case .elsewhere: throw HTTPError(.forbidden, message: "cross-origin")
            case .unstated:
                try Self.readForm(request, context)
                if var confirmation = try unstated.answer(request, context) {
                    if let token = context.newGuestToken {
                        confirmation.setCookie(SetCookie(name: Self.guestCookie, value: token, maxAge: Int(UnstatedPosts.validFor), secure: secureCookies))
                    }
                    return confirmation
                }
            }
        }
        return try next(request, context)
    }

    /// A form's fields (URL-encoded, or multipart with its files); nothing for a script's JSON.
    static func readForm(_ request: Request, _ context: AppContext) throws {
        if request.isMultipartForm {
            let form = try request.multipartBody()
            context.form = form.fields
            context.files = form.files
        } else if request.isForm {
            context.form = try request.formBody()
        } else {
            context.form = URLEncodedForm()
        }
    }

    /// The cookie that carries a session token.
    func sessionCookie(_ token: String) -> SetCookie {
        SetCookie(name: SessionStore.cookieName, value: token, maxAge: Int(sessions.idleLimit), secure: secureCookies)
    }
}

/// A relative path to return to after signing in; anything else (other hosts, `//host`,
/// backslashes, control characters) becomes `/`.
func safeReturnPath(_ candidate: String?) -> String {
    guard let path = candidate, path.hasPrefix("/"), !path.hasPrefix("//"), !path.hasPrefix("/\\"),
          !path.unicodeScalars.contains(where: { $0.value < 0x20 || $0 == "\\" || $0.value == 0x7F })
    else { return "/" }
    return path
}
