import Foundation
import Synchronization

/// How fast upstream is asked (`WeatherService.FetchBudget`): the node's fetches a minute, as a
/// token bucket holding up to a minute's worth; its cold fetches an hour, and its fetches of
/// normals an hour, likewise; and each client's cold fetches in its window.
final class UpstreamBudget: Sendable {
    let limits: WeatherService.FetchBudget

    /// Up to `capacity` tokens, refilled evenly over `period`.
    struct TokenBucket {
        let capacity: Double
        let period: TimeInterval
        var tokens: Double
        var countedAt: Date

        init(capacity: Int, period: TimeInterval, now: Date) {
            self.capacity = Double(capacity)
            self.period = period
            tokens = Double(capacity)
            countedAt = now
        }

        /// Refills for the time since last counted; then whether a token is there (taken if `take`).
        mutating func has(at now: Date, take: Bool = true) -> Bool {
            tokens = min(capacity, tokens + max(0, now.timeIntervalSince(countedAt)) * capacity / period)
            countedAt = now
            guard tokens >= 1 else { return false }
            if take { tokens -= 1 }
            return true
        }
    }

    private struct State {
        var fetches: TokenBucket
        var cold: TokenBucket
        var normals: TokenBucket
        /// Cold fetches each recent client caused, in its current window.
        var clients: ClientWindow
    }
    private let state: Mutex<State>

    init(_ limits: WeatherService.FetchBudget, now: Date) {
        self.limits = limits
        state = Mutex(State(fetches: TokenBucket(capacity: limits.perMinute, period: 60, now: now),
                            cold: TokenBucket(capacity: limits.coldPerHour, period: 3600, now: now),
                            normals: TokenBucket(capacity: limits.normalsPerHour, period: 3600, now: now),
                            clients: ClientWindow(limit: limits.coldPerClient, window: limits.clientWindow)))
    }

    /// Takes one of the node's fetches; false when this minute's are spent.
    func takeFetch(at now: Date) -> Bool {
        state.withLock { $0.fetches.has(at: now) }
    }

    /// Takes one of the hour's fetches of normals and one of the minute's fetches; neither
    /// unless both are there.
    func takeNormals(at now: Date) -> Bool {
        state.withLock { state in
            guard state.normals.has(at: now, take: false), state.fetches.has(at: now) else { return false }
            return state.normals.has(at: now)
        }
    }

    /// Counts a cold fetch against `client`'s share and the node's hour; false past either.
    func admitColdFetch(by client: String, at now: Date) -> Bool {
        state.withLock { state in
            guard state.clients.wait(client, now: now) == nil, state.cold.has(at: now, take: false) else { return false }
            _ = state.cold.has(at: now)
            state.clients.count(client, now: now)
            return true
        }
    }
}
