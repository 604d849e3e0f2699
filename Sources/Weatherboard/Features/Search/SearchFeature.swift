import Foundation

/// Search in posts, by the boards' own rules for the reader, limited per client.
enum SearchFeature {
    static func install(_ site: Site, cities: CityIndex) {
        PostSearchController(pages: site.pages, database: site.database, index: cities, clientAddress: site.clientAddress,
                             searches: ClientLimit(limit: site.limits.searchesPerMinute, window: 60), clock: site.clock).addRoutes(to: site.router)
    }
}
