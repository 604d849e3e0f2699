import Foundation
import Logging
import Synchronization

/// Reports surging in a city (issue 43 #4): more people reporting the sky in the last half hour
/// than the city's own usual for that half hour, by a margin and past a floor, so that a quiet
/// city needs several people and a busy one many more than usual.
struct Surge: Sendable, Equatable {
    /// Distinct people who reported in the last `window`.
    var count: Int
    /// The sky most of them reported, when one did.
    var mostly: Observation.Sky?

    static let window: TimeInterval = 30 * 60
    /// The usual: the same half hour on each of the days before.
    static let baselineDays = 7
    /// At least this many people, whatever the usual.
    static let floor = 5
    /// And this many times the usual (its mean over the baseline's days).
    static let factor = 3

    /// The rule, in one place: `recent` people in the last half hour against `baseline`, the
    /// people in the same half hour on each of the days before.
    static func isSurging(recent: Int, baseline: [Int]) -> Bool {
        guard recent >= floor else { return false }
        let usual = baseline.isEmpty ? 0 : Double(baseline.reduce(0, +)) / Double(baseline.count)
        return Double(recent) >= Double(factor) * usual
    }

    /// The city's surge at `now`, or nil: one statement for the half hours of today and the
    /// baseline's days (people counted once per half hour), one for what the sky mostly was.
    /// What the boards hide from everyone (hidden by reports, removed) does not count.
    /// With it, until when it holds unless a post changes: under the floor it can only
    /// fall as reports age out, so it holds until a post dated ahead of `now` (another node's
    /// clock) comes due; at or over the floor the window's sliding can change it any moment.
    static func reading(cityID: Int64, now: Date, _ db: any SQLConnection) throws -> (surge: Surge?, holds: Date) {
        let t = now.timeIntervalSince1970
        var people = [Int](repeating: 0, count: baselineDays + 1)
        var due = Date.distantFuture
        let day = db.dialect.wholeUnits("?1 - p.created_at", 86_400)
        try db.forEachRow("""
            SELECT day, count(DISTINCT user_id), min(created_at) FROM (
                SELECT CASE WHEN p.created_at > ?1 THEN -1 ELSE \(day) END AS day, p.user_id, p.created_at,
                       (?1 - p.created_at) - \(day) * 86400 AS into_day
                FROM posts p
                WHERE p.city_id = ?2 AND p.parent_id IS NULL AND p.removed_at IS NULL AND p.hidden_at IS NULL
                      AND (p.sky IS NOT NULL OR p.feels IS NOT NULL) AND p.created_at > ?3
            ) aged WHERE day = -1 OR into_day < ?4 GROUP BY day
            """, [.real(t), .integer(cityID), .real(t - Double(baselineDays) * 86_400 - window), .real(window)]) { row in
            let day = row.int(0)
            if day == -1 { due = Date(timeIntervalSince1970: row.double(2)) }
            if (0...baselineDays).contains(day) { people[day] = row.int(1) }
        }
        guard people[0] >= floor else { return (nil, min(due, now.addingTimeInterval(HourReports.heldAtMost))) }
        let holds = min(due, now.addingTimeInterval(Surges.keptFor))
        guard isSurging(recent: people[0], baseline: Array(people[1...])) else { return (nil, holds) }
        let mostly = try db.one("""
            SELECT p.sky FROM posts p
            WHERE p.city_id = ? AND p.parent_id IS NULL AND p.removed_at IS NULL AND p.hidden_at IS NULL AND p.sky IS NOT NULL
                  AND p.created_at > ? AND p.created_at <= ?
            GROUP BY p.sky ORDER BY count(DISTINCT p.user_id) DESC, p.sky LIMIT 1
            """, [cityID, t - window, t]) { $0.optionalString(0).flatMap(Observation.Sky.init(rawValue:)) } ?? nil
        return (Surge(count: people[0], mostly: mostly), holds)
    }
}

/// Each city's surge and today's reports by the hour as last read, held until what they read says
/// they stop being true (`Surge.reading`, `HourReports.reading`), or until a post is made,
/// changed or goes in the city (on any node), or anything may have changed; open pages of a
/// city whose surge changed are told (`LiveBoards.surgeChanged`) within `settle`.
final class Surges: Sendable {
    private struct Held<Value: Sendable>: Sendable {
        var readAt: Date
        var holds: Date
        var value: Value
        func holds(at now: Date) -> Bool { readAt <= now && now < holds }
    }
    private let database: AppDatabase
    private let clock: @Sendable () -> Date
    private let logger: Logger
    private let kept = Mutex<[Int64: Held<Surge?>]>([:])
    private let hourly = Mutex<[Int64: Held<HourReports>]>([:])
    /// A surge at or over the floor is read again a minute on: the window slides.
    static let keptFor: TimeInterval = 60
    /// Cities kept at most (each a few bytes); past this the oldest half goes.
    static let citiesKept = 20_000

