import Foundation

/// The map of Korea (`GET /map`): kept forecasts, surges and reports, never a fetch.
enum MapFeature {
    static func install(_ site: Site, cities: CityIndex, weather: WeatherService, surges: Surges, bookmarks: Bookmarks, cache: PageCache) throws {
        try KoreaMap.check()
        MapController(pages: site.pages, index: cities, weather: weather, surges: surges, bookmarks: bookmarks, cache: cache,
                      database: site.database, map: try KoreaMap.shipped.get(), clock: site.clock).addRoutes(to: site.router)
    }
}
