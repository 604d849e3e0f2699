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
}

/// A city's observations of the last `Observation.window`, counted from the posts the viewer can see.
struct ObservationTally: Equatable {
    var skies: [Observation.Sky: Int] = [:]
    var feels: [Observation.Feels: Int] = [:]
    var isEmpty: Bool { skies.isEmpty && feels.isEmpty }
}
