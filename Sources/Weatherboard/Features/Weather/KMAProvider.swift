import Foundation
import Logging

/// The Korea Meteorological Administration's short-range forecast (단기예보,
/// `VilageFcstInfoService_2.0/getVilageFcst`) for Korean cities, by KMA grid cell. Answers are
/// XML, read with libxml2; the gateway reports key and quota errors in its own XML envelope
/// whatever format was asked for. Yesterday comes from yesterday's 02:00 run, today onwards from
/// the latest published run.
public struct KMAProvider: WeatherProvider {
    public let id = "kma"
    let baseURL: String
    let serviceKey: String
    let timeout: TimeInterval
    /// Where a failure that does not fail the forecast is told (yesterday's run not read).
    let logger: Logger?
    /// Korea keeps UTC+9 all year: the fixed offset if a system lacks the zone's data.
    static let korea = TimeZone(identifier: "Asia/Seoul") ?? TimeZone(secondsFromGMT: 9 * 3600) ?? .gmt

    public init(baseURL: String = "https://apis.data.go.kr", serviceKey: String, timeout: TimeInterval = 3, logger: Logger? = nil) {
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.serviceKey = serviceKey
        self.timeout = timeout
        self.logger = logger
    }

    /// The service's result code for "nothing for this request" (a run it no longer keeps).
    static let noData = "03"

    public func covers(_ city: City) -> Bool { city.kmaNx != nil && city.kmaNy != nil }

    /// The newest run published by `now`: runs are at 02, 05, 08, 11, 14, 17, 20 and 23 KST and
    /// are served from ten minutes past the hour.
    static func latestRun(at now: Date) -> (date: String, time: String) {
        let local = LocalCalendar(korea)
        let (hour, minute) = local.hourMinute(now)
        let minutes = hour * 60 + minute
        let runs = [2, 5, 8, 11, 14, 17, 20, 23]
        if let run = runs.last(where: { $0 * 60 + 10 <= minutes }) {
            return (local.dateString(now).replacingOccurrences(of: "-", with: ""), String(format: "%02d00", run))
        }
        return (local.dateString(now, offset: -1).replacingOccurrences(of: "-", with: ""), "2300")
    }

    func url(for city: City, run: (date: String, time: String)) -> URL? {
        Self.url(baseURL + "/1360000/VilageFcstInfoService_2.0/getVilageFcst", serviceKey: serviceKey, [
            ("pageNo", "1"), ("numOfRows", "1000"), ("dataType", "XML"), ("base_date", run.date), ("base_time", run.time),
            ("nx", String(city.kmaNx ?? 0)), ("ny", String(city.kmaNy ?? 0)),
        ])
    }

    /// A request to a data.go.kr service. data.go.kr issues each key twice, decoded ("…+…==") and
    /// percent-encoded ("…%2B…%3D%3D"): either is decoded, then encoded whole (a raw "+" would
    /// arrive as a space), so that whatever the operator pasted (white space around it, a stray
    /// "%") makes a valid query.
    static func url(_ address: String, serviceKey: String, _ parameters: [(String, String)]) -> URL? {
        let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        let pasted = serviceKey.trimmingCharacters(in: .whitespacesAndNewlines)
        let decoded = pasted.contains("%") ? (pasted.removingPercentEncoding ?? pasted) : pasted
        let key = decoded.addingPercentEncoding(withAllowedCharacters: unreserved) ?? ""
        guard var components = URLComponents(string: address) else { return nil }
        components.queryItems = parameters.map { URLQueryItem(name: $0.0, value: $0.1) }
        let rest = components.percentEncodedQuery.map { "&" + $0 } ?? ""
        components.percentEncodedQuery = "serviceKey=\(key)" + rest
        return components.url
    }

    public func forecast(for city: City, now: Date) throws -> Forecast {
        guard covers(city) else { throw UpstreamError("kma: \(city.slug) has no KMA grid cell") }
        let latest = try items(city, run: Self.latestRun(at: now))
        let yesterdayRun = (LocalCalendar(Self.korea).dateString(now, offset: -1).replacingOccurrences(of: "-", with: ""), "0200")
        // Yesterday is a bonus: the service keeps runs for about a day, so its absence (NO_DATA) is
        // no failure. Anything else (the network, the gateway) leaves the forecast without
        // yesterday, and is logged: an operator must see a failing service.
        let earlier: [Item]
        do {
            earlier = try items(city, run: yesterdayRun)
        } catch let error as UpstreamError where error.resultCode == Self.noData {
            earlier = []
        } catch {
            logger?.warning("kma: yesterday's run for \(city.slug) not read, the forecast goes without it: \(LogText.oneLine(String(describing: error)))")
            earlier = []
        }
        return Self.forecast(from: earlier + latest, now: now, city: city)
    }

    /// One forecast value: category (TMP, TMN, TMX, SKY, PTY, POP…), local date and time, value.
    struct Item: Equatable {
        var category: String
        var date: String // yyyyMMdd
        var time: String // HHmm
        var value: Double?
    }

    private func items(_ city: City, run: (date: String, time: String)) throws -> [Item] {
        guard let url = url(for: city, run: run) else { throw UpstreamError("kma: bad base URL") }
        let (status, body) = try HTTPFetch.get(url, timeout: timeout)
        guard status == 200 else { throw UpstreamError("kma answered \(status)") }
        return try Self.parse([UInt8](body))
    }

