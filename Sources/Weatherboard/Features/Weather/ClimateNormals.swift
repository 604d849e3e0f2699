import Foundation

/// A city's climate normals (issue 42 #2): for each calendar date, the mean daily high and low
/// of 1991–2020 over the fortnight around it (every year's days within `window` of the date),
/// so that one odd year or day does not make the normal. 29 February's is the mean of 28
/// February's and 1 March's. Fetched once per city from a provider's archive and kept.
public struct ClimateNormals: Sendable, Equatable {
    /// The provider (`open-meteo-era5`, or `demo`, whose normals are made up like its weather).
    var source: String
    var fetchedAt: Date
    /// One per date of a leap year, 1 January first (`ClimateNormals.index`), °C to a tenth.
    var highs: [Double]
    var lows: [Double]

    static let years = 1991...2020
    static let window = 7
    /// An answer with fewer days holding both values than this (of the period's 10,958) makes no
    /// normal: a normal of a few years would be a guess presented as a climate.
    static let minimumDays = 9_000
    /// More days than the period has (with a margin): an answer past it is refused unread.
    static let maximumDays = 11_500

    /// What a page says of one date.
    struct Day: Sendable, Equatable {
        var month: Int
        var day: Int
        var high: Double
        var low: Double
        var source: String
        var fetchedAt: Date
    }

    /// A calendar date's place in a leap year (0 = 1 January, 59 = 29 February); nil for none.
    static func index(month: Int, day: Int) -> Int? {
        guard let date = CivilDate(String(format: "2000-%02d-%02d", month, day)) else { return nil }
        return date.number - CivilDate.number(year: 2000, month: 1, day: 1)
    }

    /// The normal of `date` (`yyyy-MM-dd`, its year ignored).
    func day(of date: String) -> Day? {
        guard let civil = CivilDate(date), let index = Self.index(month: civil.month, day: civil.day) else { return nil }
        return Day(month: civil.month, day: civil.day, high: highs[index], low: lows[index], source: source, fetchedAt: fetchedAt)
    }

    /// Normals from consecutive daily values starting on `firstDate`: every value in a range the
    /// Earth has seen or missing (nil), enough days, and no more than the period has. Linear in
    /// the days given: prefix sums make each year's window a subtraction.
    static func averaging(firstDate: String, highs: [Double?], lows: [Double?], source: String, fetchedAt: Date) throws -> ClimateNormals {
        func refuse(_ reason: String) -> UpstreamError { UpstreamError.answer("\(source): \(reason)") }
        guard let first = CivilDate(firstDate) else { throw refuse("the first day is \(firstDate.prefix(40).debugDescription)") }
        guard highs.count == lows.count, highs.count <= maximumDays else { throw refuse("\(highs.count) highs and \(lows.count) lows") }
        var known = 0
        // Sums and counts of the days before each index, for highs and lows.
        var sums = (high: [0.0], low: [0.0]), counts = (high: [0], low: [0])
        sums.high.reserveCapacity(highs.count + 1); sums.low.reserveCapacity(highs.count + 1)
        counts.high.reserveCapacity(highs.count + 1); counts.low.reserveCapacity(highs.count + 1)
        for (high, low) in zip(highs, lows) {
            for value in [high, low] {
                // `contains` is false for NaN and the infinities.
                if let value, !Forecast.plausibleCelsius.contains(value) { throw refuse("a day's temperature is \(value) °C") }
            }
            if let high, let low {
                guard high >= low else { throw refuse("a day's high \(high) °C is under its low \(low) °C") }
                known += 1
            }
            sums.high.append(sums.high.last! + (high ?? 0)); counts.high.append(counts.high.last! + (high == nil ? 0 : 1))
            sums.low.append(sums.low.last! + (low ?? 0)); counts.low.append(counts.low.last! + (low == nil ? 0 : 1))
        }
        guard known >= minimumDays else { throw refuse("\(known) days with a high and a low (at least \(minimumDays))") }

        let start = first.number, end = first.number + highs.count // the days given: [start, end)
        var normalHighs = [Double](repeating: 0, count: 366), normalLows = [Double](repeating: 0, count: 366)
        for index in 0..<366 where index != 59 {
            let date = CivilDate(day: CivilDate.number(year: 2000, month: 1, day: 1) + index)
            var total = (high: 0.0, low: 0.0), count = (high: 0, low: 0)
            for year in years {
                let centre = CivilDate.number(year: year, month: date.month, day: date.day)
                let from = max(start, centre - window) - start, to = min(end, centre + window + 1) - start
                guard from < to else { continue }
                total.high += sums.high[to] - sums.high[from]; count.high += counts.high[to] - counts.high[from]
                total.low += sums.low[to] - sums.low[from]; count.low += counts.low[to] - counts.low[from]
            }
            guard count.high > 0, count.low > 0 else { throw refuse("no days around \(date.month)-\(date.day)") }
            normalHighs[index] = total.high / Double(count.high)
            normalLows[index] = total.low / Double(count.low)
        }
        normalHighs[59] = (normalHighs[58] + normalHighs[60]) / 2
        normalLows[59] = (normalLows[58] + normalLows[60]) / 2
        return ClimateNormals(source: source, fetchedAt: fetchedAt, highs: normalHighs.map(WeatherNumbers.tenth), lows: normalLows.map(WeatherNumbers.tenth))
    }

    // MARK: - Queries

