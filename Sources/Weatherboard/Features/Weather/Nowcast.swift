import Foundation

/// The next two hours by the quarter hour: "Rain starting around 14:15, stopping around 15:00",
/// "비가 20분 뒤 그쳐요", "No rain or snow in the next two hours". Made only from quarter hours
/// fetched within `maximumAge` that cover the whole window; otherwise there is none, rather than a
/// guess. The same quarters decide the hours they touch in the day's rain sentence
/// (`RainOutlook`), so the two never disagree.
struct Nowcast {
    /// A quarter hour with this much precipitation (mm) or more is wet: light rain, about 0.4 mm an hour.
    static let wet = 0.1
    /// Eight quarter hours: the next two hours.
    static let count = 8
    /// Older quarter hours say nothing about the next one.
    static let maximumAge: TimeInterval = 30 * 60

    struct Quarter {
        /// Local `HH:mm` the quarter hour starts and ends.
        var start: String
        var end: String
        /// The hour its start falls in.
        var hour: Int
        var precipitation: Double
        var isSnow: Bool
        var isWet: Bool { precipitation >= Nowcast.wet }
    }

    /// The window's quarter hours, the first one holding now.
    let quarters: [Quarter]
    /// Minutes from now to the end of the first quarter hour.
    let minutesIntoFirst: Int

    /// The window from `forecast`'s quarter hours at `now` in `local` time, or nil when they are
    /// missing, stale or do not cover it.
    init?(_ forecast: Forecast, now: Date, local: LocalCalendar) {
        guard let all = forecast.quarters, now.timeIntervalSince(forecast.fetchedAt) < Self.maximumAge,
              now.timeIntervalSince(forecast.fetchedAt) > -Self.maximumAge else { return nil }
        let nowStamp = local.minuteString(now)
        // The first quarter hour is the one whose end is after now and no more than 15 minutes on.
        guard let first = all.firstIndex(where: { $0.time > nowStamp }), all.count - first >= Self.count,
              all[first].time <= local.minuteString(now.addingTimeInterval(15 * 60)) else { return nil }
        var quarters: [Quarter] = []
        for entry in all[first..<(first + Self.count)] {
            guard let precipitation = entry.precipitation, let end = Self.minutes(entry.time) else { return nil }
            let start = (end - 15 + 24 * 60) % (24 * 60)
            if let last = quarters.last, last.end != Self.clock(start) { return nil } // a gap in the window
            // Open-Meteo's snow is in cm, 7 cm to 10 mm of water: snow when it is at least half of what falls.
            let snowWater = (entry.snowfall ?? 0) * 10 / 7
            quarters.append(Quarter(start: Self.clock(start), end: Self.clock(end), hour: start / 60, precipitation: precipitation,
                                    isSnow: snowWater > 0 && snowWater >= precipitation / 2))
        }
        self.quarters = quarters
        let (hour, minute) = local.hourMinute(now)
        minutesIntoFirst = ((Self.minutes(all[first].time) ?? 0) - (hour * 60 + minute) + 24 * 60) % (24 * 60)
    }

    /// Whether rain falls in `hour` as far as the window says: nil for an hour it does not touch.
    func decides(hour: Int) -> Bool? {
        let touching = quarters.filter { $0.hour == hour }
        return touching.isEmpty ? nil : touching.contains(where: \.isWet)
    }

    /// The first wet spell: its first and last quarter's index, or nil on a dry window.
    var firstSpell: (from: Int, to: Int)? {
        guard let from = quarters.firstIndex(where: \.isWet) else { return nil }
        let to = quarters[from...].firstIndex(where: { !$0.isWet }).map { $0 - 1 } ?? quarters.count - 1
        return (from, to)
    }

    /// Minutes from now to the end of quarter `index`.
    func minutes(toEndOf index: Int) -> Int { minutesIntoFirst + 15 * index }

    /// The sentence in the catalog's words.
    func sentence(strings: (String, [String: String]) -> String) -> String {
        guard let (from, to) = firstSpell else { return strings("nowcast_none", [:]) }
        let spell = quarters[from...to]
        let snowy = spell.filter(\.isSnow).count
        let what = strings(snowy == 0 ? "nowcast_rain" : (snowy == spell.count ? "nowcast_snow" : "nowcast_mixed"), [:])
        let continues = to == quarters.count - 1
        var arguments = ["what": what, "start": quarters[from].start, "end": quarters[to].end]
        switch (from == 0, continues) {
        case (true, true):
            return strings("nowcast_ongoing", arguments)
        case (true, false):
            arguments["minutes"] = String(minutes(toEndOf: to))
            return strings("nowcast_stopping", arguments)
        case (false, true):
            arguments["minutes"] = String(minutes(toEndOf: from - 1))
            return strings("nowcast_starting", arguments)
        case (false, false):
            return strings("nowcast_spell", arguments)
        }
    }

    /// Minutes into the day of a local `…THH:mm`.
    static func minutes(_ stamp: String) -> Int? {
        let clock = stamp.split(separator: "T").last ?? ""
        let parts = clock.split(separator: ":")
        guard parts.count >= 2, let hour = Int(parts[0]), let minute = Int(parts[1]) else { return nil }
        return hour * 60 + minute
    }

    /// `HH:mm` of minutes into the day.
    static func clock(_ minutes: Int) -> String { LocalCalendar.twoDigits(minutes / 60) + ":" + LocalCalendar.twoDigits(minutes % 60) }
}
