import Foundation

/// A city's page: today against yesterday and tomorrow, its warnings, its board.
enum CityPageFeature {
    /// Ports: the cities, the weather and warnings, the boards' parts, the guest pages' cache.
    static func install(_ site: Site, cities: CityIndex, weather: WeatherService, warnings: Warnings, boards: BoardsFeature,
                        bookmarks: Bookmarks, guestPages: PageCache, forecastMissedReports: Int) -> CityPageController {
        let page = CityPageController(pages: site.pages, index: cities, weather: weather, warnings: warnings, surges: boards.surges,
                                      board: boards.view, bookmarks: bookmarks, cache: guestPages, clientAddress: site.clientAddress,
                                      clock: site.clock, fragments: WeatherFragments(enabled: site.keepsPages), boards: boards.cache,
                                      forecastMissedReports: forecastMissedReports)
        page.addRoutes(to: site.router)
        site.holds("weather_parts", upTo: page.fragments.byteBound) { page.fragments.keptBytes }
        ForecastCheckController(pages: site.pages, index: cities, database: site.database, clock: site.clock).addRoutes(to: site.router)
        return page
    }
}
