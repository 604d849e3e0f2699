import Foundation

/// Today's rain in one sentence, from the hourly chances: the spells when it is likely, from the
/// hour now to midnight ("Rain likely from 15:00 to 18:00", "비: 15–18시"). A chance of 50 % or
/// more counts as likely: the threshold at which forecasters say "likely" rather than "chance of".
struct RainOutlook {
    /// An hour counts as likely rain (or snow) at this chance and above.
    static let likely = 50

    /// Spells of likely hours, `from` inclusive to `to` exclusive (24 = midnight).
    let spells: [(from: Int, to: Int)]
    /// Whether any hour from now on has a chance at all (a provider may give none).
    let isKnown: Bool
    /// The first hour looked at (the hour now, today).
    let start: Int
    /// Snow, rain, or both, from the weather codes of the likely hours.
    let kind: Kind

    enum Kind: String { case rain, snow, mixed }

    /// Whether an hour counts as wet: as the next two hours' quarter hours say, for an hour they
    /// touch (they are finer and newer); else by its chance. The one rule the day's sentence, the
    /// next two hours and the umbrella all follow.
    static func isWet(hour: Int, chance: Int, nowcast: Nowcast?) -> Bool {
        nowcast?.decides(hour: hour) ?? (chance >= likely)
    }

    init(hours: [Forecast.Hour], from start: Int, nowcast: Nowcast? = nil) {
        self.start = start
        var spells: [(from: Int, to: Int)] = []
        var known = false
        var snowy = 0, wet = 0
        for hour in hours {
            guard let h = Int(hour.time.dropFirst(11).prefix(2)), h >= start, let chance = hour.precipitationProbability else { continue }
            known = true
            guard Self.isWet(hour: h, chance: chance, nowcast: nowcast) else { continue }
            wet += 1
            if WeatherCondition.of(hour.weatherCode).icon == "snow" { snowy += 1 }
            if let last = spells.last, last.to == h {
                spells[spells.count - 1].to = h + 1
            } else {
                spells.append((h, h + 1))
            }
        }
        self.spells = spells
        isKnown = known
        kind = snowy == 0 ? .rain : (snowy == wet ? .snow : .mixed)
    }

    /// The sentence in the catalog's words (it says so when the provider gave no hourly chances).
    /// - Parameter day: `today`, or `tomorrow` for the whole of the next day ("No rain expected
    ///   tomorrow.").
    func sentence(strings: (String, [String: String]) -> String, day: String = "today") -> String {
        guard isKnown else { return strings("rain_unknown", [:]) }
        guard let first = spells.first, let last = spells.last else {
            return strings(day == "tomorrow" ? "rain_none_tomorrow" : (start == 0 ? "rain_none_today" : "rain_none_rest"), [:])
        }
        var arguments = ["what": strings("precip_" + kind.rawValue, [:]), "from": Self.clock(first.from), "to": Self.clock(first.to),
                         "fromHour": String(first.from), "toHour": String(first.to)]
        switch spells.count {
        case 1 where first.from == start && start > 0:
            return strings("rain_now_until", arguments)
        case 1:
            return strings("rain_spell", arguments)
        case 2:
            arguments["from2"] = Self.clock(last.from)
            arguments["to2"] = Self.clock(last.to)
            arguments["fromHour2"] = String(last.from)
            arguments["toHour2"] = String(last.to)
            return strings("rain_two_spells", arguments)
        default:
            arguments["to"] = Self.clock(last.to)
            arguments["toHour"] = String(last.to)
            return strings("rain_on_and_off", arguments)
        }
    }

    /// `06:00`, and `24:00` for the end of the day.
    static func clock(_ hour: Int) -> String { LocalCalendar.twoDigits(hour) + ":00" }

    /// A dry sentence (the day's, or the next two hours') while the sky may say otherwise: with
    /// a warning in force ("Not in the forecast, but a Flash Flood Warning is in force.") or as
    /// many people reporting rain this hour as mark its forecast missed ("…, but 6 people report
    /// rain now."). One rule for every dry sentence on the card, so the page speaks with one voice.
    static func tempered(_ sentence: String, warning: String?, wetReports: Int, reportsNeeded: Int,
                         strings: (String, [String: String]) -> String) -> String {
        if let warning { return sentence + " " + strings("rain_tempered_warning", ["event": warning]) }
        if wetReports >= reportsNeeded { return sentence + " " + strings("rain_tempered_reports", ["n": String(wetReports)]) }
        return sentence
    }

    /// What the tomorrow line adds when tomorrow differs from today in rain: the catalog key of
    /// ", with rain likely" or ", and dry", or nil when both are wet or both dry.
    static func tomorrowChange(today: Forecast.Day?, tomorrow: Forecast.Day?) -> String? {
        guard let todayChance = today?.precipitationProbability, let tomorrowChance = tomorrow?.precipitationProbability else { return nil }
        switch (todayChance >= likely, tomorrowChance >= likely) {
        case (false, true):
            return WeatherCondition.of(tomorrow?.weatherCode).icon == "snow" ? "tomorrow_wet_snow" : "tomorrow_wet_rain"
        case (true, false):
            return "tomorrow_dry"
        default:
            return nil
        }
    }
}