    /// Keeps a city's normals, replacing any it had: one statement for the 366 rows (2,196
    /// arguments, within both engines' limits), so the write lock is held for two round trips.
    static func store(_ normals: ClimateNormals, cityID: Int64, _ db: any SQLConnection) throws {
        try db.execute("DELETE FROM climate_normals WHERE city_id = ?", cityID)
        var arguments: [SQLValue] = []
        arguments.reserveCapacity(366 * 6)
        for index in 0..<366 {
            let date = CivilDate(day: CivilDate.number(year: 2000, month: 1, day: 1) + index)
            arguments += [.integer(cityID), .integer(Int64(date.month * 100 + date.day)), .real(normals.highs[index]),
                          .real(normals.lows[index]), .text(normals.source), .real(normals.fetchedAt.timeIntervalSince1970)]
        }
        let rows = Array(repeating: "(?, ?, ?, ?, ?, ?)", count: 366).joined(separator: ", ")
        try db.execute("INSERT INTO climate_normals (city_id, month_day, high, low, source, fetched_at) VALUES " + rows, arguments)
    }

    /// The kept normal of `date` (`yyyy-MM-dd`) for the city, if its normals were fetched.
    static func day(of date: String, cityID: Int64, _ db: any SQLConnection) throws -> Day? {
        guard let civil = CivilDate(date) else { return nil }
        return try db.one("""
            SELECT high, low, source, fetched_at FROM climate_normals WHERE city_id = ? AND month_day = ?
            """, [cityID, civil.month * 100 + civil.day]) { row in
            Day(month: civil.month, day: civil.day, high: row.double(0), low: row.double(1), source: row.string(2),
                fetchedAt: Date(timeIntervalSince1970: row.double(3)))
        }
    }

    /// Whether the city's normals are kept.
    static func isKept(cityID: Int64, _ db: any SQLConnection) throws -> Bool {
        try db.exists("SELECT 1 FROM climate_normals WHERE city_id = ? LIMIT 1", cityID)
    }
}

/// Where normals come from. Asked on the weather service's fetch threads, once per city.
public protocol NormalsProvider: Sendable {
    var id: String { get }
    func normals(for city: City, now: Date) throws -> ClimateNormals
}

/// Open-Meteo's historical archive (ERA5 reanalysis, no key): the daily highs and lows of
/// 1991–2020 at the city, in its time zone, averaged here.
public struct OpenMeteoArchive: NormalsProvider {
    public let id = "open-meteo-era5"
    public let baseURL: String
    /// Thirty years of days are a long answer to make.
    public let timeout: TimeInterval

    public init(baseURL: String = "https://archive-api.open-meteo.com", timeout: TimeInterval = 30) {
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.timeout = timeout
    }

    func url(for city: City) -> URL? {
        var components = URLComponents(string: baseURL + "/v1/archive")
        components?.queryItems = [
            URLQueryItem(name: "latitude", value: String(format: "%.4f", city.latitude)),
            URLQueryItem(name: "longitude", value: String(format: "%.4f", city.longitude)),
            URLQueryItem(name: "start_date", value: "\(ClimateNormals.years.lowerBound)-01-01"),
            URLQueryItem(name: "end_date", value: "\(ClimateNormals.years.upperBound)-12-31"),
            URLQueryItem(name: "daily", value: "temperature_2m_max,temperature_2m_min"),
            URLQueryItem(name: "models", value: "era5"),
            URLQueryItem(name: "timezone", value: "auto"),
        ]
        return components?.url
    }

    public func normals(for city: City, now: Date) throws -> ClimateNormals {
        guard let url = url(for: city) else { throw UpstreamError("open-meteo archive: bad base URL") }
        let (status, body) = try HTTPFetch.get(url, timeout: timeout)
        guard status == 200 else {
            let message = "open-meteo archive answered \(status)"
            throw (400..<500).contains(status) && status != 429 ? UpstreamError.answer(message) : UpstreamError(message)
        }
        let answer: Response
        do {
            answer = try JSONDecoder().decode(Response.self, from: body)
        } catch {
            throw UpstreamError.answer("open-meteo archive: the answer did not decode: \(error)")
        }
        let daily = answer.daily
        guard daily.time.count == daily.temperature_2m_max.count, daily.time.count == daily.temperature_2m_min.count,
              let first = daily.time.first else { throw UpstreamError.answer("open-meteo archive: daily arrays differ in length or are empty") }
        // The days must be the consecutive ones the averaging counts from the first.
        guard let start = CivilDate(first), daily.time.count <= ClimateNormals.maximumDays,
              daily.time.enumerated().allSatisfy({ CivilDate(day: start.number + $0.offset).string == $0.element })
        else { throw UpstreamError.answer("open-meteo archive: the days are not consecutive from \(first.prefix(40).debugDescription)") }
        return try ClimateNormals.averaging(firstDate: first, highs: daily.temperature_2m_max, lows: daily.temperature_2m_min,
                                            source: id, fetchedAt: now)
    }

    // The API's JSON, field names as sent.
    struct Response: Decodable {
        var daily: Daily
    }
    struct Daily: Decodable {
        var time: [String]
        var temperature_2m_max: [Double?]
        var temperature_2m_min: [Double?]
    }
}

extension DemoProvider {
    /// The demo's own normal of a date, as made up as its weather (and labelled so): the mean its
    /// days are drawn around, and the mean half-swing of a day (`forecast(for:now:)`).
    func normal(_ city: City, date: String, now: Date) -> ClimateNormals.Day? {
        guard let civil = CivilDate(date), let index = ClimateNormals.index(month: civil.month, day: civil.day) else { return nil }
        let mean = seasonalMean(city, dayOfYear: min(365, index + 1))
        return ClimateNormals.Day(month: civil.month, day: civil.day, high: WeatherNumbers.tenth(mean + 3.75),
                                  low: WeatherNumbers.tenth(mean - 3.75), source: id, fetchedAt: now)
    }
}
