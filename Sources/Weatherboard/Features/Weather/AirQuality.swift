import Foundation

/// Fetches PM10 and PM2.5 for a city. Called on the weather service's fetch threads.
public protocol AirQualityProvider: Sendable {
    /// `open-meteo` or `demo`.
    var id: String { get }
    func airQuality(for city: City, now: Date) throws -> Forecast.AirQuality
}

/// Open-Meteo's air-quality API (Copernicus CAMS, no key), on its own host: the values of the
/// current hour, in the city's time zone.
public struct OpenMeteoAirQuality: AirQualityProvider {
    public let id = "open-meteo"
    public let baseURL: String
    public let timeout: TimeInterval

    public init(baseURL: String = "https://air-quality-api.open-meteo.com", timeout: TimeInterval = 3) {
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.timeout = timeout
    }

    func url(for city: City) -> URL? {
        var components = URLComponents(string: baseURL + "/v1/air-quality")
        components?.queryItems = [
            URLQueryItem(name: "latitude", value: String(format: "%.4f", city.latitude)),
            URLQueryItem(name: "longitude", value: String(format: "%.4f", city.longitude)),
            URLQueryItem(name: "timezone", value: "auto"),
            URLQueryItem(name: "current", value: "pm10,pm2_5"),
        ]
        return components?.url
    }

    public func airQuality(for city: City, now: Date) throws -> Forecast.AirQuality {
        guard let url = url(for: city) else { throw UpstreamError("open-meteo air quality: bad base URL") }
        let (status, body) = try HTTPFetch.get(url, timeout: timeout)
        guard status == 200 else { throw UpstreamError("open-meteo air quality answered \(status)") }
        let answer: Response
        do {
            answer = try JSONDecoder().decode(Response.self, from: body)
        } catch {
            throw UpstreamError.answer("open-meteo air quality: the answer did not decode: \(error)")
        }
        let offset = city.timeZone.secondsFromGMT(for: now)
        if let answered = answer.utc_offset_seconds, answered != offset {
            throw UpstreamError.answer("open-meteo air quality: the answer is for UTC offset \(answered) s, the city's is \(offset) s")
        }
        return try Forecast.AirQuality(source: id, fetchedAt: now, time: answer.current.time, pm10: answer.current.pm10,
                                       pm25: answer.current.pm2_5).checked()
    }

    // The API's JSON, field names as sent.
    struct Response: Decodable {
        var utc_offset_seconds: Int?
        var current: Current
    }
    struct Current: Decodable {
        var time: String
        var pm10: Double?
        var pm2_5: Double?
    }
}

/// Plausible particulate figures without a network, labelled as demo like the demo forecast:
/// steady for an hour, cleaner air by the sea and in the tropics' rainy cities would need a
/// model; this one only makes mid-latitude winters (heating, inversions) dustier than summers.
public struct DemoAirQuality: AirQualityProvider {
    public let id = "demo"

    public init() {}

    public func airQuality(for city: City, now: Date) throws -> Forecast.AirQuality {
        let local = LocalCalendar(city.timeZone)
        let hour = String(local.minuteString(now).prefix(13))
        let season = cos(2 * Double.pi * Double(local.dayOfYear(now) - (city.latitude >= 0 ? 15 : 196)) / 365.25)
        let winterDust = min(1, abs(city.latitude) / 40) * max(0, season) * 14
        let pm25 = (6 + winterDust + 22 * Demo.unit(city.id, hour, salt: 21) * Demo.unit(city.id, hour, salt: 22)).rounded()
        let pm10 = (pm25 * (1.5 + 0.6 * Demo.unit(city.id, hour, salt: 23))).rounded()
        return Forecast.AirQuality(source: id, fetchedAt: now, time: hour + ":00", pm10: pm10, pm25: pm25)
    }
}

extension Forecast.AirQuality {
    /// Concentrations the ground has measured, with a margin (dust storms pass 5,000 µg/m³ of PM10).
    static let plausibleMicrograms: ClosedRange<Double> = 0...10_000

    /// The values, if plausible: outside input is checked before it is stored, like a forecast.
    func checked() throws -> Forecast.AirQuality {
        func refuse(_ reason: String) -> UpstreamError { UpstreamError.answer("\(source.prefix(Forecast.maximumSourceLength)) air quality: \(reason)") }
        guard !source.isEmpty, source.utf8.count <= Forecast.maximumSourceLength else { throw refuse("no usable source name") }
        guard Forecast.plausibleFetchTimes.contains(fetchedAt.timeIntervalSince1970) else { throw refuse("fetched at an impossible time") }
        guard Forecast.isHour(time) else { throw refuse("dated \(time.prefix(40).debugDescription)") }
        for (name, value) in [("PM10", pm10), ("PM2.5", pm25)] {
            if let value, !Self.plausibleMicrograms.contains(value) { throw refuse("\(name) is \(value) µg/m³") }
        }
        return self
    }
}

/// The Korean Ministry of Environment's bands for a day's particulate matter (since 2018:
/// PM2.5 좋음 0–15, 보통 16–35, 나쁨 36–75, 매우나쁨 76 and above µg/m³; PM10 0–30, 31–80,
/// 81–150, 151 and above), which Korean readers check every morning.
enum AirQualityBand: String, CaseIterable {
    case good, moderate, unhealthy, veryUnhealthy = "very_unhealthy"

    /// The band of a whole-microgram value (the standard's bands are whole numbers).
    static func of(pm25 value: Double) -> AirQualityBand { band(value, upperBounds: [15, 35, 75]) }
    static func of(pm10 value: Double) -> AirQualityBand { band(value, upperBounds: [30, 80, 150]) }

    private static func band(_ value: Double, upperBounds: [Int]) -> AirQualityBand {
        let whole = Comparison.wholeDegrees(value) // rounds halves up and clamps, like the degrees
        let index = upperBounds.firstIndex { whole <= $0 } ?? upperBounds.count
        return allCases[index]
    }

    /// Catalog key of the band's name (`air_good` → 좋음 / Good).
    var key: String { "air_" + rawValue }
}

/// The WHO's UV index categories: low 0–2, moderate 3–5, high 6–7, very high 8–10, extreme 11+.
enum UVBand: String, CaseIterable {
    case low, moderate, high, veryHigh = "very_high", extreme

    static func of(_ index: Int) -> UVBand {
        switch index {
        case ..<3: return .low
        case 3...5: return .moderate
        case 6...7: return .high
        case 8...10: return .veryHigh
        default: return .extreme
        }
    }

    var key: String { "uv_" + rawValue }
}