    init(database: AppDatabase, clock: @escaping @Sendable () -> Date, logger: Logger, changed: @escaping @Sendable (Int64) -> Void) {
        self.database = database
        self.clock = clock
        self.logger = logger
        self.changed = changed
        database.changes.subscribe { [self] change, _ in
            switch change {
            // What changes who reported: a post written, gone, hidden or shown again (not an agreement, not a reply).
            case .post(let event) where event.parent == nil && event.kind != .agreed && event.kind != .edited:
                stale(event.city)
            case .city(let city):
                stale(city)
            case .everything, .missed:
                hourly.withLock { $0.removeAll() }
                kept.withLock { kept in for city in kept.keys { kept[city]?.holds = .distantPast } }
            default:
                break
            }
        }
    }

    private func stale(_ city: Int64) {
        hourly.withLock { $0[city] = nil }
        // The next page reads it again; open pages hear of a change within `settle`, from one
        // read however many posts come meanwhile (a storm is many posts a second in one city,
        // on every node, and each read counts a week of the city's reports).
        kept.withLock { $0[city]?.holds = .distantPast }
        guard pending.withLock({ $0.insert(city).inserted }) else { return }
        DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + Self.settle) { [weak self] in
            guard let self, !database.isClosed else { return }
            pending.withLock { _ = $0.remove(city) }
            read(city, now: clock())
        }
    }

    /// Cities whose surge is to be read again for their open pages.
    private let pending = Mutex<Set<Int64>>([])
    /// Seconds between a post and its city's surge read again for open pages.
    static let settle: TimeInterval = 1
    /// Tells open pages of a city that its surge changed.
    private let changed: @Sendable (Int64) -> Void

    /// The surge in `city` now, or nil.
    func surge(in city: Int64) -> Surge? {
        let now = clock()
        if let hit = kept.withLock({ $0[city] }), hit.holds(at: now) { return hit.value }
        return read(city, now: now)
    }

    /// Today's reports by the hour in `city`.
    func hourReports(in city: City) -> HourReports {
        let now = clock()
        if let hit = hourly.withLock({ $0[city.id] }), hit.holds(at: now) { return hit.value }
        do {
            let (reports, holds) = try database.readStatement { try HourReports.reading(city: city, now: now, $0) }
            hourly.withLock { hourly in
                if hourly.count >= Self.citiesKept { hourly.removeAll() }
                hourly[city.id] = Held(readAt: now, holds: holds, value: reports)
            }
            return reports
        } catch {
            logger.error("surge: could not count \(city.slug)'s reports by the hour: \(LogText.oneLine(error))")
            return HourReports()
        }
    }

    /// Reads the city's surge; open pages are told when it differs from what was kept.
    @discardableResult
    private func read(_ city: Int64, now: Date) -> Surge? {
        do {
            let (surge, holds) = try database.read { try Surge.reading(cityID: city, now: now, $0) }
            let before: Surge?? = kept.withLock { kept in
                if kept.count >= Self.citiesKept {
                    for key in kept.sorted(by: { $0.value.readAt < $1.value.readAt }).prefix(Self.citiesKept / 2).map(\.key) { kept[key] = nil }
                }
                defer { kept[city] = Held(readAt: now, holds: holds, value: surge) }
                return kept[city].map(\.value)
            }
            if let before, surge != before { changed(city) }
            return surge
        } catch {
            logger.error("surge: could not count \(city)'s reports: \(LogText.oneLine(error))")
            return nil
        }
    }
}

/// A surge as pages show it (`[data-surge]` with `data-count`).
struct SurgeView {
    var count: Int
    var text: String

    init?(_ surge: Surge?, _ language: Language, string: (String, [String: String]) -> String) {
        guard let surge else { return nil }
        count = surge.count
        text = surge.mostly.map { string("surge_mostly", ["n": String(surge.count), "sky": string("sky_\($0.rawValue)", [:]).lowercased()]) }
            ?? string("surge", ["n": String(surge.count)])
    }
}
