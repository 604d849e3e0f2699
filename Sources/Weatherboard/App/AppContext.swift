import HTTPServer

/// What the application knows about one request, worked out once before any handler runs.
public final class AppContext: RequestContext {
    public let request: Request
    /// The page language: `?lang=`, else the `lang` cookie, else `Accept-Language`, else English.
    public let language: Language
    /// Set when `?lang=` chose the language, so that the choice is remembered in a cookie.
    let languageChosenByQuery: Bool

    public init(request: Request) {
        self.request = request
        let query = try? request.queryItems()
        if let code = query?["lang"], let language = Language(rawValue: code) {
            self.language = language
            languageChosenByQuery = true
        } else if let code = request.cookies[AppContext.languageCookie], let language = Language(rawValue: code) {
            self.language = language
            languageChosenByQuery = false
        } else {
            language = request.headers["Accept-Language"].flatMap(Language.preferred(acceptLanguage:)) ?? .en
            languageChosenByQuery = false
        }
    }

    static let languageCookie = "lang"
}
