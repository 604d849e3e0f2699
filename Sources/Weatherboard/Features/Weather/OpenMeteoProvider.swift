import Foundation
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

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
            URLQueryItem(name: "daily", value: "temperature_2m_max,temperature_2m_min,weather_code,precipitation_probability_max,"
                         + "sunrise,sunset,uv_index_max,wind_speed_10m_max,wind_gusts_10m_max,wind_direction_10m_dominant"),
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
            return try Self.decode(body, fetchedAt: now, expectedUTCOffset: city.timeZone.secondsFromGMT(for: now))
        } catch let error as UpstreamError {
            throw error
        } catch {
            throw UpstreamError.answer("open-meteo: the answer did not decode: \(error)")
        }
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
                             windDirection: at(daily.wind_direction_10m_dominant, i))
            },
            hourly: hourly.time.indices.map { i in
                Forecast.Hour(time: hourly.time[i], temperature: hourly.temperature_2m[i],
                              apparentTemperature: at(hourly.apparent_temperature, i),
                              precipitationProbability: at(hourly.precipitation_probability, i), weatherCode: at(hourly.weather_code, i),
                              humidity: at(hourly.relative_humidity_2m, i))
            })
    }

    // The API's JSON, field names as sent.
    struct Response: Decodable {
        var utc_offset_seconds: Int?
        var current: CurrentBlock?
        var hourly: HourlyBlock
        var daily: DailyBlock
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
    }
    struct ErrorBody: Decodable {
        var error: Bool
        var reason: String
    }
}

/// A blocking GET through URLSession, bounded by `timeout`; handlers run on worker threads.
/// What comes back is bounded too: at most `maximumBytes` are read (a larger answer is a
/// failure, read no further), and a redirect is followed only on the same scheme, host and port
/// (a provider's answer never makes us fetch from somewhere else).
enum HTTPFetch {
    /// Open-Meteo's answer for one city is about 20 KB, KMA's about 150 KB.
    static let maximumBytes = 2 << 20

    static func get(_ url: URL, timeout: TimeInterval) throws -> (Int, Data) {
        var request = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: timeout)
        request.setValue("Weatherboard/1.0", forHTTPHeaderField: "User-Agent")
        let transfer = Transfer(origin: url, limit: maximumBytes)
        // A session per fetch: its delegate holds this fetch's bytes alone. Fetches are rare
        // (one per city per half hour at most) and off the request path.
        let session = URLSession(configuration: .ephemeral, delegate: transfer, delegateQueue: nil)
        defer { session.finishTasksAndInvalidate() }
        let task = session.dataTask(with: request)
        task.resume()
        if transfer.done.wait(timeout: .now() + timeout + 0.5) == .timedOut {
            task.cancel()
            throw UpstreamError("\(url.host ?? "upstream"): timed out after \(timeout) s")
        }
        return try transfer.outcome()
    }

    /// One fetch's state, filled by URLSession's delegate callbacks on its own queue.
    final class Transfer: NSObject, URLSessionDataDelegate, Sendable {
        let origin: URL
        let limit: Int
        let done = DispatchSemaphore(value: 0)
        private struct State {
            var status: Int?
            var data = Data()
            var error: String?
        }
        private let state = Mutex(State())

        init(origin: URL, limit: Int) {
            self.origin = origin
            self.limit = limit
        }

        func outcome() throws -> (Int, Data) {
            let state = state.withLock { $0 }
            let host = origin.host ?? "upstream"
            if let error = state.error { throw UpstreamError("\(host): \(error)") }
            guard let status = state.status else { throw UpstreamError("\(host): no answer") }
            return (status, state.data)
        }

        func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
            let tooLarge = response.expectedContentLength > Int64(limit)
            state.withLock {
                $0.status = (response as? HTTPURLResponse)?.statusCode
                if tooLarge { $0.error = "the answer is larger than \(limit) bytes" }
            }
            completionHandler(tooLarge ? .cancel : .allow)
        }

        func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
            let tooLarge = state.withLock { state -> Bool in
                guard state.error == nil else { return true }
                if state.data.count + data.count > limit {
                    state.error = "the answer is larger than \(limit) bytes"
                    state.data = Data()
                    return true
                }
                state.data.append(data)
                return false
            }
            if tooLarge { dataTask.cancel() }
        }

        func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void) {
            let target = request.url
            let sameOrigin = target?.scheme == origin.scheme && target?.host == origin.host && target?.port == origin.port
            // Not followed: the redirect itself is the answer, a status the provider treats as a failure.
            completionHandler(sameOrigin ? request : nil)
        }

        func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
            if let error {
                state.withLock { if $0.error == nil { $0.error = error.localizedDescription } }
            }
            done.signal()
        }
    }
}
