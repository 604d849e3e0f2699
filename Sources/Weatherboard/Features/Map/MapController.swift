import Foundation
import HTTPServer

/// `GET /map`: Korea at a glance (`MapFigures`), with a switch for the hours the shading counts.
struct MapController {
    let figures: MapFigures
    let cache: PageCache

    static let hourChoices = [1, 3, 12, 24]
    static let defaultHours = 3

    func addRoutes(to router: Router<AppContext>) {
        router.get("/map", show)
    }

    func show(_ request: Request, _ context: AppContext) throws -> Response {
        let asked = try (context.query ?? request.queryItems())["hours"]
        let hours = asked.map { Int($0) ?? 0 } ?? Self.defaultHours
        guard Self.hourChoices.contains(hours) else {
            throw HTTPError(.badRequest, message: "hours is one of 1, 3, 12 or 24")
        }
        let marks = try figures.markedCities(context)
        guard context.user == nil && context.flash == nil else {
            try Lane.waitsAllowed()
            return .html(try render(context, marks: marks, hours: hours), for: context.request)
        }
        // The key is what the render reads: the hours, the language (in `Key`) and the cities marked.
        let key = PageCache.Key("map \(hours) \(marks.map(\.slug).joined(separator: ","))", context)
        return try cache.response(key: key, cities: figures.citiesShown, context: context) {
            try render(context, marks: marks, hours: hours)
        }
    }

    private func render(_ context: AppContext, marks: [City], hours: Int) throws -> RenderedPage {
        let language = context.language, pages = figures.pages
        let figure = try figures.figure(context, marks: marks, hours: hours)
        let view = MapPage(layout: pages.layout(context, title: pages.string("map_title", language)), figure: figure,
                           hourChoices: Self.hourChoices.map { MapPage.HourChoice(hours: $0, label: pages.string("map_hours_\($0)", language), current: $0 == hours) })
        return pages.renderer.page(language) { Templates.map(view, &$0, $1) }
    }
}

/// The map of Korea for a reader (the map page's and the home page's): the main cities (and the
/// reader's own) marked with today's high on the temperature colours and its change from
/// yesterday, where reports surge now, and each 시/도 shaded by how many people reported the sky
/// there in the last hours. The figures are the city pages' (the same kept forecast, the same
/// rounding), never fetched for the map: a city not yet fetched shows no number.
struct MapFigures: Sendable {
    let pages: Pages
    let index: CityIndex
    let weather: WeatherService
    let surges: Surges
    let bookmarks: Bookmarks
    let database: AppDatabase
    let map: KoreaMap
    let clock: @Sendable () -> Date

    /// Every Korean city: what a kept map shows changes with any of them.
    var citiesShown: [Int64] { Array(map.regionOf.keys) }

    /// The most populous city of each 시/도 (one a region: around Seoul the marks would cover each
    /// other), and the reader's Korean bookmarks.
    func markedCities(_ context: AppContext) throws -> [City] {
        var byRegion: [String: City] = [:]
        for city in index.cities where city.country == "KR" {
            guard let region = map.regionOf[city.id], byRegion[region] == nil else { continue }
            byRegion[region] = city
        }
        var marked = map.regions.compactMap { byRegion[$0.code] }
        for city in try bookmarks.cities(for: context) where city.country == "KR" && !marked.contains(where: { $0.id == city.id }) {
            marked.append(city)
        }
        return marked
    }

