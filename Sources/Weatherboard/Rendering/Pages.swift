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
    static func url(_ path: String, _ query: URLEncodedForm?, settingQuery name: String, to value: String?) -> String {
        var url = localPath(path)
        let kept = (query?.fields ?? []).filter { $0.name != name }
        let items = kept + (value.map { [(name, $0)] } ?? [])
        for (separator, item) in zip(["?"] + repeatElement("&", count: max(0, items.count - 1)), items) {
            url += separator
            url += percentEncode(item.name)
            url += "="
            url += percentEncode(item.value)
        }
        return url
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
