import Foundation

/// A member's rain window: on these days, from `start` to `end` (minutes after midnight in the
/// city's local time; an end before the start runs past midnight), told `lead` minutes ahead.
struct RainWindow: Sendable, Equatable {
    enum Days: String, CaseIterable, Sendable {
        case weekdays, weekends, daily

        /// Whether `weekday` (1 Sunday … 7 Saturday) is one of these days.
        func contains(weekday: Int) -> Bool {
            switch self {
            case .daily: true
            case .weekends: weekday == 1 || weekday == 7
            case .weekdays: weekday != 1 && weekday != 7
            }
        }
    }

    var id: Int64
    var userID: Int64
    var cityID: Int64
    var days: Days
    var start: Int
    var end: Int
    var lead: Int

    /// A member keeps at most this many windows.
    static let perMember = 10
    /// Lead times from none to half a day.
    static let leads = 0...720
    static let defaultLead = 60

    /// One day's window in time: the local date it starts on, its start and end, and when the
    /// member may first be told.
    struct Occurrence: Equatable {
        var day: String
        var start: Date
        var end: Date
        var tellFrom: Date
    }

    /// The occurrences whose telling time has come and whose end has not, at `now` (a window may
    /// start tomorrow and be told tonight, or have started yesterday and run past midnight).
    func occurrences(at now: Date, in timeZone: TimeZone) -> [Occurrence] {
        let local = LocalCalendar(timeZone)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        return (-1...1).compactMap { offset in
            let day = local.dateString(now, offset: offset)
            guard let midnight = local.startOfDay(day), days.contains(weekday: calendar.component(.weekday, from: midnight)),
                  let start = calendar.date(byAdding: .minute, value: self.start, to: midnight),
                  let end = calendar.date(byAdding: .minute, value: self.end + (self.end < self.start ? 1440 : 0), to: midnight) else {
                return nil
            }
            let occurrence = Occurrence(day: day, start: start, end: end, tellFrom: start.addingTimeInterval(-Double(lead) * 60))
            return occurrence.tellFrom <= now && now < end ? occurrence : nil
        }
    }

    // MARK: - Queries

    static let columns = "id, user_id, city_id, days, start_minute, end_minute, lead_minutes"

    init(id: Int64, userID: Int64, cityID: Int64, days: Days, start: Int, end: Int, lead: Int) {
        (self.id, self.userID, self.cityID, self.days, self.start, self.end, self.lead) = (id, userID, cityID, days, start, end, lead)
    }

    init(row: any SQLRow) {
        self.init(id: row.int64(0), userID: row.int64(1), cityID: row.int64(2), days: Days(rawValue: row.string(3)) ?? .daily,
                  start: row.int(4), end: row.int(5), lead: row.int(6))
    }

    static func of(_ userID: Int64, _ db: any SQLConnection) throws -> [RainWindow] {
        try db.all("SELECT \(columns) FROM rain_windows WHERE user_id = ? ORDER BY id", [userID], RainWindow.init(row:))
    }

    static func all(_ db: any SQLConnection) throws -> [RainWindow] {
        try db.all("SELECT \(columns) FROM rain_windows ORDER BY id", [], RainWindow.init(row:))
    }

    /// Keeps a new window; false when the member has `perMember` already. The city must be one
    /// of their bookmarks (the table's foreign key says so too).
    static func add(_ window: RainWindow, now: Date, _ db: any SQLConnection) throws -> Bool {
        guard try db.integer("SELECT count(*) FROM rain_windows WHERE user_id = ?", window.userID) < perMember else { return false }
        try db.execute("""
            INSERT INTO rain_windows (user_id, city_id, days, start_minute, end_minute, lead_minutes, created_at)
            VALUES (?, ?, ?, ?, ?, ?, ?)
            """, window.userID, window.cityID, window.days.rawValue, window.start, window.end, window.lead, now)
        return true
    }

    static func remove(_ id: Int64, of userID: Int64, _ db: any SQLConnection) throws {
        try db.execute("DELETE FROM rain_windows WHERE id = ? AND user_id = ?", id, userID)
    }
}

extension RainInWindow {
    /// Nil when no hour from `now` to the window's end is likely wet.
    init?(_ hours: [Forecast.Hour], _ occurrence: RainWindow.Occurrence, now: Date, in timeZone: TimeZone) {
        let local = LocalCalendar(timeZone)
        let windowStart = local.minuteString(occurrence.start), windowEnd = local.minuteString(occurrence.end)
        // Hours are `…THH:00`: one overlaps the window when it starts before the end and its
        // hour is not before the window's (or the present's) hour.
        let firstHour = String(local.minuteString(max(now, occurrence.start)).prefix(13)) + ":00"
        let ordered = hours.filter { $0.time.utf8.count == 16 }.sorted { $0.time < $1.time }
        let isWet = { (hour: Forecast.Hour) in (hour.precipitationProbability ?? 0) >= RainOutlook.likely }
        let inWindow = ordered.filter { $0.time >= firstHour && $0.time < windowEnd }
        guard let first = inWindow.firstIndex(where: isWet), let last = inWindow.lastIndex(where: isWet) else { return nil }
        from = max(inWindow[first].time, windowStart)
        let lastEnd = Self.hourAfter(inWindow[last].time)
        to = min(lastEnd, windowEnd)
        // The spell goes on while the following hours stay likely; it stops at the first that is
        // not, if the forecast reaches that far.
        // (At most one step per hour given: a time the calendar cannot step past ends it.)
        let byTime = Dictionary(ordered.map { ($0.time, $0) }, uniquingKeysWith: { first, _ in first })
        var stop = lastEnd
        for _ in ordered.indices {
            guard let hour = byTime[stop], isWet(hour) else { break }
            stop = Self.hourAfter(stop)
        }
        stopsAt = byTime[stop].map { isWet($0) ? nil : stop } ?? nil
        let wet = inWindow[first...last].filter(isWet)
        let snowy = wet.filter { WeatherCondition.of($0.weatherCode).icon == "snow" }.count
        kind = snowy == 0 ? .rain : (snowy == wet.count ? .snow : .mixed)
    }

    /// `2026-11-22T17:00` → `2026-11-22T18:00`, across midnight and month ends.
    static func hourAfter(_ time: String) -> String {
        let date = String(time.prefix(10)), hour = Int(time.dropFirst(11).prefix(2)) ?? 0
        guard hour == 23 else { return date + "T" + LocalCalendar.twoDigits(hour + 1) + ":00" }
        let utc = LocalCalendar(.gmt)
        guard let midnight = utc.startOfDay(date) else { return time }
        return utc.dateString(midnight, offset: 1) + "T00:00"
    }
}
