import Foundation
import Logging
import Synchronization

/// Official warnings (issue 43 #1), off the request path: every `interval` each source is asked
/// for what it has in force, matched to the catalog's cities and kept (`WarningStore`); pages
/// read them from memory, which follows every city's change (`PageChange.warning`, from this
/// node or another).
final class Warnings: Sendable, BackgroundWork {
    private let database: AppDatabase
    private let cities: CityIndex
    let providers: [WarningProvider]
    private let clock: @Sendable () -> Date
    private let logger: Logger
    private let worker: QueueWorker
    /// A failing source is left alone for a while (`CircuitBreakers`), and the pages keep what
    /// was kept of it.
    private let breakers = CircuitBreakers(openFor: 600)
    /// The warnings in force by city, as last read.
    private let inForce = Mutex<[Int64: [Warning]]>([:])
    /// Each warning's thread, as last read (`WarningThreads`: one per warning, on its home board).
    private let threads = Mutex<[String: ThreadPost]>([:])

    /// A warning's thread: its post and the city whose board holds it.
    struct ThreadPost: Sendable, Equatable {
        let postID: Int64
        let cityID: Int64
    }
    /// Polls made (tests wait for one).
    let polls = Atomic<Int>(0)
    var rounds: Int { polls.load(ordering: .relaxed) }
    /// What each source's last poll refused: a refusal is logged when it is new, not every poll.
    private let refused = Mutex<[String: Set<String>]>([:])
    /// A thread's opening words in a city (`WarningThreads`).
    private let words: @Sendable (Warning, City) -> String

    init(database: AppDatabase, cities: CityIndex, providers: [WarningProvider], interval: TimeInterval,
         words: @escaping @Sendable (Warning, City) -> String, clock: @escaping @Sendable () -> Date, logger: Logger) throws {
        self.database = database
        self.cities = cities
        self.words = words
        self.providers = providers
        self.clock = clock
        self.logger = logger
        worker = QueueWorker(pollInterval: interval)
        database.changes.subscribe { [self] change, _ in
            switch change {
            case .warning(let city): reload(city: city)
            case .missed: reloadAll()
            default: break
            }
        }
    }

    func start() {
        reloadAll() // what another node (or this one before a restart) kept
        guard !providers.isEmpty else { return }
        worker.start { [self] in poll() }
    }

    func stop() { worker.stop(waitingAtMost: 5) }

    /// The warnings in force in `city` at `now`, most severe first.
    func inForce(city: Int64, now: Date) -> [Warning] {
        inForce.withLock { $0[city] ?? [] }.filter { $0.expires > now }
    }

    /// The thread of the warning `id`, when it has one.
    func thread(of id: String) -> ThreadPost? { threads.withLock { $0[id] } }

    /// A severe or extreme warning is in force in `city`: its board is in event mode.
    func inEventMode(city: Int64, now: Date) -> Bool {
        Self.eventMode(inForce(city: city, now: now))
    }

    /// Event mode's one rule: a severe or extreme warning among those in force.
    static func eventMode(_ inForce: [Warning]) -> Bool {
        inForce.contains { $0.severity >= .severe }
    }

    private func reload(city: Int64) {
        do {
            let now = clock()
            let (list, found) = try database.read { db in
                let list = try WarningStore.inForce(cityID: city, now: now, db)[city]
                return (list, try Self.threads(of: (list ?? []).map(\.id), db))
            }
            inForce.withLock { $0[city] = list }
            threads.withLock { for (id, thread) in found { $0[id] = thread } }
        } catch {
            logger.error("warnings: could not read \(city)'s: \(LogText.oneLine(error))")
        }
    }

    private func reloadAll() {
        do {
            let now = clock()
            let (all, found) = try database.read { db in
                let all = try WarningStore.inForce(now: now, db)
                return (all, try Self.threads(of: Array(Set(all.values.flatMap { $0.map(\.id) })), db))
            }
            inForce.withLock { $0 = all }
            threads.withLock { $0 = found }
        } catch {
            logger.error("warnings: could not read them: \(LogText.oneLine(error))")
        }
    }

    /// The threads of `ids` (a warning's threads from before one per warning: the newest).
    private static func threads(of ids: [String], _ db: any SQLConnection) throws -> [String: ThreadPost] {
        guard !ids.isEmpty else { return [:] }
        var found: [String: ThreadPost] = [:]
        try db.forEachRow("""
            SELECT warning_id, id, city_id FROM posts WHERE parent_id IS NULL AND removed_at IS NULL
              AND warning_id IN (\(sqlMarks(ids.count))) ORDER BY id
            """, ids.sorted().map { SQLValue.text($0) }) { found[$0.string(0)] = ThreadPost(postID: $0.int64(1), cityID: $0.int64(2)) }
        return found
    }

