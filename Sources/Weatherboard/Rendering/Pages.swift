import Foundation
import HTTPServer

/// Builds complete pages: the layout's view for a request, and the response around a compiled
/// template's bytes.
public struct Pages: Sendable {
    public let renderer: Renderer
    /// The ids of the weather providers this site asks (`open-meteo`, `kma`, `demo`), for the
    /// footer's credits.
    public var weatherSources: Set<String> = []

    public init(renderer: Renderer, weatherSources: Set<String> = []) {
        self.renderer = renderer
        self.weatherSources = weatherSources
    }

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
            let here = context.request.method == "GET" && !context.request.path.hasPrefix("/login")
                && !context.request.path.hasPrefix("/signup") ? Self.url(context.request, settingQuery: "lang", to: nil) : "/"
            view.signInHref = "/login?next=" + percentEncode(here)
            view.signUpHref = "/signup?next=" + percentEncode(here)
        }
        return view
    }

    /// An HTML response whose body a compiled template writes, in the request's language.
    func html(_ context: AppContext, status: HTTPStatus = .ok, _ template: (inout HTML, Strings) -> Void) -> Response {
        .html(renderer.page(context.language, template), for: context.request, status: status)
    }

    public func string(_ key: String, _ language: Language, _ arguments: [String: String] = [:]) -> String {
        renderer.localization.string(key, language, arguments)
    }

    /// A length of time in words, rounded to the unit that reads naturally ("3 min", "2 h",
    /// "4 days"), cut down to the unit; never less than a minute.
    func span(_ seconds: Double, _ language: Language) -> String {
        // Whole seconds first (clamped, NaN as 0): a span from stored times cannot trap.
        let span = max(0, Int(clampedSeconds: seconds))
        return span < 3600 ? string("span_minutes", language, ["n": String(max(1, span / 60))])
            : span < 172_800 ? string("span_hours", language, ["n": String(span / 3600)])
            : string("span_days", language, ["n": String(span / 86_400)])
    }

    /// The string for `key` cut at one placeholder (see `Localization.split`).
    func split(_ key: String, _ language: Language, around hole: String,
               _ arguments: [String: String] = [:]) -> (before: String, after: String) {
        renderer.localization.split(key, language, around: hole, arguments)
    }

    /// The request's path and query with one query item replaced (used by the language switch),
    /// always a path on this site: `//evil.example/x` must not become a link to another host.
    static func url(_ request: Request, settingQuery name: String, to value: String?) -> String {
        var url = localPath(request.path)
        let kept = request.query == nil ? [] : ((try? request.queryItems())?.fields ?? []).filter { $0.name != name }
        let items = kept + (value.map { [(name, $0)] } ?? [])
        for (separator, item) in zip(["?"] + repeatElement("&", count: max(0, items.count - 1)), items) {
            url += separator
            url += percentEncode(item.name)
            url += "="
            url += percentEncode(item.value)
        }
        return url
    }

    /// The current page in another language (a GET address even when a POST showed the page).
    static func languageLink(_ context: AppContext, _ language: Language) -> String {
        guard let page = context.pageAddress else { return url(context.request, settingQuery: "lang", to: language.rawValue) }
        return localPath(page) + "?lang=" + language.rawValue
    }

    /// `path` with its leading slashes and backslashes (which browsers read as slashes) made one `/`.
    static func localPath(_ path: String) -> String {
        "/" + path.drop { $0 == "/" || $0 == "\\" }
    }
}

/// Percent-encodes everything but RFC 3986 unreserved characters (`A-Z a-z 0-9 - . _ ~`), byte by
/// byte over UTF-8 (Foundation's `addingPercentEncoding` bridged through `NSString` on every page).
func percentEncode(_ text: String) -> String {
    let hexDigits: StaticString = "0123456789ABCDEF"
    var encoded: [UInt8] = []
    encoded.reserveCapacity(text.utf8.count)
    for byte in text.utf8 {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            encoded.append(byte)
        default:
            encoded.append(UInt8(ascii: "%"))
            encoded.append(hexDigits.utf8Start[Int(byte >> 4)])
            encoded.append(hexDigits.utf8Start[Int(byte & 0x0F)])
        }
    }
    return String(decoding: encoded, as: UTF8.self)
}
