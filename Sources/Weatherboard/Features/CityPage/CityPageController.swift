import Foundation
import HTTPServer
import Synchronization

/// The city page: the city's weather (rendered once for everyone) above its board (for this
/// viewer). It composes the two features, so that neither needs the other: the board's posting
/// route re-renders the page through `page(_:_:before:composer:status:)`, handed to it by the
/// application, when it refuses a post.
struct CityPageController {
    let pages: Pages
    let index: CityIndex
    let weather: WeatherService
    let warnings: Warnings
    let surges: Surges
    let board: BoardView
    let bookmarks: Bookmarks
    let cache: PageCache
    /// Who asks: a client's share of fetches for cold cities is bounded (`WeatherService.FetchBudget`).
    let clientAddress: ClientAddress
    let clock: @Sendable () -> Date
    let fragments: WeatherFragments
    let boards: BoardCache
    /// Reports with standing that mark an hour's forecast missed.
    var forecastMissedReports = HourReports.defaultMissedAfter

    func addRoutes(to router: Router<AppContext>) {
        router.get("/city/{slug}", show)
        router.get("/city/{slug}/surge", surge)
    }

    /// `GET /city/{slug}`: today beside yesterday and tomorrow.
    func show(_ request: Request, _ context: AppContext) throws -> Response {
        let city = try index.city(named: request)
        let before = try context.queryCursor("before")
        if let elsewhere = try PageCache.canonicalRedirect(context, path: "/city/\(city.slug)",
                                                          selecting: before.map { [("before", String($0))] } ?? []) {
            return elsewhere
        }
        var response: Response
        if context.user != nil || context.flash != nil {
            // Signed-in pages are each viewer's; a page showing a confirmation is this visitor's.
            try Lane.waitsAllowed()
            response = try page(city, context, before: before, composer: nil)
        } else {
            // Guests all see the same page (but for their bookmark and token): kept and reused.
            let bookmarked = bookmarks.containsForGuest(city, context)
            let key = PageCache.Key("city \(city.id) \(before.map(String.init) ?? "newest") \(bookmarked)", context)
            response = try cache.response(key: key, cities: [city.id], context: context) {
                try render(city, context, before: before, composer: nil)
            }
        }
        LastCity.remember(city, on: &response, for: request, secure: bookmarks.secureCookies)
        return response
    }

    /// `GET /city/{slug}/surge`: the page's surge line alone, for an open page told it changed.
    func surge(_ request: Request, _ context: AppContext) throws -> Response {
        let city = try index.city(named: request)
        let slot = surgeSlot(city, context.language)
        var response = Response.html(pages.renderer.page(context.language) { Templates.surge_slot(slot, &$0, $1) }, for: context.request)
        response.headers.set("Cache-Control", "no-cache")
        return response
    }

    private func surgeSlot(_ city: City, _ language: Language) -> SurgeSlot {
        SurgeSlot(address: "/city/\(city.slug)/surge", surge: SurgeView(surges.surge(in: city.id), language) { pages.string($0, language, $1) })
    }

    /// The city page; also re-rendered by the board when a post is refused, with the text kept.
    func page(_ city: City, _ context: AppContext, before: Int64?, composer: Composer?, status: HTTPStatus = .ok) throws -> Response {
        .html(try render(city, context, before: before, composer: composer), for: context.request, status: status)
    }

