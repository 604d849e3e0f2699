import Foundation

/// "Wed 25 Nov" / "11월 25일 (수)": a day card's and the strip's label. The names come from the
/// language's `DateFormatter` once, at first use; each label is then put together from the date's
/// numbers (a formatter per label was the largest cost of rendering the weather part).
enum DayLabels {
    private struct Names {
        let weekdays: [String] // Sunday first
        let months: [String]
    }

    private static let names: [Language: Names] = {
        var names: [Language: Names] = [:]
        let utc = TimeZone.gmt
        for language in Language.allCases {
            // 2023-01-01 was a Sunday; noon avoids any question of zones.
            let sunday = Date(timeIntervalSince1970: 1_672_574_400)
            let weekdays = (0..<7).map {
                DateFormatting.string(sunday.addingTimeInterval(Double($0) * 86_400), pattern: "E", language: language, timeZone: utc)
            }
            let months = (1...12).map { month in
                DateFormatting.string(sunday.addingTimeInterval(Double((month - 1) * 31) * 86_400), pattern: "MMM", language: language, timeZone: utc)
            }
            names[language] = Names(weekdays: weekdays, months: months)
        }
        return names
    }()

    static func label(_ date: CivilDate, _ language: Language) -> String {
        guard let names = names[language] else { return date.string }
        switch language {
        case .ko: return "\(dayMonth(month: date.month, day: date.day, language)) (\(names.weekdays[date.weekday]))"
        case .en: return "\(names.weekdays[date.weekday]) \(dayMonth(month: date.month, day: date.day, language))"
        }
    }

    /// "26 Nov" / "11월 26일": a calendar date of no year in particular (a normal's).
    static func dayMonth(month: Int, day: Int, _ language: Language) -> String {
        guard let names = names[language], (1...12).contains(month) else { return "\(month)-\(day)" }
        switch language {
        case .ko: return "\(month)월 \(day)일"
        case .en: return "\(day) \(names.months[month - 1])"
        }
    }
}
