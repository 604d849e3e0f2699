import Foundation

/// The view data of a city's weather: three day cards, the headline, the hourly chart, the
/// five-day strip and the provenance line. Pure: the same forecast and clock give the same page.
struct CityWeatherView {
    let city: City
    let report: WeatherReport
    let now: Date
    let language: Language
    let strings: (String, [String: String]) -> String

    /// The view for `city_weather.mustache`.
    var view: CityWeather {
        let local = LocalCalendar(city.timeZone)
        let forecast = report.forecast
        let dates = (-1...1).map { local.dateString(now, offset: $0) }
        let days = dates.map { forecast.day($0) }
        var view = CityWeather(cityName: city.name(language), country: city.place(language), countryCode: city.country, hasWeather: true)
        let names = ["yesterday", "today", "tomorrow"]
        view.cards = zip(names, zip(dates, days)).map { name, pair in card(name, date: pair.0, day: pair.1) }
        if let today = days[1], let yesterday = days[0], let t = today.high, let y = yesterday.high {
            let (key, degrees) = Comparison.phrase(today: t, reference: y)
            view.headline = strings(key, ["n": String(degrees)])
            // In the whole degrees the headline subtracts, so that the two add up (12.5° and 9° read "4°").
            view.comparisonBasis = strings("compare_basis", ["today": rounded(t), "yesterday": rounded(y)])
        }
        if let today = days[1]?.high, let tomorrow = days[2]?.high {
            let (key, degrees) = Comparison.phrase(today: tomorrow, reference: today)
            view.tomorrowLine = strings("tomorrow_" + key, ["n": String(degrees)])
        }
        if let today = days[1] {
            view.headerClass = gradientClasses(high: today.high, low: today.low)
        }
        view.chart = chart(dates: dates, forecast: forecast, local: local)
        view.strip = (1...5).compactMap { offset -> CityWeather.StripDay? in
            let date = local.dateString(now, offset: offset)
            guard let day = forecast.day(date) else { return nil }
            let condition = WeatherCondition.of(day.weatherCode)
            return CityWeather.StripDay(date: date, label: dayLabel(date, local: local), high: rounded(day.high), low: rounded(day.low),
                                        icon: condition.icon, condition: strings(condition.key, [:]),
                                        chipClass: "chip-" + (day.high.map(Palette.classSuffix) ?? Palette.noValueSuffix))
        }
        view.provenance = CityWeather.Provenance(
            source: report.source, text: Self.provenance(report, city: city, now: now, strings: strings), isDemo: forecast.source == "demo")
        return view
    }

    /// "Open-Meteo · updated 16:11 GMT+9" for data fetched today (the city's today); "… updated
    /// 2 d ago" for older data, so old data never reads as fresh.
    static func provenance(_ report: WeatherReport, city: City, now: Date, strings: (String, [String: String]) -> String) -> String {
        let forecast = report.forecast
        let local = LocalCalendar(city.timeZone)
        let sourceName = ["open-meteo": "Open-Meteo", "kma": strings("source_kma", [:]), "demo": strings("source_demo", [:])]
        let when: String
        if local.dateString(forecast.fetchedAt) == local.dateString(now) {
            let fetched = local.hourMinute(forecast.fetchedAt)
            let zone = city.timeZone.abbreviation(for: forecast.fetchedAt) ?? city.timezone
            when = String(format: "%02d:%02d", fetched.hour, fetched.minute) + " " + zone
        } else {
            let hours = max(1, Int(min(1e6, max(0, now.timeIntervalSince(forecast.fetchedAt) / 3600))))
            when = hours < 24 ? strings("time_hours", ["n": String(hours)]) : strings("time_days", ["n": String(hours / 24)])
        }
        return strings(report.source == "cache" ? "provenance_cached" : "provenance",
                       ["source": sourceName[forecast.source] ?? forecast.source, "when": when])
    }

    /// A reading older than this is not shown as "now".
    static let currentReadingLifetime: TimeInterval = 3 * 3600

    private func card(_ name: String, date: String, day: Forecast.Day?) -> CityWeather.Card {
        let local = LocalCalendar(city.timeZone)
        var card = CityWeather.Card(day: name, title: strings("day_" + name, [:]), dateLabel: dayLabel(date, local: local), date: date)
        guard let day else {
            card.missing = true
            return card
        }
        let condition = WeatherCondition.of(day.weatherCode)
        card.highRaw = day.high.map(format) ?? ""
        card.lowRaw = day.low.map(format) ?? ""
        card.high = rounded(day.high)
        card.low = rounded(day.low)
        card.icon = condition.icon
        card.condition = strings(condition.key, [:])
        card.precipitation = day.precipitationProbability.map { String($0) } ?? "–"
        card.classes = gradientClasses(high: day.high, low: day.low)
        if name == "today", let current = report.forecast.current,
           now.timeIntervalSince(report.forecast.fetchedAt) < Self.currentReadingLifetime {
            card.current = rounded(current.temperature)
            card.feelsLike = rounded(current.apparentTemperature)
        }
        return card
    }

    /// `hi-N lo-M`: the gradient from the high's colour to the low's (text sits on plates over
    /// it, see `Palette.Plate`). A missing value has the neutral colour (`hi-none`), never the
    /// colour of 0 °C.
    private func gradientClasses(high: Double?, low: Double?) -> String {
        "hi-\(high.map(Palette.classSuffix) ?? Palette.noValueSuffix) lo-\(low.map(Palette.classSuffix) ?? Palette.noValueSuffix)"
    }

    private func dayLabel(_ date: String, local: LocalCalendar) -> String {
        guard let start = local.startOfDay(date) else { return date }
        return DateFormatting.string(start.addingTimeInterval(12 * 3600), pattern: language == .ko ? "M월 d일 (E)" : "EEE d MMM",
                                     language: language, timeZone: city.timeZone)
    }

