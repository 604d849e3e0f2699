import HTTPServer
import Logging

/// Turns every error thrown by a handler into a page in the site's style and the visitor's
/// language, keeping its status. Unknown errors are logged and shown as a plain 500.
struct ErrorPages {
    let pages: Pages
    let logger: Logger

    func middleware(_ request: Request, _ context: AppContext, _ next: Router<AppContext>.Handler) throws -> Response {
        do {
            return try next(request, context)
        } catch let moved as Lane.Moved {
            throw moved // not an error: the request runs again on the main lane
        } catch {
            return response(for: error, context)
        }
    }

    func response(for error: Error, _ context: AppContext) -> Response {
        if let redirect = error as? Redirect { return .redirect(to: redirect.location) }
        if let banned = error as? BannedError {
            let language = context.language
            return page(context, status: .forbidden, heading: pages.string("banned_title", language),
                        ban: banned.ban.notice(pages, language))
        }
        let http: HTTPError
        if let known = error as? HTTPError {
            http = known
        } else if let database = error as? SQLError, database.isTemporary {
            // The site's passing trouble: one line in the log, and an answer that says to come back.
            logger.error("\(context.request.method) \(context.request.pathForLogs) \(database.kind == .full ? 507 : 503): database \(database.kind): \(database.message)")
            http = Self.temporaryFailure(database)
        } else {
            logger.error("\(context.request.method) \(context.request.pathForLogs) failed: \(String(reflecting: error))")
            http = HTTPError(.internalServerError)
        }
        let code = http.status.code
        let key = [400, 403, 404, 405, 413, 429, 503, 507].contains(code) ? "error_\(code)" : (code >= 500 ? "error_500" : "error_400")
        let language = context.language
        var response = page(context, status: http.status, heading: pages.string("\(key)_title", language),
                            message: pages.string("\(key)_text", language), kept: Self.keptText(after: error, context))
        for field in http.headers { response.headers.add(field.name, field.value) }
        return response
    }

    /// 503 with `Retry-After` for a database that cannot be reached or cannot answer now; 507 for
    /// a full disk (nothing was written: each write is one transaction).
    static func temporaryFailure(_ error: SQLError) -> HTTPError {
        error.kind == .full
            ? HTTPError(.insufficientStorage, headers: HTTPHeaders([("Retry-After", "60")]))
            : HTTPError(.serviceUnavailable, headers: HTTPHeaders([("Retry-After", "5")]))
    }

    /// A form's page given back on temporary trouble: nothing was written (one transaction), so
    /// what was typed goes back in the form with the reason (`render` gets the catalog key of the
    /// text), with the status and `Retry-After` of the error page.
    static func formKept(after error: SQLError, _ request: Request, logger: Logger,
                         _ render: (_ key: String, _ status: HTTPStatus) throws -> Response) rethrows -> Response {
        let failure = temporaryFailure(error)
        // Answered here rather than by the error middleware, which logs the others.
        logger.error("\(request.method) \(request.pathForLogs) \(failure.status.code), text kept: database \(error.kind): \(error.message)")
        var response = try render(error.kind == .full ? "error_507_text" : "error_503_text", failure.status)
        for field in failure.headers { response.headers.add(field.name, field.value) }
        return response
    }

    /// What a person typed, when the database failed before their form could even be read back
    /// into its page (the session could not be read): given back to copy, with the way back.
    private static func keptText(after error: Error, _ context: AppContext) -> KeptText? {
        guard let database = error as? SQLError, database.isTemporary, context.request.method == "POST",
              let text = (try? context.request.formBody())?["body"], !text.isEmpty else { return nil }
        return KeptText(text: text, returnTo: context.pageAddress ?? "/")
    }

    private func page(_ context: AppContext, status: HTTPStatus, heading: String, message: String = "",
                      ban: BanNotice? = nil, kept: KeptText? = nil) -> Response {
        var view = ErrorPage(layout: pages.layout(context, title: heading), status: status.code, heading: heading,
                             message: message, ban: ban)
        view.kept = kept
        return pages.html(context, status: status) { Templates.error(view, &$0, $1) }
    }
}

/// An error page's view.
struct ErrorPage {
    var layout: LayoutView
    var status: Int
    var heading: String
    var message: String
    /// For a banned person's refused action: the ban instead of `message`.
    var ban: BanNotice?
    /// A refused form's text, when its own page could not be shown.
    var kept: KeptText?
}

struct KeptText {
    var text: String
    var returnTo: String
}
