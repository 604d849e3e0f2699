import Foundation

/// What a member saw outside when posting: the sky, and how it feels against the forecast.
struct Observation: Sendable, Hashable {
    enum Sky: String, CaseIterable, Sendable {
        case clear, clouds, fog, rain, snow, storm

        /// The weather icon shown before the word (`Public/icons/NAME.svg`, the forecast's own
        /// set; decorative: the word says it).
        var icon: String {
            switch self {
            case .clear: "clear"
            case .clouds: "cloudy"
            case .fog: "fog"
            case .rain: "rain"
            case .snow: "snow"
            case .storm: "thunder"
            }
        }
    }

    enum Feels: String, CaseIterable, Sendable {
        case warmer, same, colder
    }

    var sky: Sky?
    var feels: Feels?

    /// The condition on posts `p` that count as a reader's reports (the map's shading, the home
    /// page's busy boards): visible top-level posts that said the sky (and with `feels`, or how it
    /// feels) after `?1` and by `?2`, without the people the reader `?3` (0: a guest) blocked or
    /// has muted.
    static func reportsCounted(feels: Bool) -> String {
        """
        (p.sky IS NOT NULL\(feels ? " OR p.feels IS NOT NULL" : "")) AND p.parent_id IS NULL AND p.removed_at IS NULL
          AND p.hidden_at IS NULL AND p.created_at > ?1 AND p.created_at <= ?2
          AND NOT EXISTS (SELECT 1 FROM blocks b WHERE b.blocker_id = ?3 AND b.blocked_id = p.user_id)
          AND NOT EXISTS (SELECT 1 FROM mutes m WHERE m.muter_id = ?3 AND m.muted_id = p.user_id AND \(Mutes.active("m", at: "?2")))
        """
    }

    /// Why the form's `sky` or `feels` cannot be taken: not one of the listed values.
    struct Unknown: Error {}

    /// From the post form's optional fields (absent or empty: not said).
    init(sky: String?, feels: String?) throws {
        func value<T: RawRepresentable<String>>(_ text: String?) throws -> T? {
            guard let text, !text.isEmpty else { return nil }
            guard let known = T(rawValue: text) else { throw Unknown() }
            return known
        }
        self.sky = try value(sky)
        self.feels = try value(feels)
    }

    init(sky: Sky?, feels: Feels?) {
        self.sky = sky
        self.feels = feels
    }

    /// How long a city page looks back, and how often one person counts.
    static let window: TimeInterval = 3 * 3600
    static let onePerPersonEvery: TimeInterval = 3600
    /// The part of the window that weighs double: what it is like now counts for more than
    /// what it was like at noon.
    static let lastHour: TimeInterval = 3600
}

/// A city's observations of the last `Observation.window`, counted from the posts the viewer can see.
struct ObservationTally: Equatable {
    /// How many people said each thing in the window, how many of them in the last hour, and
    /// the order a page lists them in: by weight (the last hour counting twice), then as the
    /// kind lists them.
    struct Counts<Kind: Hashable & CaseIterable & Sendable>: Equatable, Sendable {
        private(set) var all: [Kind: Int] = [:]
        private(set) var lastHour: [Kind: Int] = [:]

        mutating func add(_ kind: Kind, recent: Bool) {
            all[kind, default: 0] += 1
            if recent { lastHour[kind, default: 0] += 1 }
        }

        var isEmpty: Bool { all.isEmpty }

        var ranked: [(kind: Kind, count: Int, lastHour: Int)] {
            let weight = { (kind: Kind) in (self.all[kind] ?? 0) + (self.lastHour[kind] ?? 0) }
            return Array(Kind.allCases).enumerated()
                .compactMap { offset, kind in all[kind].map { (offset, kind, $0, lastHour[kind] ?? 0) } }
                .sorted { (weight($0.1), -$0.0) > (weight($1.1), -$1.0) }
                .map { (kind: $0.1, count: $0.2, lastHour: $0.3) }
        }
    }
    var skies = Counts<Observation.Sky>()
    var feels = Counts<Observation.Feels>()
    var isEmpty: Bool { skies.isEmpty && feels.isEmpty }
}
