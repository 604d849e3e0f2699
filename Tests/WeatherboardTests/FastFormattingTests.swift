import Foundation
import Testing
@testable import Weatherboard

/// The weather part's numbers and dates without `String(format:)`, `Calendar` or a formatter per
/// label (issue 24 #3): each checked against Foundation, which stays the oracle.
@Suite struct FastFormattingTests {
    @Test func oneDecimalWritesWhatPercentPointOneFWrites() {
        var values: [Double] = [0, -0.0, 0.05, -0.05, 0.25, 0.35, 0.45, -0.04, 1e6, -1e6, 999_999.95, 12.0, -3.5, .nan, .infinity, -.infinity, 1e300]
        values += (-40_000...40_000).map { Double($0) / 1000 }
        var generator = SystemRandomNumberGenerator()
        values += (0..<20_000).map { _ in Double.random(in: -2_000...2_000, using: &generator) }
        var checked = 0
        for value in values {
            #expect(WeatherNumbers.oneDecimal(value) == String(format: "%.1f", value), "\(value)")
            checked += 1
        }
        #expect(checked == values.count && checked > 100_000)
    }

    @Test func datesAndTimesOfDayAreTheCalendarsInEveryKindOfZone() throws {
        let zones = ["Asia/Seoul", "America/New_York", "Asia/Kathmandu", "Pacific/Auckland", "Pacific/Chatham", "America/St_Johns",
                     "Europe/London", "Australia/Lord_Howe", "Pacific/Kiritimati", "Pacific/Pago_Pago", "UTC"]
        var checked = 0
        for name in zones {
            let zone = try #require(TimeZone(identifier: name))
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = zone
            let local = LocalCalendar(zone)
            // Every 97 minutes over three years, which lands on every hour, both sides of every DST change.
            var instant = Date(timeIntervalSince1970: 1_700_000_000)
            while instant.timeIntervalSince1970 < 1_795_000_000 {
                for offset in [-1, 0, 1, 5] {
                    let day = calendar.date(byAdding: .day, value: offset, to: instant)!
                    let c = calendar.dateComponents([.year, .month, .day], from: day)
                    let expected = String(format: "%04d-%02d-%02d", c.year!, c.month!, c.day!)
                    #expect(local.dateString(instant, offset: offset) == expected, "\(name) \(instant) \(offset)")
                }
                let c = calendar.dateComponents([.hour, .minute], from: instant)
                #expect(local.hourMinute(instant) == (c.hour!, c.minute!), "\(name) \(instant)")
                instant.addTimeInterval(97 * 60)
                checked += 1
            }
        }
        #expect(checked > 100_000)
    }

    @Test func dayLabelsAreTheFormattersLabelsInBothLanguages() throws {
        var checked = 0
        for language in Language.allCases {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: language == .ko ? "ko_KR" : "en_GB")
            formatter.timeZone = TimeZone(identifier: "UTC")
            formatter.dateFormat = language == .ko ? "M월 d일 (E)" : "EEE d MMM"
            for dayNumber in 19_000...19_800 { // 2022-01-08 … 2024-03-18: every weekday and month, a leap day
                let date = CivilDate(day: dayNumber)
                #expect(CivilDate(date.string) == date)
                let noon = Date(timeIntervalSince1970: Double(dayNumber) * 86_400 + 43_200)
                #expect(DayLabels.label(date, language) == formatter.string(from: noon), "\(date.string) \(language)")
                checked += 1
            }
        }
        #expect(checked == 2 * 801)
        #expect(CivilDate("2024-02-30") == nil && CivilDate("2024-13-01") == nil && CivilDate("soon") == nil)
        #expect(CivilDate("1969-12-31")?.weekday == 3 && CivilDate("2026-11-25")?.weekday == 3)
    }
}
