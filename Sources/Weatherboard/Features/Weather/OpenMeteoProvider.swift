import Foundation
import Synchronization

/// Open-Meteo's forecast API (no key): one call per city with yesterday, today and five more
/// days, hourly and daily values and the current conditions, in the city's time zone.
public struct OpenMeteoProvider: WeatherProvider {
    public let id = "open-meteo"
    public let baseURL: String
    public let timeout: TimeInterval

    public init(baseURL: String = "https://api.open-meteo.com", timeout: TimeInterval = 3) {
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.timeout = timeout
    }

    public func covers(_ city: City) -> Bool { true }

    func url(for city: City) -> URL? {
        var components = URLComponents(string: baseURL + "/v1/forecast")
        components?.queryItems = [
            URLQueryItem(name: "latitude", value: String(format: "%.4f", city.latitude)),
            URLQueryItem(name: "longitude", value: String(format: "%.4f", city.longitude)),
            URLQueryItem(name: "past_days", value: "1"),
            URLQueryItem(name: "forecast_days", value: "6"),
            URLQueryItem(name: "timezone", value: "auto"),
            URLQueryItem(name: "current", value: "temperature_2m,apparent_temperature,weather_code"),
            URLQueryItem(name: "hourly", value: "temperature_2m,apparent_temperature,precipitation_probability,weather_code,relative_humidity_2m"),
            // Precipitation by the quarter hour from the quarter now, for the next two hours (three asked).
            URLQueryItem(name: "minutely_15", value: "precipitation,snowfall"),
            URLQueryItem(name: "forecast_minutely_15", value: "12"),
            URLQueryItem(name: "daily", value: "temperature_2m_max,temperature_2m_min,weather_code,precipitation_probability_max,"
                         + "sunrise,sunset,uv_index_max,wind_speed_10m_max,wind_gusts_10m_max,wind_direction_10m_dominant,precipitation_sum"),
        ]
        return components?.url
    }

    public func forecast(for city: City, now: Date) throws -> Forecast {
        guard let url = url(for: city) else { throw UpstreamError("open-meteo: bad base URL") }
        let (status, body) = try HTTPFetch.get(url, timeout: timeout)
        guard status == 200 else {
            let reason = (try? JSONDecoder().decode(ErrorBody.self, from: body))?.reason ?? "no reason given"
            let message = "open-meteo answered \(status): \(reason)"
            // A 4xx other than 429 is about this request (this place); 429 and 5xx about the service.
            throw (400..<500).contains(status) && status != 429 ? UpstreamError.answer(message) : UpstreamError(message)
        }
        do {
            var forecast = try Self.decode(body, fetchedAt: now, expectedUTCOffset: city.timeZone.secondsFromGMT(for: now))
            if forecast.quarters != nil { forecast.quarterKind = Self.hasQuarterHourModel(city) ? "model" : "interpolated" }
            return forecast
        } catch let error as UpstreamError {
            throw error
        } catch {
            throw UpstreamError.answer("open-meteo: the answer did not decode: \(error)")
        }
    }

    /// Whether a 15-minute model runs at the city (Open-Meteo: North America's and central
    /// Europe's; elsewhere its quarter hours are interpolated from hourly values). The regions
    /// are drawn generously around those models' domains (docs/open-data.md).
    static func hasQuarterHourModel(_ city: City) -> Bool {
        let northAmerica = (21...60).contains(city.latitude) && (-135 ... -60).contains(city.longitude)
        let centralEurope = (37...58).contains(city.latitude) && (-12...20).contains(city.longitude)
        return northAmerica || centralEurope
    }

