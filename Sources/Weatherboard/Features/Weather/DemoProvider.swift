import Foundation

/// Offline weather: deterministic, plausible figures from climate normals (for well-known cities)
/// or latitude, the season, the hour of day and a seeded day-to-day variation, so the site can
/// be browsed without a network and tests are reproducible. Pages say plainly that these are
/// demo figures.
public struct DemoProvider: WeatherProvider {
    public let id = "demo"
    public var isDemo: Bool { true }

    public init() {}

    public func covers(_ city: City) -> Bool { true }

    public func forecast(for city: City, now: Date) throws -> Forecast {
        let local = LocalCalendar(city.timeZone)
        var daily: [Forecast.Day] = []
        var hourly: [Forecast.Hour] = []
        var snowyHours: [String: Bool] = [:] // `yyyy-MM-ddTHH` of the wet hours: whether snow falls
        for offset in -1...5 {
            let date = local.dateString(now, offset: offset)
            guard let start = local.startOfDay(date) else { continue }
            let mean = seasonalMean(city, dayOfYear: local.dayOfYear(start)) + anomaly(city, date)
            let range = 3 + 1.5 * Demo.unit(city.id, date, salt: 7) // half the day's swing: a 6–9 °C day
            let code = weatherCode(city, date, mean: mean)
            let wet = rainHours(city, date, code: code)
            var temperatures: [Double] = []
            var chances: [Int] = []
            for hour in 0..<24 {
                // coldest near 05:00, warmest near 15:00
                let t = mean + range * cos(2 * Double.pi * Double(hour - 15) / 24)
                let rounded = (t * 10).rounded() / 10
                temperatures.append(rounded)
                let chance = precipitation(code, wet: wet.contains(hour), city: city, hour: "\(date)T\(hour)")
                if wet.contains(hour) { snowyHours[date + "T" + LocalCalendar.twoDigits(hour)] = WeatherCondition.of(code).icon == "snow" }
                chances.append(chance)
                // Damper at night and when it rains.
                let humidity = 55 + Int(15 * cos(2 * Double.pi * Double(hour - 4) / 24)) + (wet.contains(hour) ? 20 : 0)
                hourly.append(Forecast.Hour(time: date + "T" + LocalCalendar.twoDigits(hour) + ":00", temperature: rounded,
                                            apparentTemperature: apparent(rounded), precipitationProbability: chance,
                                            weatherCode: wet.contains(hour) || wet.isEmpty ? code : 2, humidity: min(100, humidity)))
            }
            let sun = SunTimes.local(date, city: city)
            let wind = (6 + 22 * Demo.unit(city.id, date, salt: 13)).rounded()
            daily.append(Forecast.Day(date: date, high: temperatures.max(), low: temperatures.min(), weatherCode: code,
                                      precipitationProbability: chances.max(), sunrise: sun?.sunrise, sunset: sun?.sunset,
                                      uvIndexMax: uvIndex(city, dayOfYear: local.dayOfYear(start), code: code),
                                      windSpeedMax: wind, windGustsMax: (wind * 1.7).rounded(),
                                      windDirection: Int(360 * Demo.unit(city.id, date, salt: 17)),
                                      // 0.4 to 3 mm in each wet hour.
                                      precipitationSum: WeatherNumbers.tenth(wet.reduce(0) { $0 + 0.4 + 2.6 * Demo.unit(city.id, "\(date)T\($1)", salt: 31) })))
        }
        let (hour, minute) = local.hourMinute(now)
        let today = local.dateString(now)
        let current = hourly.first { $0.time == today + "T" + LocalCalendar.twoDigits(hour) + ":00" }
        // Quarter hours from the one now, wet in the day's wet hours (a little less at their edges).
        let quarterStart = now.timeIntervalSince1970 - now.timeIntervalSince1970.truncatingRemainder(dividingBy: 900)
        let quarters = (1...12).map { index -> Forecast.Quarter in
            let end = Date(timeIntervalSince1970: quarterStart + Double(index) * 900)
            let stamp = local.minuteString(end)
            let snowy = snowyHours[String(local.minuteString(end.addingTimeInterval(-900)).prefix(13))]
            let amount = snowy == nil ? 0 : WeatherNumbers.tenth(0.1 + 0.9 * Demo.unit(city.id, stamp, salt: 37))
            return Forecast.Quarter(time: stamp, precipitation: amount, snowfall: snowy == true ? WeatherNumbers.tenth(amount * 0.7) : 0)
        }
        return Forecast(source: id, fetchedAt: now,
                        current: current.map { Forecast.Current(time: today + "T" + LocalCalendar.twoDigits(hour) + ":"
                                                                    + LocalCalendar.twoDigits(minute / 15 * 15),
                                                                temperature: $0.temperature, apparentTemperature: $0.apparentTemperature,
                                                                weatherCode: $0.weatherCode) },
                        daily: daily, hourly: hourly, quarters: quarters, quarterKind: "demo")
    }

