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
        let utc = TimeZone(identifier: "UTC")!
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
        case .ko: return "\(date.month)월 \(date.day)일 (\(names.weekdays[date.weekday]))"
        case .en: return "\(names.weekdays[date.weekday]) \(date.day) \(names.months[date.month - 1])"
        }
    }
}