    /// - Parameter expectedUTCOffset: the city's offset now; an answer for another zone (its local
    ///   dates would be another day's) is refused.
    static func decode(_ data: Data, fetchedAt: Date, expectedUTCOffset: Int? = nil) throws -> Forecast {
        let response = try JSONDecoder().decode(Response.self, from: data)
        if let expectedUTCOffset, let offset = response.utc_offset_seconds, offset != expectedUTCOffset {
            throw UpstreamError.answer("open-meteo: the answer is for UTC offset \(offset) s, the city's is \(expectedUTCOffset) s")
        }
        let daily = response.daily
        guard daily.temperature_2m_max.count == daily.time.count, daily.temperature_2m_min.count == daily.time.count
        else { throw UpstreamError.answer("daily arrays differ in length") }
        let hourly = response.hourly
        guard hourly.temperature_2m.count == hourly.time.count else { throw UpstreamError.answer("hourly arrays differ in length") }
        func at<T>(_ array: [T?]?, _ i: Int) -> T? { array.flatMap { i < $0.count ? $0[i] : nil } }
        return Forecast(
            source: "open-meteo", fetchedAt: fetchedAt,
            current: response.current.map {
                Forecast.Current(time: $0.time, temperature: $0.temperature_2m, apparentTemperature: $0.apparent_temperature,
                                 weatherCode: $0.weather_code)
            },
            daily: daily.time.indices.map { i in
                Forecast.Day(date: daily.time[i], high: daily.temperature_2m_max[i], low: daily.temperature_2m_min[i],
                             weatherCode: at(daily.weather_code, i), precipitationProbability: at(daily.precipitation_probability_max, i),
                             sunrise: at(daily.sunrise, i), sunset: at(daily.sunset, i), uvIndexMax: at(daily.uv_index_max, i),
                             windSpeedMax: at(daily.wind_speed_10m_max, i), windGustsMax: at(daily.wind_gusts_10m_max, i),
                             windDirection: at(daily.wind_direction_10m_dominant, i), precipitationSum: at(daily.precipitation_sum, i))
            },
            hourly: hourly.time.indices.map { i in
                Forecast.Hour(time: hourly.time[i], temperature: hourly.temperature_2m[i],
                              apparentTemperature: at(hourly.apparent_temperature, i),
                              precipitationProbability: at(hourly.precipitation_probability, i), weatherCode: at(hourly.weather_code, i),
                              humidity: at(hourly.relative_humidity_2m, i))
            },
            quarters: try response.minutely_15.map { block in
                guard block.precipitation.map({ $0.count == block.time.count }) ?? true,
                      block.snowfall.map({ $0.count == block.time.count }) ?? true
                else { throw UpstreamError.answer("quarter-hour arrays differ in length") }
                return block.time.indices.map { i in
                    Forecast.Quarter(time: block.time[i], precipitation: at(block.precipitation, i), snowfall: at(block.snowfall, i))
                }
            })
    }

    // The API's JSON, field names as sent.
    struct Response: Decodable {
        var utc_offset_seconds: Int?
        var current: CurrentBlock?
        var hourly: HourlyBlock
        var daily: DailyBlock
        var minutely_15: QuarterBlock?
    }
    struct QuarterBlock: Decodable {
        var time: [String]
        var precipitation: [Double?]?
        var snowfall: [Double?]?
    }
    struct CurrentBlock: Decodable {
        var time: String
        var temperature_2m: Double?
        var apparent_temperature: Double?
        var weather_code: Int?
    }
    struct HourlyBlock: Decodable {
        var time: [String]
        var temperature_2m: [Double?]
        var apparent_temperature: [Double?]?
        var precipitation_probability: [Int?]?
        var weather_code: [Int?]?
        var relative_humidity_2m: [Int?]?
    }
    struct DailyBlock: Decodable {
        var time: [String]
        var temperature_2m_max: [Double?]
        var temperature_2m_min: [Double?]
        var weather_code: [Int?]?
        var precipitation_probability_max: [Int?]?
        var sunrise: [String?]?
        var sunset: [String?]?
        var uv_index_max: [Double?]?
        var wind_speed_10m_max: [Double?]?
        var wind_gusts_10m_max: [Double?]?
        var wind_direction_10m_dominant: [Int?]?
        var precipitation_sum: [Double?]?
    }
    struct ErrorBody: Decodable {
        var error: Bool
        var reason: String
    }
}