    /// Monthly mean temperatures (°C, January to December) of well-known cities, rounded from
    /// published climate normals, so that their demo figures look like their weather (latitude
    /// alone cannot tell London's mild winter from Seoul's cold one).
    static let normals: [String: [Double]] = [
        "seoul": [-2.4, 0.4, 5.7, 12.5, 17.8, 22.2, 24.9, 25.7, 21.2, 14.8, 7.2, 0.4],
        "busan": [3.2, 5.0, 8.9, 13.6, 17.5, 20.7, 24.4, 25.9, 22.4, 17.7, 11.7, 5.6],
        "tokyo": [5.4, 6.1, 9.4, 14.3, 18.8, 21.9, 25.7, 26.9, 23.3, 18.0, 12.5, 7.7],
        "new-york-city": [0.5, 1.7, 5.6, 11.7, 17.1, 22.3, 25.3, 24.7, 20.8, 14.7, 8.9, 3.6],
        "london": [5.2, 5.3, 7.6, 9.9, 13.3, 16.5, 18.7, 18.5, 15.7, 12.0, 8.0, 5.5],
        "paris": [5.0, 5.6, 8.8, 11.5, 15.2, 18.3, 20.5, 20.3, 16.9, 13.0, 8.3, 5.5],
        "moscow": [-6.2, -5.9, -0.7, 6.8, 13.5, 17.4, 19.7, 17.6, 11.9, 5.8, -0.5, -4.4],
        "yakutsk": [-38.6, -33.8, -20.1, -4.8, 7.5, 16.4, 19.5, 15.2, 6.1, -7.8, -27.0, -37.6],
        "dubai": [19.4, 20.5, 23.4, 27.5, 31.6, 33.6, 35.4, 35.6, 33.2, 29.7, 25.0, 21.0],
        "singapore": [26.6, 27.2, 27.6, 28.0, 28.4, 28.4, 28.0, 27.9, 27.7, 27.7, 27.0, 26.5],
        "sydney": [23.5, 23.4, 22.1, 19.5, 16.6, 14.2, 13.4, 14.5, 17.0, 19.1, 20.6, 22.3],
    ]

    /// The day's mean: the city's normals where known (interpolated between mid-months), else a
    /// latitude model: the yearly mean falls with latitude, the seasonal swing grows with it and
    /// peaks in late July (north) or mid-January (south). (The model knows no altitude: a high
    /// city such as Nairobi comes out as warm as the lowlands at its latitude.)
    func seasonalMean(_ city: City, dayOfYear: Int) -> Double {
        if let months = Self.normals[city.slug] {
            let position = (Double(dayOfYear) - 15.2) / (365.25 / 12) // 0 = mid-January
            let lower = Int(position.rounded(.down))
            let fraction = position - Double(lower)
            func month(_ index: Int) -> Double { months[((index % 12) + 12) % 12] }
            return month(lower) + (month(lower + 1) - month(lower)) * fraction
        }
        let absolute = abs(city.latitude)
        let annual = max(-15, 29 - 0.0066 * absolute * absolute)
        let swing = min(18, 0.2 * absolute)
        let peak = city.latitude >= 0 ? 202.0 : 18.0
        return annual + swing * cos(2 * Double.pi * (Double(dayOfYear) - peak) / 365.25)
    }