    // MARK: - Chart

    private func chart(dates: [String], forecast: Forecast, local: LocalCalendar) -> CityWeather.Chart? {
        let width = 720.0, height = 260.0, left = 44.0, right = 12.0, top = 16.0, bottom = 34.0
        let series = dates.map { date in forecast.hours(on: date).compactMap { hour -> (Int, Double)? in
            guard let t = hour.temperature, let h = Int(hour.time.dropFirst(11).prefix(2)) else { return nil }
            return (h, t)
        } }
        let all = series.flatMap { $0.map(\.1) }
        guard let minimum = all.min(), let maximum = all.max() else { return nil }
        let low = (minimum - 1).rounded(.down), high = (maximum + 1).rounded(.up)
        func x(_ hour: Double) -> Double { left + (width - left - right) * hour / 23 }
        func y(_ t: Double) -> Double { top + (height - top - bottom) * (high - t) / max(1, high - low) }
        func number(_ value: Double) -> String { String(format: "%.1f", value) }
        let names = ["yesterday", "today", "tomorrow"]
        // A day without hourly values gets no line and no legend entry (a partial answer).
        let lines = zip(names, series).filter { !$0.1.isEmpty }.map { name, points in
            CityWeather.Chart.Line(day: name, label: strings("day_" + name, [:]),
                                   points: points.map { "\(number(x(Double($0.0)))),\(number(y($0.1)))" }.joined(separator: " "))
        }
        // About four ticks on a round step (1, 2, 5, 10 or 20 degrees), at multiples of it; never
        // more than six, whatever the values' spread (checked forecasts span at most 170 degrees).
        let step = [1.0, 2, 5, 10, 20].first { (high - low) / $0 <= 5 } ?? ((high - low) / 5).rounded(.up)
        var yTicks: [CityWeather.Chart.YTick] = []
        var t = (low / step).rounded(.up) * step
        while t <= high && yTicks.count < 6 {
            yTicks.append(CityWeather.Chart.YTick(y: number(y(t)), labelY: number(y(t) + 4), label: "\(Comparison.wholeDegrees(t))°",
                                                  left: number(left), right: number(width - right)))
            t += step
        }
        let xTicks = stride(from: 0, through: 23, by: 3).map { hour in
            CityWeather.Chart.XTick(x: number(x(Double(hour))), axisY: number(height - bottom + 18), label: String(format: "%02d", hour))
        }
        let (hour, minute) = local.hourMinute(now)
        return CityWeather.Chart(
            width: Int(width), height: Int(height), title: strings("chart_title", [:]), yTicks: yTicks, xTicks: xTicks,
            nowX: number(x(Double(hour) + Double(minute) / 60)), top: number(top), bottomY: number(height - bottom),
            nowLabel: strings("chart_now", [:]), lines: lines,
            summary: zip(names, series).compactMap { name, points -> CityWeather.Chart.Summary? in
                // The chart in words, for people who cannot see it: each day's lowest and highest hour.
                guard let coldest = points.min(by: { $0.1 < $1.1 }), let warmest = points.max(by: { $0.1 < $1.1 }) else { return nil }
                return CityWeather.Chart.Summary(text: strings("chart_summary_day", [
                    "day": strings("day_" + name, [:]), "low": String(Comparison.wholeDegrees(coldest.1)),
                    "lowTime": String(format: "%02d:00", coldest.0), "high": String(Comparison.wholeDegrees(warmest.1)),
                    "highTime": String(format: "%02d:00", warmest.0),
                ]))
            })
    }

    private func rounded(_ value: Double?) -> String {
        guard let value else { return "–" }
        return String(Comparison.wholeDegrees(value))
    }

    private func format(_ value: Double) -> String {
        Int(exactly: value).map { String($0) } ?? String(format: "%.1f", value)
    }
}

/// The view for `city_weather.mustache`: the header, three day cards, the hourly chart, the
/// five-day strip and the provenance line.
struct CityWeather {
    struct Card {
        var day: String
        var title: String
        var dateLabel: String
        var date: String
        var missing = false
        var highRaw = ""
        var lowRaw = ""
        var high = ""
        var low = ""
        var icon = ""
        var condition = ""
        var precipitation = ""
        var classes = ""
        var current: String?
        var feelsLike = ""
    }

    struct Chart {
        struct Line {
            var day: String
            var label: String
            var points: String
        }
        struct YTick {
            var y: String
            var labelY: String
            var label: String
            var left: String
            var right: String
        }
        struct XTick {
            var x: String
            var axisY: String
            var label: String
        }
        var width: Int
        var height: Int
        var title: String
        var yTicks: [YTick]
        var xTicks: [XTick]
        var nowX: String
        var top: String
        var bottomY: String
        var nowLabel: String
        var lines: [Line]
        struct Summary {
            var text: String
        }
        var summary: [Summary]
    }

    struct StripDay {
        var date: String
        var label: String
        var high: String
        var low: String
        var icon: String
        var condition: String
        var chipClass: String
    }

    struct Provenance {
        var source: String
        var text: String
        var isDemo: Bool
    }

    var cityName: String
    /// Where the city is, in the reader's language ("South Korea", "Illinois, United States").
    var country: String
    /// ISO 3166-1 alpha-2, for tools (`data-country`).
    var countryCode: String
    var hasWeather: Bool
    var headerClass = ""
    var headline: String?
    var comparisonBasis: String?
    var tomorrowLine: String?
    var cards: [Card] = []
    var chart: Chart?
    var strip: [StripDay] = []
    var provenance: Provenance?
}
