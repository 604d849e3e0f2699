import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Date text for pages. `DateFormatter`s cost far more to make than to use and are not safe to
/// share between threads, so each worker thread keeps its own, one per pattern, locale and zone.
enum DateFormatting {
    /// `2026-11-22T05:45:00Z`: for `<time datetime>`, feeds and logs.
    static func iso8601(_ date: Date) -> String {
        var t = time_t(fourDigitYears(date))
        var parts = tm()
        gmtime_r(&t, &parts)
        // Digits written straight into the string's storage: this runs for every post on every
        // page (no `String(format:)`, no intermediate array).
        return String(unsafeUninitializedCapacity: 20) { out in
            var position = 0
            func digits(_ value: Int32, _ count: Int) {
                var rest = max(0, value)
                for offset in stride(from: count - 1, through: 0, by: -1) {
                    out[position + offset] = 0x30 + UInt8(truncatingIfNeeded: rest % 10)
                    rest /= 10
                }
                position += count
            }
            func separator(_ byte: UInt8) {
                out[position] = byte
                position += 1
            }
            digits(parts.tm_year + 1900, 4); separator(0x2D)
            digits(parts.tm_mon + 1, 2); separator(0x2D)
            digits(parts.tm_mday, 2); separator(0x54)
            digits(parts.tm_hour, 2); separator(0x3A)
            digits(parts.tm_min, 2); separator(0x3A)
            digits(parts.tm_sec, 2); separator(0x5A)
            return position
        }
    }

    /// Seconds since 1970, within what a four-digit year says (0000-01-01 to 9999-12-31): a stored
    /// time can be anything a hand edit wrote, and a Double past Int's range traps as it converts.
    static func fourDigitYears(_ date: Date) -> Int {
        min(max(Int(clampedSeconds: date.timeIntervalSince1970.rounded(.down)), -62_167_219_200), 253_402_300_799)
    }

    /// "23 Nov 2026 05:45 UTC" / "2026년 11월 23일 05:45 UTC": an instant for people in any zone
    /// (moderation records, ban notices).
    static func utcMinute(_ date: Date, language: Language) -> String {
        string(date, pattern: language == .ko ? "yyyy년 M월 d일 HH:mm 'UTC'" : "d MMM yyyy HH:mm 'UTC'", language: language)
    }

    /// "27 Nov 14:05" / "11월 27일 14:05": when a post was written, in its city's time. It reads
    /// the same whenever the page is made, so a kept board stays true; a page's script words it
    /// relative to the reader's clock ("5 min ago").
    static func localMinute(_ date: Date, in zone: TimeZone, language: Language) -> String {
        let local = LocalCalendar(zone)
        let day = CivilDate(day: local.localDayNumber(date))
        let time = local.clockString(date)
        switch language {
        case .ko: return "\(day.month)월 \(day.day)일 " + time
        case .en: return "\(day.day) " + monthAbbreviations[(day.month - 1) % 12] + " " + time
        }
    }

    private static let monthAbbreviations = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

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
