import Foundation

/// Today against yesterday in words. The compared figures are the days' highs, and the page
/// says so.
public enum Comparison {
    /// A temperature as the page shows it: whole degrees, halves away from zero (12.5 → 13,
    /// −0.5 → −1). Every stated difference is between numbers rounded this way, so that the
    /// words agree with the cards.
    /// Forecasts are checked before they get here (`Forecast.checked`); the conversion still
    /// cannot trap: non-finite values give 0, others are clamped to ±999.
    public static func wholeDegrees(_ celsius: Double) -> Int {
        guard celsius.isFinite else { return 0 }
        return Int(min(999, max(-999, celsius.rounded(.toNearestOrAwayFromZero))))
    }

    /// The catalog key and the whole-degree difference for `today` versus `reference`, as the
    /// cards show them.
    public static func phrase(today: Double, reference: Double) -> (key: String, degrees: Int) {
        let difference = wholeDegrees(today) - wholeDegrees(reference)
        if difference == 0 { return ("compare_same", 0) }
        return difference > 0 ? ("compare_warmer", difference) : ("compare_colder", -difference)
    }
}

/// WMO weather interpretation codes (as used by Open-Meteo) → icon file and catalog key.
public enum WeatherCondition {
    public static func of(_ code: Int?) -> (icon: String, key: String) {
        switch code {
        case 0?: return ("clear", "condition_clear")
        case 1?, 2?: return ("partly", "condition_partly")
        case 3?: return ("cloudy", "condition_cloudy")
        case 45?, 48?: return ("fog", "condition_fog")
        case 51?, 53?, 55?, 56?, 57?: return ("drizzle", "condition_drizzle")
        case 61?, 63?, 65?, 66?, 67?: return ("rain", "condition_rain")
        case 71?, 73?, 75?, 77?, 85?, 86?: return ("snow", "condition_snow")
        case 80?, 81?, 82?: return ("showers", "condition_showers")
        case 95?, 96?, 99?: return ("thunder", "condition_thunder")
        default: return ("unknown", "condition_unknown")
        }
    }
}