    private func render(_ city: City, _ context: AppContext, before: Int64?, composer: Composer?) throws -> RenderedPage {
        // The board and the bookmark flag in one read: one snapshot for all their statements.
        let (posts, isBookmarked, following) = try board.database.read { db in
            let posts = try board.posts(city: city, context: context, before: before, db)
            let bookmarked = try bookmarks.contains(city, for: context, db)
            return (posts, bookmarked, try WarningSubscriptions.following(cityID: city.id, userID: context.user?.id, bookmarked: bookmarked, db))
        }
        let language = context.language
        let layout = pages.layout(context, title: city.name(language))
        let inForce = warnings.inForce(city: city.id, now: clock())
        let shownWarnings = WarningView.of(inForce, city: city, language: language, now: clock(), thread: { warning in
            warnings.thread(of: warning.id).flatMap { thread in
                index.city(id: thread.cityID).map { ("/posts/\(thread.postID)", $0.name(language)) }
            }
        }) { pages.string($0, language, $1) }
        let view = CityPage(layout: layout, slug: city.slug, inKorea: city.country == "KR", warnings: shownWarnings, eventMode: Warnings.eventMode(inForce),
                            surgeSlot: surgeSlot(city, language),
                            weather: try weatherFragment(city, language, client: clientAddress.of(context.request), hourly: posts.hourReports),
                            observations: board.observations(posts.observations, language), bookmarked: isBookmarked,
                            warningFollow: WarningFollow(slug: city.slug, state: following, signInHref: layout.signInHref),
                            boardJump: board.jumpLabel(posts, language),
                            board: boardFragment(city, context, before: before, composer: composer, posts: posts, signInHref: layout.signInHref))
        return pages.renderer.page(language) { Templates.city(view, &$0, $1) }
    }

    /// The board for this viewer: kept for the next reader it renders the same for
    /// (`BoardCache`), unless it gives back the post form as typed (this reader's alone).
    private func boardFragment(_ city: City, _ context: AppContext, before: Int64?, composer: Composer?, posts: BoardView.Rows,
                               signInHref: String) -> HTMLFragment {
        let render = board.render(city: city, context: context, before: before, posts: posts, signInHref: signInHref)
        let make = {
            let section = board.section(render, rows: posts, composer: composer)
            return (pages.renderer.fragment(render.language, capacity: 64 * 1024) { Templates.board(section, &$0, $1) }, until: section.changesAt)
        }
        return composer == nil ? boards.board(render, now: clock(), make: make) : make().0
    }

    /// The weather part of the city page, the same for every reader in one language: rendered
    /// once per stored forecast and language, and again every five minutes (the chart marks
    /// "now"; see `WeatherFragments.validUntil`). A reader whose count of the hours is their own
    /// (`reader`: without people they blocked) gets the kept part when the counts agree, and
    /// otherwise one rendered for them and not kept.
    func weatherFragment(_ city: City, _ language: Language, client: String, hourly reader: HourReports? = nil) throws -> HTMLFragment {
        let report = weather.report(for: city, client: client)
        let now = clock()
        let everyone = surges.hourReports(in: city)
        let hourly = reader ?? everyone
        let warning = warnings.inForce(city: city.id, now: now).first?.event
        if let kept = fragments.fragment(city: city.id, language: language, report: report, hourly: hourly, warning: warning, now: now) { return kept }
        var view = CityWeather(cityName: city.name(language), country: city.place(language), countryCode: city.country, hasWeather: false)
        if let report {
            // Today's row is written by yesterday's fetches: it does not change while the part is
            // kept. Nor do the normals, but for their arrival, shown from the next part on.
            let today = LocalCalendar(city.timeZone).dateString(now)
            let (kept, normal) = try weather.store.database.read {
                (try ForecastHistory.day(today, cityID: city.id, $0), try ClimateNormals.day(of: today, cityID: city.id, $0))
            }
            view = CityWeatherView(city: city, report: report, now: now, language: language, forecastForToday: kept,
                                   normal: weather.normal(of: today, for: city, report: report, kept: normal),
                                   hourReports: hourly, missedAfter: forecastMissedReports, warning: warning) { key, arguments in
                pages.string(key, language, arguments)
            }.view
        }
        let fragment = pages.renderer.fragment(language) { Templates.city_weather(view, &$0, $1) }
        guard fragments.enabled, hourly == everyone else { return fragment }
        // Deflated once here, so that no compressed page showing it deflates it again.
        let kept = fragment.deflatedOnce()
        fragments.keep(kept, city: city.id, language: language, report: report, hourly: hourly, warning: warning, now: now)
        return kept
    }
}

/// Rendered weather parts of city pages, per city and language, each valid for the forecast it
/// was rendered from until the next five-minute mark (or the moment its reading stops being
/// "now"): rendering one costs several times the rest of a page, and a page cache entry lives
/// 30 seconds.
final class WeatherFragments: Sendable {
    private struct Entry {
        let fetchedAt: Date?
        let source: String?
        /// Today's reports by the hour it shows on the bars.
        let hourly: HourReports
        /// The warning a dry sentence names.
        let warning: String?
        let until: Date
        let fragment: HTMLFragment
    }

