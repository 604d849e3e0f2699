import Foundation

/// Offline weather: deterministic, plausible figures from latitude, season, hour of day and a
/// seeded day-to-day variation, so the site can be browsed without a network and tests are
/// reproducible. Pages say plainly that these are demo figures.
public struct DemoProvider: WeatherProvider {
    public let id = "demo"

    public init() {}

    public func covers(_ city: City) -> Bool { true }

    public func forecast(for city: City, now: Date) throws -> Forecast {
        let local = LocalCalendar(city.timeZone)
        var daily: [Forecast.Day] = []
        var hourly: [Forecast.Hour] = []
        for offset in -1...5 {
            let date = local.dateString(now, offset: offset)
            guard let start = local.startOfDay(date) else { continue }
            let mean = seasonalMean(latitude: city.latitude, dayOfYear: local.dayOfYear(start)) + anomaly(city, date)
            let range = 5 + 4 * unit(city.id, date, salt: 7) // half the day's swing, 5–9 °C
            let code = weatherCode(city, date, mean: mean)
            var temperatures: [Double] = []
            for hour in 0..<24 {
                // coldest near 05:00, warmest near 15:00
                let t = mean + range * cos(2 * Double.pi * Double(hour - 15) / 24)
                let rounded = (t * 10).rounded() / 10
                temperatures.append(rounded)
                hourly.append(Forecast.Hour(time: date + String(format: "T%02d:00", hour), temperature: rounded,
                                            apparentTemperature: apparent(rounded), precipitationProbability: precipitation(code),
                                            weatherCode: code))
            }
            daily.append(Forecast.Day(date: date, high: temperatures.max(), low: temperatures.min(), weatherCode: code,
                                      precipitationProbability: precipitation(code)))
        }
        let (hour, minute) = local.hourMinute(now)
        let today = local.dateString(now)
        let current = hourly.first { $0.time == today + String(format: "T%02d:00", hour) }
        return Forecast(source: id, fetchedAt: now,
                        current: current.map { Forecast.Current(time: today + String(format: "T%02d:%02d", hour, minute / 15 * 15),
                                                                temperature: $0.temperature, apparentTemperature: $0.apparentTemperature,
                                                                weatherCode: $0.weatherCode) },
                        daily: daily, hourly: hourly)
    }

    /// Yearly mean falls with latitude; the seasonal swing grows with it and peaks in late July
    /// (north) or mid-January (south).
    func seasonalMean(latitude: Double, dayOfYear: Int) -> Double {
        let absolute = abs(latitude)
        let annual = 28 - 0.45 * absolute
        let swing = min(16, 0.36 * absolute)
        let peak = latitude >= 0 ? 202.0 : 18.0
        return annual + swing * cos(2 * Double.pi * (Double(dayOfYear) - peak) / 365.25)
    }

    /// A smooth day-to-day variation of up to about ±5 °C.
    func anomaly(_ city: City, _ date: String) -> Double {
        let index = dayIndex(date)
        func noise(_ i: Int) -> Double { unit(city.id, String(i), salt: 3) * 2 - 1 }
        return 5 * (0.5 * noise(index) + 0.25 * noise(index - 1) + 0.25 * noise(index + 1))
    }

    func weatherCode(_ city: City, _ date: String, mean: Double) -> Int {
        let roll = unit(city.id, date, salt: 11)
        switch roll {
        case ..<0.35: return 0
        case ..<0.6: return 2
        case ..<0.8: return 3
        case ..<0.95: return mean < 1 ? 71 : 61
        default: return mean > 15 ? 95 : (mean < 1 ? 73 : 63)
        }
    }

    func precipitation(_ code: Int) -> Int {
        switch code {
        case 0: return 0
        case 2: return 10
        case 3: return 25
        default: return 80
        }
    }

    func apparent(_ t: Double) -> Double {
        let feels = t < 10 ? t - 2.5 : (t > 25 ? t + 1.5 : t - 0.5)
        return (feels * 10).rounded() / 10
    }

    private func dayIndex(_ date: String) -> Int {
        let parts = date.split(separator: "-").compactMap { Int($0) }
        return parts.count == 3 ? parts[0] * 372 + parts[1] * 31 + parts[2] : 0
    }

    /// A number in [0, 1) from the city, a string and a salt (SplitMix64; stable across runs,
    /// unlike Swift's per-process seeded `Hasher`).
    private func unit(_ id: Int64, _ text: String, salt: UInt64) -> Double {
        var x = UInt64(bitPattern: id) &* 0x9E3779B97F4A7C15 &+ salt
        for byte in text.utf8 { x = (x ^ UInt64(byte)) &* 0x100000001B3 }
        x = (x ^ (x >> 30)) &* 0xBF58476D1CE4E5B9
        x = (x ^ (x >> 27)) &* 0x94D049BB133111EB
        x ^= x >> 31
        return Double(x >> 11) / Double(1 << 53)
    }
}
