import Foundation

/// A source of official warnings: every warning it has in force now, in one answer.
protocol WarningProvider: Sendable {
    /// The source's name (`nws`), the prefix of its warnings' ids and its breaker's key.
    var source: String { get }
    /// The source's warnings in force at `now`, each matched to `cities`; a failure throws.
    func warnings(now: Date, cities: [City]) throws -> WarningFeed
}

/// What one poll of a source gave: the warnings it has in force (all of them: one missing since
/// the last poll has ended) and the ones refused, with why.
struct WarningFeed: Sendable {
    var warnings: [(incoming: IncomingWarning, cities: [Int64])]
    var refused: [String]
    /// False when some warnings were left for the next poll (a budget ran out): the ones not
    /// listed may still be in force, so they are kept.
    var complete = true
    /// Ids of warnings from a part of the source that did not answer this poll (one country's
    /// feed): kept, not taken as ended by their absence.
    var retained = Set<String>()
}

extension WarningFeed {
    /// Takes `incoming` with the cities among `here` inside `area` (a cancellation with none),
    /// or refuses it: past the poll's vertices (`budget`, of `perPoll`) it waits for the next poll
    /// and this one is incomplete; a warning over `WarningArea.maximumCities` cities is refused.
    mutating func take(_ incoming: IncomingWarning, area: WarningArea, among here: [City], vertices budget: inout Int, perPoll: Int) {
        guard incoming.kind != .cancel else {
            warnings.append((incoming, []))
            return
        }
        budget -= area.vertexCount
        guard budget >= 0 else {
            refused.append("\(incoming.warning.id.prefix(80)): past this poll's \(perPoll) vertices")
            complete = false
            return
        }
        let covered = area.cities(among: here)
        guard covered.count <= WarningArea.maximumCities else {
            refused.append("\(incoming.warning.id.prefix(80)): covers \(covered.count) cities (at most \(WarningArea.maximumCities))")
            return
        }
        warnings.append((incoming, covered))
    }
}
