import Foundation

/// Forecasts from the configured providers, kept in memory and in the database; the palette.
enum WeatherFeature {
    static func install(_ site: Site, weather: WeatherService) {
        site.database.changes.subscribe { change, origin in
            // This node's forecasts are in memory already; another node's are read from the database.
            guard origin == .elsewhere else { return }
            if case .weather(let cityID) = change { weather.forget(cityID: cityID) }
            if case .missed = change { weather.forgetAll() } // after a reconnection: anything may have changed
        }
        PaletteController().addRoutes(to: site.router)
        site.keep(ForecastHistory.keeping)
    }
}
