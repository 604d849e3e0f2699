import Foundation
import HTTPServer

/// Pages as a request sees them: the layout for its language, member and message, and the
/// response around a template's bytes.
extension Pages {
    /// The layout's view for this request.
    func layout(_ context: AppContext, title: String?) -> LayoutView {
        let language = context.language
        let siteName = string("site_name", language)
        var view = LayoutView(
            lang: language.rawValue, pageTitle: title.map { "\($0) · \(siteName)" } ?? siteName,
            languages: Language.allCases.map { option in
                LayoutView.LanguageOption(code: option.rawValue, label: string("language_name_\(option.rawValue)", language),
                                          href: Self.languageLink(context, option),
                                          current: option == language)
            })
        if let flash = context.flash {
            view.flash = string(flash.key, language, ["user": flash.username ?? ""])
            let undo: [Flash.Kind: String] = [.blocked: "unblock", .muted: "unmute"]
            if let action = undo[flash.kind], let username = flash.username {
                view.undoAction = "/users/\(username)/\(action)"
                if context.request.method == "GET" { view.here = context.request.target }
            }
        }
        view.creditsOpenMeteo = weatherSources.contains("open-meteo")
        view.creditsKMA = weatherSources.contains("kma")
        view.creditsDemo = weatherSources.contains("demo")
        if let user = context.user {
            view.currentUser = LayoutView.CurrentUser(username: user.username, displayName: user.displayName, isAdmin: user.isAdmin,
                                                      unread: context.unreadNotices, reportsWaiting: context.reportsWaiting,
                                                      detectsTimeZone: user.timeZoneUnset)
        } else {
            // The page to come back to, without `lang` (the language is the page's, in its cookie
            // too): a kept guest page reached as `/city/seoul?lang=ko` and as `/city/seoul` with a
            // `ko` cookie is one page, and both come back to the same address.
            let here = Self.signInTarget(context)
            view.signInHref = "/login?next=" + percentEncode(here)
            view.signUpHref = "/signup?next=" + percentEncode(here)
        }
        return view
    }

    /// Where signing in comes back to: this page without `lang`, or home from the sign-in pages.
    static func signInTarget(_ context: AppContext) -> String {
        context.request.method == "GET" && !context.request.path.hasPrefix("/login") && !context.request.path.hasPrefix("/signup")
            ? url(context.request.path, context.query, settingQuery: "lang", to: nil) : "/"
    }

    /// An HTML response whose body a compiled template writes, in the request's language.
    func html(_ context: AppContext, status: HTTPStatus = .ok, _ template: (inout HTML, Strings) -> Void) -> Response {
        .html(renderer.page(context.language, template), for: context.request, status: status)
    }

    /// The current page in another language (a GET address even when a POST showed the page).
    static func languageLink(_ context: AppContext, _ language: Language) -> String {
        guard let page = context.pageAddress else { return url(context.request.path, context.query, settingQuery: "lang", to: language.rawValue) }
        return localPath(page) + "?lang=" + language.rawValue
    }
}