    /// A smooth day-to-day variation: about ±1 °C in the tropics, growing to ±3 °C from 30°
    /// of latitude (weather systems move temperatures more away from the equator).
    func anomaly(_ city: City, _ date: String) -> Double {
        let index = dayIndex(date)
        func noise(_ i: Int) -> Double { Demo.unit(city.id, String(i), salt: 3) * 2 - 1 }
        let size = 1 + 2 * min(1, abs(city.latitude) / 30)
        return size * (0.5 * noise(index) + 0.25 * noise(index - 1) + 0.25 * noise(index + 1))
    }

    func weatherCode(_ city: City, _ date: String, mean: Double) -> Int {
        let roll = Demo.unit(city.id, date, salt: 11)
        switch roll {
        case ..<0.35: return 0
        case ..<0.6: return 2
        case ..<0.8: return 3
        case ..<0.95: return mean < 1 ? 71 : 61
        default: return mean > 15 ? 95 : (mean < 1 ? 73 : 63)
        }
    }

    /// On a day of rain or snow, the hours it falls: one spell of three to eight hours starting
    /// anywhere in the day; none on a dry day.
    func rainHours(_ city: City, _ date: String, code: Int) -> Range<Int> {
        guard code >= 51 else { return 0..<0 }
        let start = Int(20 * Demo.unit(city.id, date, salt: 19))
        let length = 3 + Int(6 * Demo.unit(city.id, date, salt: 29))
        return start..<min(24, start + length)
    }

    /// The hour's chance of rain: high in the day's spell, low around it, by the sky otherwise.
    func precipitation(_ code: Int, wet: Bool, city: City, hour: String) -> Int {
        let jitter = Int(10 * Demo.unit(city.id, hour, salt: 31))
        if wet { return 70 + 2 * jitter }
        switch code {
        case 0: return 0
        case 2: return jitter
        case 3: return 10 + jitter
        default: return 20 + jitter
        }
    }

    /// The day's highest UV index: from the noon sun's height (12.5 straight overhead, falling
    /// off steeply as it sinks), cut by cloud and rain.
    func uvIndex(_ city: City, dayOfYear: Int, code: Int) -> Double {
        let declination = 23.44 * sin(2 * Double.pi * Double(dayOfYear - 81) / 365.25)
        let noonElevation = max(0, 90 - abs(city.latitude - declination))
        let clearSky = 12.5 * pow(sin(noonElevation * Double.pi / 180), 2.5)
        let cloud = code == 0 ? 1.0 : (code <= 2 ? 0.8 : (code == 3 ? 0.5 : 0.3))
        return (clearSky * cloud * 10).rounded() / 10
    }

    func apparent(_ t: Double) -> Double {
        let feels = t < 10 ? t - 2.5 : (t > 25 ? t + 1.5 : t - 0.5)
        return (feels * 10).rounded() / 10
    }

    private func dayIndex(_ date: String) -> Int {
        let parts = date.split(separator: "-").compactMap { Int($0) }
        return parts.count == 3 ? parts[0] * 372 + parts[1] * 31 + parts[2] : 0
    }
}

/// What the demo's figures are drawn from.
enum Demo {
    /// A number in [0, 1) from the city, a string and a salt (SplitMix64; stable across runs,
    /// unlike Swift's per-process seeded `Hasher`).
    static func unit(_ id: Int64, _ text: String, salt: UInt64) -> Double {
        var x = UInt64(bitPattern: id) &* 0x9E3779B97F4A7C15 &+ salt
        for byte in text.utf8 { x = (x ^ UInt64(byte)) &* 0x100000001B3 }
        x = (x ^ (x >> 30)) &* 0xBF58476D1CE4E5B9
        x = (x ^ (x >> 27)) &* 0x94D049BB133111EB
        x ^= x >> 31
        return Double(x >> 11) / Double(1 << 53)
    }
}