    /// Reads an answer, or throws the error it carries (service envelope or result code).
    static func parse(_ bytes: [UInt8]) throws -> [Item] {
        guard let document = try? MarkupDocument(bytes, as: .xml) else { throw UpstreamError.answer("kma: the answer is not XML") }
        let code = try resultCode(document)
        guard code == "00" else {
            // A result code (e.g. NO_DATA for this grid cell) is about this request; the gateway's
            // envelope (a refused key) above is about the service.
            throw UpstreamError.answer("kma error \(code): \(document.text("/response/header/resultMsg") ?? "")", resultCode: code)
        }
        var items: [Item] = []
        // Each field is read with one XPath query, in document order; an item lacking a field
        // would misalign them, so the counts must agree.
        let categories = document.nodes("/response/body/items/item/category").map(\.text)
        let dates = document.nodes("/response/body/items/item/fcstDate").map(\.text)
        let times = document.nodes("/response/body/items/item/fcstTime").map(\.text)
        let values = document.nodes("/response/body/items/item/fcstValue").map(\.text)
        guard categories.count == dates.count, dates.count == times.count, times.count == values.count else {
            throw UpstreamError.answer("kma: items with missing fields")
        }
        for i in categories.indices {
            var value = Double(values[i])
            // ±900 and beyond are the service's "missing"; `nan` and `inf` parse as Doubles and
            // are missing too (only finite values within ±900 are ever converted to Int).
            if let v = value, !v.isFinite || v >= 900 || v <= -900 { value = nil }
            items.append(Item(category: categories[i], date: dates[i], time: times[i], value: value))
        }
        return items
    }

    /// The result code of an answer of a data.go.kr service; the gateway's own refusal (a bad
    /// key, a spent quota: its `OpenAPI_ServiceResponse` envelope) thrown.
    static func resultCode(_ document: MarkupDocument) throws -> String {
        if document.count("/OpenAPI_ServiceResponse") > 0 {
            let reason = document.text("//returnAuthMsg") ?? document.text("//errMsg") ?? "unknown"
            throw UpstreamError("kma gateway error: \(reason)")
        }
        guard let code = document.text("/response/header/resultCode") else { throw UpstreamError("kma: no result code") }
        return code
    }

    static func forecast(from items: [Item], now: Date, city: City) -> Forecast {
        func dash(_ date: String) -> String { "\(date.prefix(4))-\(date.dropFirst(4).prefix(2))-\(date.suffix(2))" }
        // Later runs overwrite earlier ones for the same hour.
        var byHour: [String: [String: Double]] = [:]
        for item in items {
            guard let value = item.value else { continue }
            let key = "\(dash(item.date))T\(item.time.prefix(2)):00"
            byHour[key, default: [:]][item.category] = value
        }
        let hours = byHour.keys.sorted().map { time -> Forecast.Hour in
            let v = byHour[time]!
            return Forecast.Hour(time: time, temperature: v["TMP"], apparentTemperature: nil,
                                 precipitationProbability: v["POP"].map { Int($0) }, weatherCode: weatherCode(sky: v["SKY"], rain: v["PTY"]),
                                 humidity: v["REH"].map { Int($0) })
        }
        let dates = Set(hours.map { String($0.time.prefix(10)) }).sorted()
        let daily = dates.map { date -> Forecast.Day in
            let dayHours = hours.filter { $0.time.hasPrefix(date) }
            let values = byHour.filter { $0.key.hasPrefix(date) }.map(\.value)
            let temperatures = dayHours.compactMap(\.temperature)
            let high = values.compactMap { $0["TMX"] }.first ?? temperatures.max()
            let low = values.compactMap { $0["TMN"] }.first ?? temperatures.min()
            let codes = dayHours.compactMap(\.weatherCode)
            // WSD is m/s, VEC degrees; the strongest hour's direction stands for the day's wind.
            let windiest = values.filter { $0["WSD"] != nil }.max { $0["WSD"]! < $1["WSD"]! }
            // KMA's short-range forecast has no sun or UV: the sun's times are astronomy, the UV
            // index is left out.
            let sun = SunTimes.local(date, city: city)
            return Forecast.Day(date: date, high: high, low: low, weatherCode: codes.max(),
                                precipitationProbability: dayHours.compactMap(\.precipitationProbability).max(),
                                sunrise: sun?.sunrise, sunset: sun?.sunset,
                                windSpeedMax: windiest?["WSD"].map { ($0 * 3.6).rounded() },
                                windDirection: windiest?["VEC"].map { (Int($0) % 360 + 360) % 360 })
        }
        let local = LocalCalendar(korea)
        let (hour, _) = local.hourMinute(now)
        let currentKey = local.dateString(now) + String(format: "T%02d:00", hour)
        let current = hours.first { $0.time == currentKey }.map {
            Forecast.Current(time: $0.time, temperature: $0.temperature, apparentTemperature: nil, weatherCode: $0.weatherCode)
        }
        return Forecast(source: "kma", fetchedAt: now, current: current, daily: daily, hourly: hours)
    }

    /// SKY (1 clear, 3 mostly cloudy, 4 overcast) and PTY (1 rain, 2 rain and snow, 3 snow,
    /// 4 showers) as a WMO code.
    static func weatherCode(sky: Double?, rain: Double?) -> Int? {
        switch rain.flatMap({ Int(exactly: $0.rounded(.towardZero)) }) { // nil past Int's range: a forged value does not trap
        case 1?: return 61
        case 2?: return 67
        case 3?: return 71
        case 4?: return 80
        default: break
        }
        switch sky.flatMap({ Int(exactly: $0.rounded(.towardZero)) }) {
        case 1?: return 0
        case 3?: return 2
        case 4?: return 3
        default: return nil
        }
    }
}