    /// Asks every source once (a source whose breaker is open is skipped) and keeps what it says;
    /// also drops whatever has ended. A source's failure is logged in one line and changes nothing
    /// kept of it.
    func poll() {
        defer { polls.add(1, ordering: .releasing) }
        let now = clock()
        for provider in providers {
            guard !worker.isStopped else { return }
            guard !breakers.isOpen(provider.source, at: now) else { continue }
            do {
                let feed = try provider.warnings(now: now, cities: cities.cities)
                breakers.reset(provider.source)
                // Up to 20 a poll; the rest at the next ones. A refusal no longer made is forgotten.
                let new = refused.withLock { refused in
                    let seen = (refused[provider.source] ?? []).intersection(feed.refused)
                    let new = Array(feed.refused.filter { !seen.contains($0) }.prefix(20))
                    refused[provider.source] = seen.union(new)
                    return new
                }
                for reason in new { logger.warning("warnings: \(provider.source) refused: \(LogText.oneLine(reason))") }
                try database.write(.cluster) { db, changes in  // warnings' threads, once across nodes
                    try WarningStore.apply(feed, source: provider.source, now: now, threads: (cities, words), db, changes)
                }
            } catch {
                breakers.trip(provider.source, at: now)
                logger.warning("warnings: \(provider.source) failed: \(LogText.oneLine(error))")
            }
        }
    }
}

/// A warning as a page shows it (`[data-warning]`).
struct WarningView {
    var id: String
    var event: String
    var severity: String
    /// "Severe": the colour is never the only sign.
    var severityWord: String
    /// ISO 8601, UTC (`data-expires`); nil for one in force until lifted, which has no end to give.
    var expires: String?
    /// "until 21:00 (26 Nov)", the city's local time.
    var until: String
    var headline: String
    var description: String
    var hasDescription: Bool { !description.isEmpty }
    /// "National Weather Service · issued 14:05".
    var provenance: String
    /// The language the words are in, when not the page's (`lang`).
    var language: String?
    /// After the first (the most severe): its event line shown, the rest behind "More", so that
    /// several warnings leave a phone's screen for the weather.
    var compact = false
    /// Where everyone under it talks: its thread (`data-warning-thread`), on this board or another.
    struct ThreadLink {
        var href: String
        var text: String
    }
    var thread: ThreadLink?

    /// "14:05" in `city`'s time.
    static func clock(_ date: Date, in city: City) -> String {
        let (hour, minute) = LocalCalendar(city.timeZone).hourMinute(date)
        return LocalCalendar.twoDigits(hour) + ":" + LocalCalendar.twoDigits(minute)
    }

    /// "until 21:00", or "until 01:00, 22 Nov" when that is not `now`'s day in `city`.
    static func until(_ warning: Warning, city: City, language: Language, now: Date, string: (String, [String: String]) -> String) -> String {
        guard !warning.endsWhenLifted else { return string("warning_until_lifted", [:]) }
        let local = LocalCalendar(city.timeZone)
        let end = warning.expires
        let day = CivilDate(local.dateString(end)).map { DayLabels.dayMonth(month: $0.month, day: $0.day, language) } ?? ""
        return string(local.dateString(end) == local.dateString(now) ? "warning_until" : "warning_until_day",
                      ["time": clock(end, in: city), "day": day])
    }

    /// A warning's thread's opening words in `city`, in the board's language (Korean for Korean
    /// cities): "🟧 Flash Flood Warning until 01:00, 22 Nov: what are you seeing where you are?"
    static func threadOpening(_ warning: Warning, city: City, now: Date, string: (String, Language, [String: String]) -> String) -> String {
        let language: Language = city.country == "KR" ? .ko : .en
        let mark = switch warning.severity {
        case .minor: "🟩"
        case .moderate: "🟨"
        case .severe: "🟧"
        case .extreme: "🟥"
        }
        return string("warning_thread", language, [
            "mark": mark, "event": warning.event,
            "until": until(warning, city: city, language: language, now: now) { string($0, language, $1) },
        ])
    }

    /// The views of `warnings` for a page of `city` in `language`.
    static func of(_ warnings: [Warning], city: City, language: Language, now: Date,
                   thread: (Warning) -> (href: String, cityName: String)? = { _ in nil },
                   string: (String, [String: String]) -> String) -> [WarningView] {
        warnings.enumerated().map { index, warning in
            let text = warning.text(language)
            let until = until(warning, city: city, language: language, now: now, string: string)
            let textLanguage = text?.language.split(separator: "-").first.map(String.init)
            return WarningView(
                id: warning.id, event: warning.event, severity: warning.severity.rawValue,
                severityWord: string("severity_\(warning.severity.rawValue)", [:]),
                expires: warning.endsWhenLifted ? nil : DateFormatting.iso8601(warning.expires), until: until,
                headline: text?.headline ?? warning.event, description: text?.description ?? "",
                provenance: string("warning_source_\(warning.source)", ["time": clock(warning.sent, in: city)]),
                language: textLanguage == language.rawValue ? nil : textLanguage, compact: index > 0,
                thread: thread(warning).map { ThreadLink(href: $0.href, text: string("warning_thread_link", ["city": $0.cityName])) })
        }
    }
}
