import Foundation
import HTTPServer

/// The home page: a few cities with today's temperature and its change from yesterday, search,
/// and "use my location".
struct HomeController {
    let pages: Pages
    let index: CityIndex
    let weather: WeatherService
    let bookmarks: Bookmarks
    let cache: PageCache
    let clock: @Sendable () -> Date
    static let defaultCities = ["seoul", "busan", "tokyo", "new-york-city", "london"]

    func addRoutes(to router: Router<AppContext>) {
        router.get("/", home)
    }

    func home(_ request: Request, _ context: AppContext) throws -> Response {
        guard context.user == nil else { return .html(try render(context, csrfToken: context.csrfToken)) }
        let key = "home \(context.language.rawValue) \(request.target) \(try bookmarks.cities(for: context).map(\.slug))"
        return try cache.response(key: key, city: nil, context: context) { token in try render(context, csrfToken: token) }
    }

    private func render(_ context: AppContext, csrfToken: String) throws -> [UInt8] {
        let language = context.language
        let bookmarked = try bookmarks.cities(for: context)
        let cities = bookmarked.isEmpty ? Self.defaultCities.compactMap(index.city(slug:)) : bookmarked
        let reports = weather.reports(for: cities)
        let now = clock()
        let rows = zip(cities, reports).map { city, report in
            var row = HomePage.CityRow(slug: city.slug, name: city.name(language), bookmarked: !bookmarked.isEmpty)
            let local = LocalCalendar(city.timeZone)
            if let forecast = report?.forecast, let today = forecast.day(local.dateString(now)) {
                let temperature = forecast.current?.temperature ?? today.high
                row.temperature = temperature.map { String(Int($0.rounded())) } ?? "–"
                row.chipClass = "chip-" + Palette.classSuffix(temperature ?? 0)
                let condition = WeatherCondition.of(forecast.current?.weatherCode ?? today.weatherCode)
                row.icon = condition.icon
                row.condition = pages.string(condition.key, language)
                if let high = today.high, let yesterday = forecast.day(local.dateString(now, offset: -1))?.high {
                    let (key, degrees) = Comparison.phrase(today: high, reference: yesterday)
                    row.change = pages.string(key, language, ["n": String(degrees)])
                }
            }
            return row
        }
        var layout = pages.layout(context, title: nil)
        layout.csrfToken = csrfToken
        let view = HomePage(layout: layout, hasBookmarks: !bookmarked.isEmpty, cities: rows)
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
        var chipClass = ""
        var icon: String?
        var condition = ""
        var change: String?
    }

    var layout: LayoutView
    var hasBookmarks: Bool
    var cities: [CityRow]
}
