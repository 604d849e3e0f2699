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
    static func read(cityID: Int64, now: Date, _ db: any SQLConnection) throws -> Surge? {
        let t = now.timeIntervalSince1970
        var people = [Int](repeating: 0, count: baselineDays + 1)
        try db.forEachRow("""
            SELECT day, count(DISTINCT user_id) FROM (
                SELECT CAST((?1 - p.created_at) / 86400 AS INTEGER) AS day, p.user_id,
                       (?1 - p.created_at) - CAST((?1 - p.created_at) / 86400 AS INTEGER) * 86400 AS into_day
                FROM posts p
                WHERE p.city_id = ?2 AND p.parent_id IS NULL AND p.removed_at IS NULL AND p.hidden_at IS NULL
                      AND (p.sky IS NOT NULL OR p.feels IS NOT NULL) AND p.created_at > ?3 AND p.created_at <= ?1
            ) aged WHERE into_day < ?4 GROUP BY day
            """, [.real(t), .integer(cityID), .real(t - Double(baselineDays) * 86_400 - window), .real(window)]) { row in
            let day = row.int(0)
            if (0...baselineDays).contains(day) { people[day] = row.int(1) }
        }
        guard isSurging(recent: people[0], baseline: Array(people[1...])) else { return nil }
        let mostly = try db.one("""
            SELECT p.sky FROM posts p
            WHERE p.city_id = ? AND p.parent_id IS NULL AND p.removed_at IS NULL AND p.hidden_at IS NULL AND p.sky IS NOT NULL
                  AND p.created_at > ? AND p.created_at <= ?
            GROUP BY p.sky ORDER BY count(DISTINCT p.user_id) DESC, p.sky LIMIT 1
            """, [cityID, t - window, t]) { $0.optionalString(0).flatMap(Observation.Sky.init(rawValue:)) } ?? nil
        return Surge(count: people[0], mostly: mostly)
    }
}

/// Each city's surge as last read, for pages and home rows: read again a minute after, or at
/// once when a post is made, changed or goes in the city (on any node); open pages of a city
/// whose surge changed are told (`LiveBoards.surgeChanged`).
final class Surges: Sendable {
    private let database: AppDatabase
    private let clock: @Sendable () -> Date
    private let logger: Logger
    private let kept = Mutex<[Int64: (readAt: Date, surge: Surge?)]>([:])
    static let keptFor: TimeInterval = 60
    /// Cities kept at most (each a few bytes); past this the oldest half goes.
    static let citiesKept = 20_000

    init(database: AppDatabase, clock: @escaping @Sendable () -> Date, logger: Logger, changed: @escaping @Sendable (Int64) -> Void) {
        self.database = database
        self.clock = clock
        self.logger = logger
        database.changes.subscribe { [self] change, _ in
            // What changes who reported: a post written, gone, hidden or shown again (not an agreement, not a reply).
            guard case .post(let event) = change, event.parent == nil, event.kind != .agreed, event.kind != .edited else { return }
            let before = kept.withLock { $0[event.city]?.surge }
            let now = clock()
            if read(event.city, now: now) != before { changed(event.city) }
        }
    }

    /// The surge in `city` now, or nil.
    func surge(in city: Int64) -> Surge? {
        let now = clock()
        if let hit = kept.withLock({ $0[city] }), now.timeIntervalSince(hit.readAt) < Self.keptFor, hit.readAt <= now { return hit.surge }
        return read(city, now: now)
    }

    @discardableResult
    private func read(_ city: Int64, now: Date) -> Surge? {
        do {
            let surge = try database.readStatement { try Surge.read(cityID: city, now: now, $0) }
            kept.withLock { kept in
                if kept.count >= Self.citiesKept {
                    for key in kept.sorted(by: { $0.value.readAt < $1.value.readAt }).prefix(Self.citiesKept / 2).map(\.key) { kept[key] = nil }
                }
                kept[city] = (now, surge)
            }
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
