import Foundation
import Synchronization

/// How fast upstream is asked (`WeatherService.FetchBudget`): the node's fetches a minute, as a
/// token bucket holding up to a minute's worth; its cold fetches an hour, likewise; and each
/// client's cold fetches in its window.
final class UpstreamBudget: Sendable {
    let limits: WeatherService.FetchBudget

    private struct State {
        var tokens: Double
        var countedAt: Date
        var coldTokens: Double
        var coldCountedAt: Date
        /// Cold fetches each recent client caused, in its current window.
        var clients: ClientWindow
    }
    private let state: Mutex<State>

    init(_ limits: WeatherService.FetchBudget, now: Date) {
        self.limits = limits
        state = Mutex(State(tokens: Double(limits.perMinute), countedAt: now, coldTokens: Double(limits.coldPerHour), coldCountedAt: now,
                            clients: ClientWindow(limit: limits.coldPerClient, window: limits.clientWindow)))
    }

    /// Takes one of the node's fetches; false when this minute's are spent.
    func takeFetch(at now: Date) -> Bool {
        let perMinute = Double(limits.perMinute)
        return state.withLock { state in
            state.tokens = min(perMinute, state.tokens + max(0, now.timeIntervalSince(state.countedAt)) * perMinute / 60)
            state.countedAt = now
            guard state.tokens >= 1 else { return false }
            state.tokens -= 1
            return true
        }
    }

    /// Counts a cold fetch against `client`'s share and the node's hour; false past either.
    func admitColdFetch(by client: String, at now: Date) -> Bool {
        let perHour = Double(limits.coldPerHour)
        return state.withLock { state in
            state.coldTokens = min(perHour, state.coldTokens + max(0, now.timeIntervalSince(state.coldCountedAt)) * perHour / 3600)
            state.coldCountedAt = now
            guard state.clients.wait(client, now: now) == nil, state.coldTokens >= 1 else { return false }
            state.coldTokens -= 1
            state.clients.count(client, now: now)
            return true
        }
    }
}
