import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Date text for pages. `DateFormatter`s cost far more to make than to use and are not safe to
/// share between threads, so each worker thread keeps its own, one per pattern, locale and zone.
enum DateFormatting {
    /// `2026-11-22T05:45:00Z`: for `<time datetime>`, feeds and logs.
    static func iso8601(_ date: Date) -> String {
        var t = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&t, &parts)
        return String(format: "%04d-%02d-%02dT%02d:%02d:%02dZ", parts.tm_year + 1900, parts.tm_mon + 1, parts.tm_mday,
                      parts.tm_hour, parts.tm_min, parts.tm_sec)
    }

    /// `date` with a fixed pattern (`EEE d MMM`) or a style, in a language and time zone.
    static func string(_ date: Date, pattern: String? = nil, style: DateFormatter.Style = .none, language: Language,
                       timeZone: TimeZone = .gmt) -> String {
        let key = "wb.date|\(pattern ?? "style\(style.rawValue)")|\(language.rawValue)|\(timeZone.identifier)"
        let cache = Thread.current.threadDictionary
        if let formatter = cache[key] as? DateFormatter { return formatter.string(from: date) }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: language == .ko ? "ko_KR" : "en_GB")
        formatter.timeZone = timeZone
        if let pattern { formatter.dateFormat = pattern } else { formatter.dateStyle = style }
        cache[key] = formatter
        return formatter.string(from: date)
    }
}
