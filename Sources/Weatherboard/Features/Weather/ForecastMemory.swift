import Foundation
import Synchronization

/// The newest forecast per city, decoded: the database keeps them across restarts, but
/// decoding the JSON on every page view cost more than the rest of the page's work. Bounded (a
/// crawl of every city must not hold every forecast): least recently shown go first, each
/// costing its JSON's size.
final class ForecastMemory: Sendable {
    private let decoded: Mutex<LRUCache<Int64, Forecast>>

    init(_ limit: WeatherService.MemoryLimit) {
        decoded = Mutex(LRUCache(maximumCount: limit.forecasts, maximumCost: limit.bytes))
    }

    func forecast(cityID: Int64) -> Forecast? { decoded.withLock { $0.value(for: cityID) } }

    /// Keeps `forecast` unless a newer one for the city is kept already.
    func remember(_ forecast: Forecast, cityID: Int64, size: Int) {
        decoded.withLock { decoded in
            if let known = decoded.peek(cityID), known.fetchedAt > forecast.fetchedAt { return }
            decoded.set(forecast, for: cityID, cost: size)
        }
    }

    func forget(cityID: Int64) { decoded.withLock { $0.removeValue(for: cityID) } }

    func forgetAll() { decoded.withLock { $0.removeAll() } }

    /// How many are kept and what their JSON amounts to.
    var usage: (count: Int, bytes: Int) { decoded.withLock { ($0.count, $0.totalCost) } }
}
