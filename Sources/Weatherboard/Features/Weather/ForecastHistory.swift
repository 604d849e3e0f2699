import Foundation

/// A day of a city's forecast history: what was forecast for it the day before, and what the
/// provider gave for it once it was over.
struct ForecastHistory: Sendable, Equatable {
    var day: String
    var source: String
    var forecastHigh: Double?
    var forecastLow: Double?
    var forecastChance: Int?
    var observedHigh: Double?
    var observedLow: Double?
    var observedCode: Int?
    var observedSource: String?

    /// A high within this many whole degrees is a hit (as the cards round).
    static let highTolerance = 2
    /// Days the page scores, and days rows are kept.
    static let scoredDays = 30
    static let keptFor: TimeInterval = 60 * 86_400
    static let keeping = Keeping("forecast_history", "issued_at", for: keptFor)

    /// Whether the high was forecast within `highTolerance`; nil until both are known.
    var highHit: Bool? {
        guard let forecastHigh, let observedHigh else { return nil }
        return abs(Comparison.wholeDegrees(forecastHigh) - Comparison.wholeDegrees(observedHigh)) <= Self.highTolerance
    }

    /// Rain said likely (50 % and over) on a day that was wet, or unlikely on a dry one; nil
    /// until both are known.
    var rainHit: Bool? {
        guard let forecastChance, let observedCode else { return nil }
        return (forecastChance >= RainOutlook.likely) == Self.isWet(observedCode)
    }

    /// WMO codes of drizzle, rain, snow, showers and thunderstorms (51 and up); fog and cloud are dry.
    static func isWet(_ code: Int) -> Bool { code >= 51 }

    // MARK: - Queries

    /// Keeps what a forecast fetched at `forecast.fetchedAt` says: of the city's tomorrow (the
    /// newest forecast issued before it begins wins), and of its yesterday, now over (what
    /// followed, for a day that was forecast).
    static func record(_ forecast: Forecast, city: City, _ db: any SQLConnection) throws {
        let local = LocalCalendar(city.timeZone)
        let issued = forecast.fetchedAt.timeIntervalSince1970
        if let tomorrow = forecast.day(local.dateString(forecast.fetchedAt, offset: 1)), tomorrow.high != nil {
            try db.execute("""
                INSERT INTO forecast_history (city_id, day, source, forecast_high, forecast_low, forecast_chance, issued_at)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (city_id, day) DO UPDATE SET source = excluded.source, forecast_high = excluded.forecast_high,
                    forecast_low = excluded.forecast_low, forecast_chance = excluded.forecast_chance, issued_at = excluded.issued_at
                WHERE excluded.issued_at > forecast_history.issued_at
                """, city.id, tomorrow.date, forecast.source, tomorrow.high, tomorrow.low, tomorrow.precipitationProbability, issued)
        }
        if let yesterday = forecast.day(local.dateString(forecast.fetchedAt, offset: -1)), yesterday.high != nil {
            try db.execute("""
                UPDATE forecast_history SET observed_high = ?, observed_low = ?, observed_code = ?, observed_source = ?, observed_at = ?
                WHERE city_id = ? AND day = ?
                """, yesterday.high, yesterday.low, yesterday.weatherCode, forecast.source, issued, city.id, yesterday.date)
        }
    }

    static let columns = """
        day, source, forecast_high, forecast_low, forecast_chance, observed_high, observed_low, observed_code, observed_source
        """

    init(row: any SQLRow) {
        self.init(day: row.string(0), source: row.string(1), forecastHigh: row.optionalDouble(2), forecastLow: row.optionalDouble(3),
                  forecastChance: row.optionalInt(4), observedHigh: row.optionalDouble(5), observedLow: row.optionalDouble(6),
                  observedCode: row.optionalInt(7), observedSource: row.optionalString(8))
    }

    init(day: String, source: String, forecastHigh: Double?, forecastLow: Double?, forecastChance: Int?, observedHigh: Double?,
         observedLow: Double?, observedCode: Int?, observedSource: String?) {
        (self.day, self.source, self.forecastHigh, self.forecastLow, self.forecastChance) = (day, source, forecastHigh, forecastLow, forecastChance)
        (self.observedHigh, self.observedLow, self.observedCode, self.observedSource) = (observedHigh, observedLow, observedCode, observedSource)
    }

    /// What was forecast for `day` (today: what yesterday's forecast said).
    static func day(_ day: String, cityID: Int64, _ db: any SQLConnection) throws -> ForecastHistory? {
        try db.one("SELECT \(columns) FROM forecast_history WHERE city_id = ? AND day = ?", [cityID, day], ForecastHistory.init(row:))
    }

    /// The `scoredDays` days before `today` that have both a forecast and what followed, newest first.
    static func scored(cityID: Int64, before today: String, _ db: any SQLConnection) throws -> [ForecastHistory] {
        try db.all("""
            SELECT \(columns) FROM forecast_history
            WHERE city_id = ? AND day < ? AND observed_high IS NOT NULL AND forecast_high IS NOT NULL ORDER BY day DESC LIMIT ?
            """, [cityID, today, scoredDays], ForecastHistory.init(row:))
    }
}
