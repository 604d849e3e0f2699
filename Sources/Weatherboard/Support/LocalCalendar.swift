import Foundation

/// Local calendar dates of a city.
public struct LocalCalendar: Sendable {
    public let timeZone: TimeZone

    public init(_ timeZone: TimeZone) { self.timeZone = timeZone }

    private var calendar: Calendar {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        return calendar
    }

    /// `yyyy-MM-dd` of the local day `offset` days from the one containing `date`. Arithmetic on
    /// day numbers (the zone's offset at `date`, then the civil calendar): a page asks for a dozen
    /// of these, and `Calendar` with `String(format:)` cost more than the rest of the part.
    public func dateString(_ date: Date, offset: Int = 0) -> String {
        let civil = CivilDate(day: localDayNumber(date) + offset)
        return civil.string
    }

    /// Days since 1970-01-01 of the local day containing `date`.
    func localDayNumber(_ date: Date) -> Int {
        Int((localSeconds(date) / 86_400).rounded(.down))
    }

    /// Seconds since 1970-01-01 00:00 local time, clamped to ±10,000 years so that no date can trap.
    private func localSeconds(_ date: Date) -> Double {
        let seconds = date.timeIntervalSince1970 + Double(timeZone.secondsFromGMT(for: date))
        return seconds.isFinite ? min(max(seconds, -3.2e11), 3.2e11) : 0
    }

    /// `yyyy-MM-ddTHH:mm` of `date` here: the form providers give local times in.
    public func minuteString(_ date: Date) -> String {
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute], from: date)
        return "\(c.year ?? 0)-\(Self.twoDigits(c.month))-\(Self.twoDigits(c.day))T\(Self.twoDigits(c.hour)):\(Self.twoDigits(c.minute))"
    }

    /// 0–99 with a leading zero (`07`).
    static func twoDigits(_ value: Int?) -> String {
        let value = value ?? 0
        return value < 10 && value >= 0 ? "0\(value)" : String(value)
    }

    /// "14:20": the local time of `date`, to the minute.
    public func clockString(_ date: Date) -> String {
        let (hour, minute) = hourMinute(date)
        return Self.twoDigits(hour) + ":" + Self.twoDigits(minute)
    }

    /// The local hour (0–23) and minute of `date`.
    public func hourMinute(_ date: Date) -> (hour: Int, minute: Int) {
        let seconds = localSeconds(date)
        let ofDay = Int(seconds - (seconds / 86_400).rounded(.down) * 86_400)
        return (ofDay / 3600 % 24, ofDay % 3600 / 60)
    }

    /// The instant of local midnight starting `dateString`'s day.
    public func startOfDay(_ dateString: String) -> Date? {
        let parts = dateString.split(separator: "-").compactMap { Int($0) }
        guard parts.count == 3 else { return nil }
        return calendar.date(from: DateComponents(year: parts[0], month: parts[1], day: parts[2]))
    }

    public func dayOfYear(_ date: Date) -> Int { calendar.ordinality(of: .day, in: .year, for: date) ?? 1 }

    /// "07:30" as minutes after midnight; nil for anything else.
    static func minutes(_ text: String) -> Int? {
        let parts = text.split(separator: ":")
        guard parts.count == 2, parts[0].count <= 2, parts[1].count == 2, let hour = Int(parts[0]), let minute = Int(parts[1]),
              (0..<24).contains(hour), (0..<60).contains(minute) else { return nil }
        return hour * 60 + minute
    }

    /// Minutes after midnight as "07:30".
    static func clock(minutes: Int) -> String {
        let hour = minutes / 60, minute = minutes % 60
        return (hour < 10 ? "0" : "") + String(hour) + ":" + (minute < 10 ? "0" : "") + String(minute)
    }
}

/// A day of the proleptic Gregorian calendar, from its number of days since 1970-01-01 (Howard
/// Hinnant's `civil_from_days`): no `Calendar`, no formatter.
struct CivilDate: Equatable {
    let year: Int
    let month: Int
    let day: Int
    /// 0 = Sunday … 6 = Saturday.
    let weekday: Int

    init(day number: Int) {
        let z = number + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        weekday = ((number % 7) + 11) % 7 // 1970-01-01 was a Thursday
    }

    /// `yyyy-MM-dd`, digits written in place.
    var string: String {
        String(unsafeUninitializedCapacity: 16) { out in
            var position = 0
            func digits(_ value: Int, _ count: Int) {
                var rest = abs(value)
                for offset in stride(from: count - 1, through: 0, by: -1) {
                    out[position + offset] = 0x30 + UInt8(truncatingIfNeeded: rest % 10)
                    rest /= 10
                }
                position += count
            }
            if year < 0 { out[position] = 0x2D; position += 1 }
            digits(year, abs(year) > 9999 ? 5 : 4); out[position] = 0x2D; position += 1
            digits(month, 2); out[position] = 0x2D; position += 1
            digits(day, 2)
            return position
        }
    }

    /// The day a `yyyy-MM-dd` string names, if it names one.
    init?(_ text: String) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]),
              (1...12).contains(month), (1...31).contains(day), abs(year) < 100_000 else { return nil }
        // To the day's number, then back, so that the weekday comes with it (and 02-31 is refused).
        let date = CivilDate(day: Self.number(year: year, month: month, day: day))
        guard date.year == year, date.month == month, date.day == day else { return nil }
        self = date
    }

    /// Days since 1970-01-01 (days_from_civil); a day past its month's end runs into the next.
    static func number(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// This day's number (days since 1970-01-01).
    var number: Int { Self.number(year: year, month: month, day: day) }
}
