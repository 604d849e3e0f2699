import Foundation
import Synchronization

/// A provider's answers for one city that the site could not use (nulls, another time zone, a
/// 4xx about the city): that provider is not asked for that city again until a back-off ends,
/// which doubles with each unusable answer in a row (1 min, 2, 4 … at most an hour). One city's
/// broken answer once cost 2,349 upstream calls in 13 minutes, a free quota's day in an hour.
final class UnusableAnswers: Sendable {
    static let first: TimeInterval = 60
    static let longest: TimeInterval = 3600

    private struct Backoff {
        var inARow: Int
        var until: Date
    }
    /// By provider and city; bounded like every per-key table (an old entry forgotten is asked again).
    private let backoffs = Mutex(LRUCache<String, Backoff>(maximumCount: 10_000, maximumCost: 10_000))

    private static func key(_ provider: String, _ cityID: Int64) -> String { provider + "/" + String(cityID) }

    /// Until when `provider` is not asked for the city, if it is backed off at `now`.
    func backedOff(_ provider: String, city cityID: Int64, at now: Date) -> Date? {
        backoffs.withLock { $0.value(for: Self.key(provider, cityID)).flatMap { $0.until > now ? $0.until : nil } }
    }

    /// Another unusable answer at `now`: until when the city is not asked of `provider`.
    func unusable(_ provider: String, city cityID: Int64, at now: Date) -> Date {
        backoffs.withLock { backoffs in
            let key = Self.key(provider, cityID)
            let inARow = (backoffs.value(for: key)?.inARow ?? 0) + 1
            let wait = min(Self.longest, Self.first * pow(2, Double(min(inARow - 1, 12))))
            let until = now.addingTimeInterval(wait)
            backoffs.set(Backoff(inARow: inARow, until: until), for: key, cost: 1)
            return until
        }
    }

    /// A usable answer: the city is asked as usual again.
    func usable(_ provider: String, city cityID: Int64) {
        backoffs.withLock { $0.removeValue(for: Self.key(provider, cityID)) }
    }
}
