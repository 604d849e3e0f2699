import Foundation
import HTTPServer

/// Renders full pages inside the layout: adds what every page shows (language switch, title)
/// to a handler's view data.
public struct Pages: Sendable {
    public let renderer: Renderer

    /// A complete HTML response for `template`.
    public func page(_ template: String, _ context: AppContext, title: String? = nil, status: HTTPStatus = .ok,
                     _ data: [String: Any] = [:]) -> Response {
        var view = data
        let language = context.language
        view["pageTitle"] = title.map { "\($0) · \(string("site_name", language))" } ?? string("site_name", language)
        view["csrfToken"] = context.csrfToken
        if let user = context.user {
            view["currentUser"] = ["username": user.username, "displayName": user.displayName, "isAdmin": user.isAdmin]
        } else {
            let here = context.request.method == "GET" && !context.request.path.hasPrefix("/login")
                && !context.request.path.hasPrefix("/signup") ? context.request.target : "/"
            view["signInHref"] = "/login?next=" + percentEncode(here)
            view["signUpHref"] = "/signup?next=" + percentEncode(here)
        }
        view["languages"] = Language.allCases.map { option -> [String: Any] in
            ["code": option.rawValue, "label": string("language_name_\(option.rawValue)", language),
             "href": Self.url(context.request, settingQuery: "lang", to: option.rawValue), "current": option == language]
        }
        return .html(renderer.render(template, language: language, view), status: status)
    }

    public func string(_ key: String, _ language: Language, _ arguments: [String: String] = [:]) -> String {
        renderer.localization.string(key, language, arguments)
    }

    /// The request's path and query with one query item replaced (used by the language switch).
    static func url(_ request: Request, settingQuery name: String, to value: String) -> String {
        var items = ((try? request.queryItems())?.fields ?? []).filter { $0.name != name }
        items.append((name, value))
        return request.path + "?" + items.map { "\(percentEncode($0.name))=\(percentEncode($0.value))" }.joined(separator: "&")
    }
}

private let unreservedCharacters = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~")

/// Percent-encodes everything but RFC 3986 unreserved characters.
func percentEncode(_ text: String) -> String {
    text.addingPercentEncoding(withAllowedCharacters: unreservedCharacters) ?? ""
}
