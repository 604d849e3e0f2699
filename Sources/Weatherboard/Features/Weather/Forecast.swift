import Foundation

/// A forecast as every provider delivers it: days and hours keyed by the city's local date and
/// time strings (`2026-11-22`, `2026-11-22T15:00`), so that days are matched by date, never by
/// position. Temperatures in °C; any value may be missing.
public struct Forecast: Codable, Sendable, Equatable {
    public var source: String
    public var fetchedAt: Date
    public var current: Current?
    public var daily: [Day]
    public var hourly: [Hour]
    /// Particulate matter near the ground, from its own service; absent when it did not answer
    /// (the page then says nothing about the air).
    public var airQuality: AirQuality?
    /// Precipitation by the quarter hour from about the time of fetching, for the next two hours'
    /// sentence (`Nowcast`); absent when the provider gives none.
    public var quarters: [Quarter]? = nil
    /// How the quarters were made: `model` (a 15-minute model runs there), `interpolated` (from
    /// hourly values) or `demo`.
    public var quarterKind: String? = nil

    public struct Current: Codable, Sendable, Equatable {
        public var time: String
        public var temperature: Double?
        public var apparentTemperature: Double?
        public var weatherCode: Int?
    }

    public struct Day: Codable, Sendable, Equatable {
        public var date: String
        public var high: Double?
        public var low: Double?
        public var weatherCode: Int?
        public var precipitationProbability: Int?
        /// Local `yyyy-MM-ddTHH:mm`; absent on a day the sun does not rise (or set) there.
        public var sunrise: String?
        public var sunset: String?
        /// The day's highest UV index (WHO scale, 0 upwards).
        public var uvIndexMax: Double?
        /// The day's strongest wind and gust at 10 m, km/h, and where the wind mostly came from
        /// (degrees, 0 = north).
        public var windSpeedMax: Double?
        public var windGustsMax: Double?
        public var windDirection: Int?
        /// Rain, showers and snow (as water) over the day, mm: what fell on a day that is over.
        public var precipitationSum: Double? = nil
    }

    public struct Hour: Codable, Sendable, Equatable {
        public var time: String
        public var temperature: Double?
        public var apparentTemperature: Double?
        public var precipitationProbability: Int?
        public var weatherCode: Int?
        /// Relative humidity at 2 m, %.
        public var humidity: Int?
    }

    /// Precipitation over the quarter hour that ends at `time` (local `yyyy-MM-ddTHH:mm`).
    public struct Quarter: Codable, Sendable, Equatable {
        public var time: String
        /// Rain, showers and snow as water, mm.
        public var precipitation: Double?
        /// Snow, cm.
        public var snowfall: Double?
    }

    /// PM10 and PM2.5 in µg/m³ at one local hour, as the air-quality service modelled them.
    public struct AirQuality: Codable, Sendable, Equatable {
        /// `open-meteo` (Copernicus CAMS through Open-Meteo) or `demo`.
        public var source: String
        public var fetchedAt: Date
        /// Local `yyyy-MM-ddTHH:mm` of the values.
        public var time: String
        public var pm10: Double?
        public var pm25: Double?
    }

    public func day(_ date: String) -> Day? { daily.first { $0.date == date } }

    /// Why this answer cannot make `city`'s page at `now`, or nil: the page compares yesterday,
    /// today and tomorrow, so each must be there with its high and low. An answer of nulls is a
    /// failure (the next provider is asked), never a forecast to cache.
    public func problem(for city: City, now: Date) -> String? {
        let local = LocalCalendar(city.timeZone)
        for offset in -1...1 {
            let date = local.dateString(now, offset: offset)
            guard let day = day(date) else { return "no values for \(date)" }
            guard day.high != nil, day.low != nil else { return "no high or low for \(date)" }
        }
        return nil
    }

    /// The hours of one local date, in order.
    public func hours(on date: String) -> [Hour] { hourly.filter { $0.time.hasPrefix(date + "T") } }
}

/// Fetches forecasts for cities. Called on worker threads; may block (up to its timeout).
public protocol WeatherProvider: Sendable {
    /// `open-meteo`, `kma` or `demo`.
    var id: String { get }
    /// Whether this provider covers the city (KMA: Korean cities only).
    func covers(_ city: City) -> Bool
    func forecast(for city: City, now: Date) throws -> Forecast
    /// Whether its figures are made up (`demo`): they stand in only where no real forecast is kept.
    var isDemo: Bool { get }
}

extension WeatherProvider {
    public var isDemo: Bool { false }
}

/// A provider failed: the network, the upstream's answer, or its format.
public struct UpstreamError: Error, CustomStringConvertible {
    public let description: String
    /// The answer for this one place was unusable (nulls, a wrong zone, a 4xx, bad format),
    /// while the provider itself answered: not a reason to stop asking it for other cities.
    public let isAboutTheAnswer: Bool
    /// The provider's own code for what was wrong with the answer, when it gave one.
    public let resultCode: String?

    /// The provider is failing (network, timeout, 5xx, refused key): its breaker opens.
    public init(_ description: String) {
        self.description = description
        isAboutTheAnswer = false
        resultCode = nil
    }

    private init(answer description: String, resultCode: String?) {
        self.description = description
        isAboutTheAnswer = true
        self.resultCode = resultCode
    }

    /// This place's answer is unusable; other places may be fine.
    public static func answer(_ description: String, resultCode: String? = nil) -> UpstreamError {
        UpstreamError(answer: description, resultCode: resultCode)
    }
}
