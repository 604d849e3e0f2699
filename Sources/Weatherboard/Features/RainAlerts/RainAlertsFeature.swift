import Foundation

/// Rain alerts: a member's windows ("weekdays 07:30–08:30 in Seoul"), set against forecasts on every node.
enum RainAlertsFeature {
    static func install(_ site: Site, cities: CityIndex, weather: WeatherService, interval: TimeInterval) {
        RainAlertsController(pages: site.pages, database: site.database, cities: cities, clock: site.clock).addRoutes(to: site.router)
        let alerts = RainAlerts(database: site.database, weather: weather, cities: cities, interval: interval, clock: site.clock, logger: site.logger)
        site.run("rain alerts", alerts)
    }
}
