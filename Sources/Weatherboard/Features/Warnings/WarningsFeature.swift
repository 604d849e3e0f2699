import Foundation

/// Official warnings, asked for on every node and kept for pages; each opens its city's thread.
enum WarningsFeature {
    static func install(_ site: Site, cities: CityIndex, providers: [WarningProvider], interval: TimeInterval) throws -> Warnings {
        let pages = site.pages, clock = site.clock
        let warnings = try Warnings(database: site.database, cities: cities, providers: providers, interval: interval,
                                    words: { warning, city in
                                        WarningView.threadOpening(warning, city: city, now: clock()) { pages.string($0, $1, $2) }
                                    }, clock: clock, logger: site.logger)
        site.run("warnings", warnings)
        WarningSubscriptions(database: site.database, cities: cities, clock: clock).addRoutes(to: site.router)
        return warnings
    }
}
