import HTTPServer
import HTTPMultipart

/// What the application knows about one request, worked out once before any handler runs:
/// language here; identity and form by `Identity`'s middleware.
public final class AppContext: RequestContext {
    public let request: Request
    /// The page language: `?lang=`, else the `lang` cookie, else `Accept-Language`, else English.
    public let language: Language
    /// Set when `?lang=` chose the language, so that the choice is remembered in a cookie.
    let languageChosenByQuery: Bool
    /// The signed-in person, if any.
    public internal(set) var user: User?
    /// The ban in force for the signed-in person, if any.
    public internal(set) var ban: Ban?
    /// The signed-in person's unread notices.
    public internal(set) var unreadNotices = 0
    /// For an admin, the posts whose reports wait (the header's `data-reports-waiting`).
    public internal(set) var reportsWaiting = 0
    /// The session's digest (to revoke it at sign-out or rotation).
    var sessionTokenHash: String?
    /// The session's own secret (never in a page): what the moderation forms' proof is derived from.
    var csrfSecret = ""
    /// A guest's cookie, to bind a confirmation (`UnstatedPosts`) to the browser that asked for it.
    var guestBinding: String?
    /// A guest cookie made for this request, to be set on its response.
    var newGuestToken: String?
    /// The decoded form of a POST (checked for its origin before any handler sees it).
    public internal(set) var form = URLEncodedForm()
    /// The files of a multipart POST (a photo), by field name.
    var files: [MultipartForm.File] = []
    /// The address of the page this response shows, for links that reload it (the language
    /// switch): the request's own for a GET; for a form's POST answered with a page (a refused
    /// form), the nearest page above the form's address (`/city/seoul` for `/city/seoul/posts`).
    /// Worked out on first use: most POSTs redirect and never need it.
    var pageAddress: String? {
        if foundPageAddress == nil, let find = findPageAddress { foundPageAddress = find() }
        return foundPageAddress
    }
    /// How to find `pageAddress` (set by `Middleware.pageAddress` for requests other than GET).
    var findPageAddress: (() -> String)?
    private var foundPageAddress: String?
    /// The confirmation this request brought (shown by the page's layout, then cleared).
    var flash: Flash?
    /// The confirmation of this request's action, for the page its redirect leads to.
    var nextFlash: Flash?

    /// The query string's items, read once for the request (nil when it has none or cannot be
    /// read: the handler that needs it answers 400 itself).
    let query: URLEncodedForm?

    /// A list's cursor from the query string read with the context (`Request.queryCursor`).
    func queryCursor(_ name: String) throws -> Int64? {
        guard let query else { return try request.queryCursor(name) } // none, or 400 for one that cannot be read
        return try Request.cursor(query[name], name)
    }

    public init(request: Request) {
        self.request = request
        let query = request.query == nil ? nil : try? request.queryItems()
        self.query = query
        if let code = query?["lang"], let language = Language(rawValue: code) {
            self.language = language
            languageChosenByQuery = true
        } else if let code = request.cookie(AppContext.languageCookie), let language = Language(rawValue: code) {
            self.language = language
            languageChosenByQuery = false
        } else {
            language = request.headers["Accept-Language"].flatMap(Language.preferred(acceptLanguage:)) ?? .en
            languageChosenByQuery = false
        }
    }

    static let languageCookie = "lang"

    /// Where a form asked to go back to (`return_to`, if it is a path on this site), else `fallback`.
    func returnPath(or fallback: String) -> String {
        safeReturnPath(form["return_to"] ?? fallback)
    }

    /// The signed-in user, or a 303 to the sign-in page that comes back here.
    func requireUser() throws -> User {
        guard let user else {
            throw Redirect(to: "/login?next=" + percentEncode(request.method == "GET" ? request.target : "/"))
        }
        return user
    }

    /// The signed-in user who may change things: not banned.
    func requireActiveUser() throws -> User {
        let user = try requireUser()
        if let ban { throw BannedError(ban: ban) }
        return user
    }
}

/// Thrown to answer with a redirect from deep inside a handler (e.g. "sign in first").
struct Redirect: Error {
    let location: String
    init(to location: String) { self.location = location }
}

extension Request {
    /// The path's `{id}`, as a row id; 404 for anything else (no such row can exist).
    func idParameter() throws -> Int64 {
        // One address per thing: `/posts/+1` and `/posts/01` are not `/posts/1`.
        guard let raw = parameters["id"], let id = Int64(raw), String(id) == raw else { throw HTTPError(.notFound) }
        return id
    }

    /// A list's cursor from the query string (`?before=`, `?after=`: a row id): nil when absent,
    /// 400 when it is not an id.
    func queryCursor(_ name: String) throws -> Int64? { try Self.cursor(queryItems()[name], name) }

    static func cursor(_ value: String?, _ name: String) throws -> Int64? {
        try value.map { value in
            guard let id = Int64(value) else { throw HTTPError(.badRequest, message: "\(name) must be an id") }
            return id
        }
    }

    /// A whole number from the query string: `fallback` when absent, 400 when it is not a
    /// number within `range` (so that no arithmetic on it can overflow).
    func queryNumber(_ name: String, default fallback: Int, in range: ClosedRange<Int>) throws -> Int {
        guard let text = try queryItems()[name] else { return fallback }
        guard let number = Int(text), range.contains(number) else {
            throw HTTPError(.badRequest, message: "\(name) must be a whole number from \(range.lowerBound) to \(range.upperBound).")
        }
        return number
    }
}
