import Foundation
import HTTPServer

/// The home page: a few cities with today's temperature and its change from yesterday, search,
/// and "use my location".
struct HomeController {
    let pages: Pages
    let index: CityIndex
    let weather: WeatherService
    let warnings: Warnings
    let surges: Surges
    let bookmarks: Bookmarks
    let cache: PageCache
    let database: AppDatabase
    /// The map of Korea, shown on the page to Korean readers and to anyone with a Korean bookmark.
    let map: MapFigures
    let clock: @Sendable () -> Date
    static let defaultCities = ["seoul", "busan", "tokyo", "new-york-city", "london"]

    func addRoutes(to router: Router<AppContext>) {
        router.get("/", home)
    }

    func home(_ request: Request, _ context: AppContext) throws -> Response {
        if let elsewhere = try PageCache.canonicalRedirect(context, path: "/") { return elsewhere }
        let selection = try shownCities(context)
        guard context.user == nil && context.flash == nil else {
            try Lane.waitsAllowed()
            return .html(try render(context, selection), for: context.request)
        }
        // The key is the whole selection the render reads: the same cities as bookmarks or as
        // the defaults are different pages (a heading, Remove buttons).
        // With the map, what any Korean city shows changes the page.
        let shown = selection.showsMap ? Array(Set(selection.cities.map(\.id) + map.citiesShown)) : selection.cities.map(\.id)
        return try cache.response(key: PageCache.Key("home \(selection.key)", context), cities: shown, context: context) {
            try render(context, selection)
        }
    }

    /// What a guest's home page shows besides the weather: which cities, in which language, and
    /// whether they are the reader's bookmarks or the defaults.
    struct Selection {
        let language: Language
        let cities: [City]
        let bookmarked: Bool
        var key: String { "\(bookmarked ? "bookmarks" : "defaults") \(cities.map(\.slug).joined(separator: ","))" }
        /// The map of Korea is on the page: a Korean reader, or a bookmark in Korea.
        var showsMap: Bool { language == .ko || (bookmarked && cities.contains { $0.country == "KR" }) }
    }

    /// The reader's bookmarked cities, or the default ones when there are none.
    private func shownCities(_ context: AppContext) throws -> Selection {
        let bookmarked = try bookmarks.cities(for: context)
        guard bookmarked.isEmpty else { return Selection(language: context.language, cities: bookmarked, bookmarked: true) }
        // The city opened last comes first (found by location, or simply read last).
        let last = LastCity.remembered(context.request, in: index)
        let defaults = Self.defaultCities.compactMap(index.city(slug:)).filter { $0.id != last?.id }
        return Selection(language: context.language, cities: (last.map { [$0] } ?? []) + defaults, bookmarked: false)
    }

    private func render(_ context: AppContext, _ selection: Selection) throws -> RenderedPage {
        let (language, cities, bookmarked) = (selection.language, selection.cities, selection.bookmarked)
        let reports = weather.reports(for: cities)
        let now = clock()
        let rows = zip(cities, reports).map { city, report in
            var row = HomePage.CityRow(slug: city.slug, name: city.name(language), bookmarked: bookmarked)
            row.surge = SurgeView(surges.surge(in: city.id), language) { pages.string($0, language, $1) }
            row.warnings = WarningView.of(warnings.inForce(city: city.id, now: now), city: city, language: language, now: now) {
                pages.string($0, language, $1)
            }
            let local = LocalCalendar(city.timeZone)
            if let report, let today = report.forecast.day(local.dateString(now)) {
                let forecast = report.forecast
                // "now" only for a reading of the last hours; otherwise today's high, called so.
                let current = now.timeIntervalSince(forecast.fetchedAt) < CityWeatherView.currentReadingLifetime
                    ? forecast.current?.temperature : nil
                let temperature = current ?? today.high
                row.temperature = temperature.map { String(Comparison.wholeDegrees($0)) } ?? "–"
                row.temperatureLabel = pages.string(current != nil ? "chart_now" : "high", language)
                row.chipClass = "chip-" + (temperature.map(Palette.classSuffix) ?? Palette.noValueSuffix)
                let condition = WeatherCondition.of((current != nil ? forecast.current?.weatherCode : nil) ?? today.weatherCode)
                row.icon = condition.icon
                row.condition = pages.string(condition.key, language)
                if let high = today.high, let yesterday = forecast.day(local.dateString(now, offset: -1))?.high {
                    // Beside "now 0°", say that the comparison is of the days' highs.
                    let (key, degrees) = Comparison.phrase(today: high, reference: yesterday)
                    row.change = pages.string("home_change", language, ["change": pages.string(key, language, ["n": String(degrees)])])
                }
                row.source = forecast.source
                row.isDemo = forecast.source == "demo"
                row.provenance = CityWeatherView.provenance(report, city: city, now: now) { pages.string($0, language, $1) }
            } else {
                row.missing = pages.string("home_weather_missing", language)
            }
            return row
        }
        let layout = pages.layout(context, title: nil)
        let times = PostPresenter.RelativeTimes { pages.string($0, language) }
        let busy = try database.readStatement { db in  // one statement
            try BusyBoards.read(viewer: context.user?.id, now: now, surging: { surges.surge(in: $0) != nil }, db)
        }.compactMap { board -> HomePage.BusyBoard? in
            guard let city = index.city(id: board.cityID) else { return nil }
            let said = [board.sky.map { pages.string("sky_" + $0.rawValue, language) }, board.feels.map { pages.string("feels_" + $0.rawValue, language) }]
                .compactMap { $0 }.joined(separator: " · ")
            return HomePage.BusyBoard(slug: city.slug, name: city.name(language), people: board.people,
                                      latest: said, icon: board.sky?.icon, surging: surges.surge(in: city.id) != nil,
                                      count: pages.string(board.people == 1 ? "busy_people_one" : "busy_people", language, ["n": String(board.people)]),
                                      ago: PostPresenter.relativeTime(Date(timeIntervalSince1970: board.latestAt), now: now, times))
        }
        let figure = selection.showsMap ? try map.figure(context, marks: try map.markedCities(context), hours: MapController.defaultHours) : nil
        let view = HomePage(layout: layout, hasBookmarks: bookmarked, cities: rows, busy: busy, map: figure)
        return pages.renderer.page(language) { Templates.home(view, &$0, $1) }
    }
}

/// The home page's view: a row per city.
struct HomePage {
    struct CityRow {
        var slug: String
        var name: String
        var bookmarked: Bool
        var temperature: String?
        /// "now" or "High": which figure `temperature` is.
        var temperatureLabel = ""
        var chipClass = "chip-none"
        var icon: String?
        var condition = ""
        var change: String?
        /// Words instead of figures when there are none (the weather service is down).
        var missing: String?
        /// Where the figures come from and how old they are; demo figures say so.
        var provenance: String?
        var source = ""
        var isDemo = false
        /// Official warnings in force there, most severe first.
        var warnings: [WarningView] = []
        var surge: SurgeView?
    }

    var layout: LayoutView
    var hasBookmarks: Bool
    var cities: [CityRow]
    /// The boards busy now (`BusyBoards`): `[data-busy-city]`.
    struct BusyBoard {
        var slug: String
        var name: String
        var people: Int
        /// What the latest report said ("Rain · Colder than forecast").
        var latest: String
        var icon: String?
        var surging: Bool
        var count: String
        var ago: String
    }
    var busy: [BusyBoard]
    var hasBusy: Bool { !busy.isEmpty }
    /// The map of Korea on the page (`HomeController.Selection.showsMap`).
    var map: MapFigureView?
}