    /// Least recently shown go first, past a count and a byte budget.
    /// A part and its deflated form are about 15 KB: 32 MiB hold the 2,000 cities a busy site's
    /// visitors open most, in one language.
    private let entries = Mutex(LRUCache<String, Entry>(maximumCount: 4_000, maximumCost: 32 << 20))
    /// False: every part is rendered afresh (`--page-caches off`).
    let enabled: Bool

    init(enabled: Bool = true) {
        self.enabled = enabled
    }
    /// What the kept parts hold now, in bytes (for the operator).
    var keptBytes: Int { entries.withLock { $0.totalCost } }
    /// The most it may hold.
    var byteBound: Int { entries.withLock { $0.maximumCost } }
    /// How often the part is rendered again for the same forecast.
    static let step: TimeInterval = 300

    /// Until when a part rendered at `now` from `report` stays true. What in it depends on the
    /// time: the chart's "now" marker (off by at most the step: a few pixels of three days), the
    /// provenance's "3 hours ago" (the same), yesterday/today/tomorrow, which change at the
    /// city's midnight (every UTC offset is a multiple of 15 minutes, so midnight is a step
    /// boundary: never stale), the current reading, shown as "now" until it is
    /// `CityWeatherView.currentReadingLifetime` old, and the next two hours, shown until their
    /// quarter hours are `Nowcast.maximumAge` old (exact: the part ends then). The next two hours'
    /// window moves by quarter hours, which are step boundaries too.
    static func validUntil(now: Date, report: WeatherReport?) -> Date {
        let seconds = now.timeIntervalSince1970
        var until = Date(timeIntervalSince1970: (seconds / step).rounded(.down) * step + step)
        if let fetchedAt = report?.forecast.fetchedAt {
            for lifetime in [CityWeatherView.currentReadingLifetime, Nowcast.maximumAge] {
                let ends = fetchedAt.addingTimeInterval(lifetime)
                if ends > now { until = min(until, ends) }
            }
        }
        return until
    }

    func fragment(city: Int64, language: Language, report: WeatherReport?, hourly: HourReports, warning: String?, now: Date) -> HTMLFragment? {
        guard let entry = entries.withLock({ $0.value(for: "\(city) \(language.rawValue)") }),
              entry.fetchedAt == report?.forecast.fetchedAt, entry.source == report?.source, entry.hourly == hourly, entry.warning == warning,
              entry.until > now
        else { return nil }
        return entry.fragment
    }

    func keep(_ fragment: HTMLFragment, city: Int64, language: Language, report: WeatherReport?, hourly: HourReports, warning: String?, now: Date) {
        let entry = Entry(fetchedAt: report?.forecast.fetchedAt, source: report?.source, hourly: hourly, warning: warning,
                          until: Self.validUntil(now: now, report: report), fragment: fragment)
        entries.withLock {
            $0.set(entry, for: "\(city) \(language.rawValue)", cost: fragment.residentBytes)
        }
    }
}

/// A city's page: its weather (rendered once for everyone) and its board (for this viewer).
struct CityPage {
    var layout: LayoutView
    var slug: String
    /// A Korean city's page links the map of Korea.
    var inKorea = false
    /// Official warnings in force, most severe first.
    var warnings: [WarningView]
    var hasWarnings: Bool { !warnings.isEmpty }
    /// A severe or extreme one is among them: the board is in event mode (`Warnings.eventMode`).
    var eventMode: Bool
    /// Always there (an optional view opens a template scope): where the surge line is, or goes.
    var surgeSlot: SurgeSlot?
    var weather: HTMLFragment
    /// Always there (an optional view is what opens a template scope).
    var observations: ObservationsView?
    var bookmarked: Bool
    /// Whether the reader is told of the city's warnings, and how to be.
    var warningFollow: WarningFollow?
    /// "Board · 7 posts ↓": the board is two phone screens below the headline.
    var boardJump: String
    var board: HTMLFragment
}

/// The place on a city page for its surge line (`[data-surge-slot]`, which live pages fill again
/// from `address` when told the surge changed).
struct SurgeSlot {
    var address: String
    var surge: SurgeView?
}
