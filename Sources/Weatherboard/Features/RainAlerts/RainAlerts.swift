import Foundation
import Logging

/// Rain alerts, off the request path: every `interval` on every node, each window whose telling
/// time has come is set against its city's forecast (the one pages show, refreshed through the
/// weather service's budgets: only cities with a window due are asked for). Rain likely in the
/// window's hours still to come is told once; if the forecast then turns dry before the told
/// rain begins, "no longer expected" is told once. Which node tells is whichever inserts the
/// window's day first (`rain_alerts`' unique key), in the transaction that writes the notice.
final class RainAlerts: Sendable, BackgroundWork {
    private let database: AppDatabase
    private let weather: WeatherService
    private let cities: CityIndex
    private let clock: @Sendable () -> Date
    private let logger: Logger
    private let worker: QueueWorker

    init(database: AppDatabase, weather: WeatherService, cities: CityIndex, interval: TimeInterval,
         clock: @escaping @Sendable () -> Date, logger: Logger) {
        self.database = database
        self.weather = weather
        self.cities = cities
        self.clock = clock
        self.logger = logger
        worker = QueueWorker(pollInterval: interval)
    }

    var rounds: Int { worker.rounds.load(ordering: .relaxed) }

    func start() { worker.start { [self] in checkDue() } }

    func stop() { worker.stop(waitingAtMost: 5) }

    /// A window's day told so far.
    private struct Told {
        var id: Int64
        var cleared: Bool
        var from: String
    }

    func checkDue() {
        let now = clock()
        do {
            var due: [Int64: [(RainWindow, RainWindow.Occurrence)]] = [:]
            for window in try database.readStatement(RainWindow.all) {
                guard let city = cities.city(id: window.cityID) else { continue }
                for occurrence in window.occurrences(at: now, in: city.timeZone) { due[window.cityID, default: []].append((window, occurrence)) }
            }
            for (cityID, windows) in due.sorted(by: { $0.key < $1.key }) {
                guard !worker.isStopped, let city = cities.city(id: cityID) else { return }
                guard let report = weather.report(for: city) else { continue } // not there yet: the next round
                for (window, occurrence) in windows {
                    let rain = RainInWindow(report.forecast.hourly, occurrence, now: now, in: city.timeZone)
                    try decide(window, occurrence, rain, now: now, hourNow: String(LocalCalendar(city.timeZone).minuteString(now).prefix(13)) + ":00")
                }
            }
        } catch {
            logger.error("rain alerts: \(error)")
        }
    }

    /// Tells what is new for one window's day: rain first seen, or told rain that will not come.
    private func decide(_ window: RainWindow, _ occurrence: RainWindow.Occurrence, _ rain: RainInWindow?, now: Date, hourNow: String) throws {
        let select = "SELECT id, state, spell_from FROM rain_alerts WHERE window_id = ? AND day = ?"
        let read = { (row: any SQLRow) in Told(id: row.int64(0), cleared: row.string(1) == "cleared", from: row.string(2)) }
        let told = try database.readStatement { try $0.one(select, [window.id, occurrence.day], read) }
        let seconds = now.timeIntervalSince1970, until = occurrence.end.timeIntervalSince1970
        switch (told, rain) {
        case (nil, let rain?):
            try database.write(.cluster) { db, changes in  // told once across nodes
                guard let id = try db.one("""
                    INSERT INTO rain_alerts (window_id, day, state, kind, spell_from, spell_to, stops_at, told_at)
                    VALUES (?, ?, 'expected', ?, ?, ?, ?, ?) ON CONFLICT (window_id, day) DO NOTHING RETURNING id
                    """, [window.id, occurrence.day, rain.kind.rawValue, rain.from, rain.to, rain.stopsAt, seconds], { $0.int64(0) }) else {
                    return // another node told it
                }
                try Notices.tell(window.userID, .rain, alert: id, pushUntil: until, now: seconds, db, changes)
            }
        case (let told?, nil) where !told.cleared && hourNow < told.from:
            try database.write(.cluster) { db, changes in  // told once across nodes
                guard try db.execute("UPDATE rain_alerts SET state = 'cleared' WHERE id = ? AND state = 'expected'", told.id) == 1 else { return }
                try Notices.tell(window.userID, .rainCleared, alert: told.id, pushUntil: until, now: seconds, db, changes)
            }
        default:
            break
        }
    }
}
