import Foundation
import Synchronization

/// The newest forecast per city, decoded: the database keeps them across restarts, but
/// decoding the JSON on every page view cost more than the rest of the page's work. Bounded (a
/// crawl of every city must not hold every forecast): least recently shown go first, each
/// costing what it holds in memory (`Forecast.residentBytes`).
final class ForecastMemory: Sendable {
    private let decoded: Mutex<LRUCache<Int64, Forecast>>

    init(_ limit: WeatherService.MemoryLimit) {
        decoded = Mutex(LRUCache(maximumCount: limit.forecasts, maximumCost: limit.bytes))
    }

    func forecast(cityID: Int64) -> Forecast? { decoded.withLock { $0.value(for: cityID) } }

    /// Keeps `forecast` unless a newer one for the city is kept already.
    func remember(_ forecast: Forecast, cityID: Int64) {
        let size = forecast.residentBytes
        decoded.withLock { decoded in
            if let known = decoded.peek(cityID), known.fetchedAt > forecast.fetchedAt { return }
            decoded.set(forecast, for: cityID, cost: size)
        }
    }

    func forget(cityID: Int64) { decoded.withLock { $0.removeValue(for: cityID) } }

    func forgetAll() { decoded.withLock { $0.removeAll() } }

    /// How many are kept and what they hold in memory.
    var usage: (count: Int, bytes: Int) { decoded.withLock { ($0.count, $0.totalCost) } }
}

extension Forecast {
    /// About what the decoded forecast holds in memory: its arrays' buffers and the strings too
    /// long to be kept inline (every hour's `yyyy-MM-ddTHH:mm`), each a malloc block.
    var residentBytes: Int {
        let days = ResidentBytes.array(daily) + daily.reduce(0) {
            $0 + ResidentBytes.string($1.date) + ResidentBytes.string($1.sunrise) + ResidentBytes.string($1.sunset)
        }
        let hours = ResidentBytes.array(hourly) + hourly.reduce(0) { $0 + ResidentBytes.string($1.time) }
        let others = ResidentBytes.string(source) + ResidentBytes.string(current?.time)
            + ResidentBytes.string(airQuality?.source) + ResidentBytes.string(airQuality?.time)
        return ResidentBytes.block(MemoryLayout<Forecast>.stride) + days + hours + others
    }
}
