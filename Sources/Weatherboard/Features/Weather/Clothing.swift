import Foundation

/// What to wear today, against what yesterday called for: the usual Korean steps of clothing by
/// temperature (기온별 옷차림), read at the feels-like temperature of the hours people are out.
/// The table, the hours and the rule are documented in docs/what-to-wear.md; change both together.
enum Clothing {
    /// One step of the table: from `lowest` whole degrees (feels-like) upwards to the next step.
    struct Step: Equatable {
        /// `data-layer`, and the catalog key `wear_<id>`.
        let id: String
        let lowest: Int
        /// The picture beside the line (`/icons/wear-<icon>.svg`).
        let icon: String
    }

    /// Warmest first; the last step takes everything below the one before it.
    static let steps: [Step] = [
        Step(id: "sleeveless", lowest: 28, icon: "tshirt"),
        Step(id: "short_sleeves", lowest: 23, icon: "tshirt"),
        Step(id: "long_sleeves", lowest: 20, icon: "shirt"),
        Step(id: "knit", lowest: 17, icon: "shirt"),
        Step(id: "jacket", lowest: 12, icon: "jacket"),
        Step(id: "trench", lowest: 9, icon: "jacket"),
        Step(id: "coat", lowest: 5, icon: "coat"),
        Step(id: "padded", lowest: .min, icon: "padded"),
    ]

    /// The local hours people are likely out, inclusive.
    static let outHours = 7...22

    /// The step for a feels-like temperature, as its index in `steps` (a larger index is warmer clothing).
    static func step(for celsius: Double) -> Int {
        let whole = Comparison.wholeDegrees(celsius)
        return steps.firstIndex { whole >= $0.lowest } ?? steps.count - 1
    }

    /// The mean feels-like temperature over a day's out hours (the air temperature where a provider
    /// gave no feels-like value); nil when fewer than half of those hours have either.
    static func outdoorFeel(_ hours: [Forecast.Hour]) -> Double? {
        let values = hours.compactMap { hour -> Double? in
            guard let h = Int(hour.time.dropFirst(11).prefix(2)), outHours.contains(h) else { return nil }
            return hour.apparentTemperature ?? hour.temperature
        }
        guard values.count * 2 >= outHours.count else { return nil }
        return values.reduce(0, +) / Double(values.count)
    }

    struct Advice: Equatable {
        var step: Int
        /// The day's mean feels-like figure the step was read at.
        var feel: Double
        /// `same`, `more` (warmer clothes than yesterday) or `less`; nil when yesterday is unknown.
        var vsYesterday: String?
        /// Rain is likely in an out hour still ahead (`RainOutlook.isWet`, the rule the day's rain
        /// sentence follows).
        var umbrella: Bool
    }

    /// Today's advice from today's and yesterday's hours, `hour` being the local hour now.
    static func advice(today: [Forecast.Hour], yesterday: [Forecast.Hour], hour: Int, nowcast: Nowcast? = nil) -> Advice? {
        guard let feel = outdoorFeel(today) else { return nil }
        let step = step(for: feel)
        let vsYesterday = outdoorFeel(yesterday).map { past -> String in
            let before = Self.step(for: past)
            return step == before ? "same" : (step > before ? "more" : "less")
        }
        let umbrella = today.contains { entry in
            guard let h = Int(entry.time.dropFirst(11).prefix(2)), outHours.contains(h), h >= hour,
                  let chance = entry.precipitationProbability else { return false }
            return RainOutlook.isWet(hour: h, chance: chance, nowcast: nowcast)
        }
        return Advice(step: step, feel: feel, vsYesterday: vsYesterday, umbrella: umbrella)
    }
}