    func figure(_ context: AppContext, marks cities: [City], hours: Int) throws -> MapFigureView {
        let language = context.language
        let now = clock()
        let reports = try database.readStatement { try Self.reporters(since: now.addingTimeInterval(-Double(hours) * 3600), viewer: context.user?.id,
                                                            now: now, cities: Array(map.regionOf.keys), $0) }
        var byRegion: [String: Int] = [:]
        for (city, count) in reports { if let region = map.regionOf[city] { byRegion[region, default: 0] += count } }
        let regions = map.regions.map { region in
            let count = byRegion[region.code] ?? 0
            return MapPage.Region(code: region.code, name: region.name(language), path: region.path, reports: count,
                                  band: count == 0 ? 0 : count < 3 ? 1 : count < 10 ? 2 : 3,
                                  reportsText: pages.string(count == 1 ? "map_reports_one" : "map_reports", language, ["n": String(count)]))
        }
        let marks = cities.map { city -> MapPage.Mark in
            let (x, y) = map.place(latitude: city.latitude, longitude: city.longitude)
            var mark = MapPage.Mark(slug: city.slug, name: city.name(language), x: Self.pixels(x), y: Self.pixels(y),
                                    labelX: Self.pixels(x + 7), labelY: Self.pixels(y + 3.5), surging: surges.surge(in: city.id) != nil)
            let local = LocalCalendar(city.timeZone)
            if let forecast = weather.kept(for: city), let high = forecast.day(local.dateString(now))?.high {
                let whole = Comparison.wholeDegrees(high)
                mark.high = String(whole)
                mark.dotClass = Palette.classSuffix(high)
                if let yesterday = forecast.day(local.dateString(now, offset: -1))?.high {
                    let (key, degrees) = Comparison.phrase(today: high, reference: yesterday)
                    let difference = whole - Comparison.wholeDegrees(yesterday)
                    mark.diff = String(difference)
                    mark.label = "\(mark.name) \(whole)° " + (difference > 0 ? "▲\(difference)" : difference < 0 ? "▼\(-difference)" : "=")
                    mark.listText = pages.string("map_list_line", language, ["high": String(whole), "compare": pages.string(key, language, ["n": String(degrees)])])
                } else {
                    mark.label = "\(mark.name) \(whole)°"
                    mark.listText = "\(whole)°"
                }
            } else {
                mark.label = mark.name
                mark.listText = pages.string("map_no_forecast", language)
            }
            if mark.surging { mark.listText += " · " + pages.string("map_surging", language) }
            return mark
        }
        return MapFigureView(width: map.width, height: map.height, regions: regions, marks: marks,
                              shading: pages.string("map_shading", language, ["n": String(hours)]))
    }

    static func pixels(_ value: Double) -> String { WeatherNumbers.oneDecimal(value) }

    /// Distinct people who reported the sky in each city since `since`: visible posts, without
    /// the people a member blocked or has muted.
    static func reporters(since: Date, viewer: Int64?, now: Date, cities: [Int64], _ db: any SQLConnection) throws -> [Int64: Int] {
        guard !cities.isEmpty else { return [:] }
        var counts: [Int64: Int] = [:]
        try db.forEachRow("""
            SELECT p.city_id, count(DISTINCT p.user_id) FROM posts p
            WHERE \(Observation.reportsCounted(feels: false))
              AND p.city_id IN (\(cities.map { String($0) }.joined(separator: ", ")))
            GROUP BY p.city_id
            """, [.real(since.timeIntervalSince1970), .real(now.timeIntervalSince1970), .integer(viewer ?? 0)]) { counts[$0.int64(0)] = $0.int(1) }
        return counts
    }
}

/// The view for `map.mustache`.
struct MapPage {
    struct Region {
        var code: String
        var name: String
        var path: String
        var reports: Int
        /// 0 none, 1 a few, 2 several, 3 many: the shade.
        var band: Int
        var reportsText: String
    }
    struct Mark {
        var slug: String
        var name: String
        var x: String
        var y: String
        var labelX: String
        var labelY: String
        var surging: Bool
        /// Today's high and its change from yesterday, whole degrees as the city page shows them;
        /// nil for a city with no forecast kept.
        var high: String?
        var diff: String?
        var dotClass = Palette.noValueSuffix
        var label = ""
        var listText = ""
        var hasHigh: Bool { high != nil }
    }
    struct HourChoice {
        var hours: Int
        var label: String
        var current: Bool
    }
    var layout: LayoutView
    var figure: MapFigureView?
    var hourChoices: [HourChoice]
}

/// The picture and its list (`map_figure.mustache`), on the map page and the home page.
struct MapFigureView {
    var width: Int
    var height: Int
    var regions: [MapPage.Region]
    var marks: [MapPage.Mark]
    /// "Shaded by people who reported the sky in the last 3 hours".
    var shading: String
}
