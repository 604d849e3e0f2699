import Foundation

/// The map of Korea (`GET /map`): kept forecasts, surges and reports, never a fetch.
enum MapFeature {
    /// The map's figures, for the home page too.
    static func install(_ site: Site, cities: CityIndex, weather: WeatherService, surges: Surges, bookmarks: Bookmarks, cache: PageCache) throws -> MapFigures {
        let figures = MapFigures(pages: site.pages, index: cities, weather: weather, surges: surges, bookmarks: bookmarks,
                                 database: site.database, map: try KoreaMap.shipped.get(), clock: site.clock)
        MapController(figures: figures, cache: cache).addRoutes(to: site.router)
        return figures
    }
}
