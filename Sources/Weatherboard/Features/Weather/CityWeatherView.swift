import Foundation

/// The view data of a city's weather: three day cards, the headline, the hourly chart, the
/// five-day strip and the provenance line. Pure: the same forecast and clock give the same page.
struct CityWeatherView {
    let city: City
    let report: WeatherReport
    let now: Date
    let language: Language
    let strings: (String, [String: String]) -> String

    var data: [String: Any] {
        let local = LocalCalendar(city.timeZone)
        let forecast = report.forecast
        let dates = (-1...1).map { local.dateString(now, offset: $0) }
        let days = dates.map { forecast.day($0) }
        var view: [String: Any] = [:]
        let names = ["yesterday", "today", "tomorrow"]
        view["cards"] = zip(names, zip(dates, days)).map { name, pair in card(name, date: pair.0, day: pair.1) }
        if let today = days[1], let yesterday = days[0], let t = today.high, let y = yesterday.high {
            let (key, degrees) = Comparison.phrase(today: t, reference: y)
            view["headline"] = strings(key, ["n": String(degrees)])
            view["comparisonBasis"] = strings("compare_basis", ["today": format(t), "yesterday": format(y)])
        }
        if let today = days[1]?.high, let tomorrow = days[2]?.high {
            let (key, degrees) = Comparison.phrase(today: tomorrow, reference: today)
            view["tomorrowLine"] = strings("tomorrow_" + key, ["n": String(degrees)])
        }
        if let today = days[1], let high = today.high, let low = today.low {
            view["headerClass"] = gradientClasses(high: high, low: low)
        }
        view["chart"] = chart(dates: dates, forecast: forecast, local: local)
        view["strip"] = (1...5).compactMap { offset -> [String: Any]? in
            let date = local.dateString(now, offset: offset)
            guard let day = forecast.day(date) else { return nil }
            let condition = WeatherCondition.of(day.weatherCode)
            return ["date": date, "label": dayLabel(date, local: local), "high": rounded(day.high), "low": rounded(day.low),
                    "icon": condition.icon, "condition": strings(condition.key, [:]), "chipClass": "chip-" + Palette.classSuffix(day.high ?? 0)]
        }
        let sourceName = ["open-meteo": "Open-Meteo", "kma": strings("source_kma", [:]), "demo": strings("source_demo", [:])]
        let fetched = local.hourMinute(forecast.fetchedAt)
        let zone = city.timeZone.abbreviation(for: forecast.fetchedAt) ?? city.timezone
        view["provenance"] = [
            "source": report.source,
            "text": strings(report.source == "cache" ? "provenance_cached" : "provenance", [
                "source": sourceName[forecast.source] ?? forecast.source,
                "time": String(format: "%02d:%02d", fetched.hour, fetched.minute), "zone": zone,
            ]),
            "isDemo": forecast.source == "demo",
        ]
        return view
    }

    private func card(_ name: String, date: String, day: Forecast.Day?) -> [String: Any] {
        let local = LocalCalendar(city.timeZone)
        var card: [String: Any] = ["day": name, "title": strings("day_" + name, [:]), "dateLabel": dayLabel(date, local: local), "date": date]
        guard let day else {
            card["missing"] = true
            return card
        }
        let condition = WeatherCondition.of(day.weatherCode)
        card["highRaw"] = day.high.map(format) ?? ""
        card["lowRaw"] = day.low.map(format) ?? ""
        card["high"] = rounded(day.high)
        card["low"] = rounded(day.low)
        card["icon"] = condition.icon
        card["condition"] = strings(condition.key, [:])
        card["precipitation"] = day.precipitationProbability.map { String($0) } ?? "–"
        card["classes"] = gradientClasses(high: day.high ?? 0, low: day.low ?? 0)
        if name == "today", let current = report.forecast.current {
            card["current"] = rounded(current.temperature)
            card["feelsLike"] = rounded(current.apparentTemperature)
        }
        return card
    }

    /// `hi-N lo-M ink-dark|ink-light`: the gradient from the high's colour to the low's and the
    /// text colour that contrasts more with both ends.
    private func gradientClasses(high: Double, low: Double) -> String {
        let ink = Palette.ink(on: [Palette.color(high), Palette.color(low)])
        return "hi-\(Palette.classSuffix(high)) lo-\(Palette.classSuffix(low)) \(ink.isDark ? "ink-dark" : "ink-light")"
    }

    private func dayLabel(_ date: String, local: LocalCalendar) -> String {
        guard let start = local.startOfDay(date) else { return date }
        return DateFormatting.string(start.addingTimeInterval(12 * 3600), pattern: language == .ko ? "M월 d일 (E)" : "EEE d MMM",
                                     language: language, timeZone: city.timeZone)
    }

    // MARK: - Chart

    private func chart(dates: [String], forecast: Forecast, local: LocalCalendar) -> [String: Any] {
        let width = 720.0, height = 260.0, left = 44.0, right = 12.0, top = 16.0, bottom = 34.0
        let series = dates.map { date in forecast.hours(on: date).compactMap { hour -> (Int, Double)? in
            guard let t = hour.temperature, let h = Int(hour.time.dropFirst(11).prefix(2)) else { return nil }
            return (h, t)
        } }
        let all = series.flatMap { $0.map(\.1) }
        guard let minimum = all.min(), let maximum = all.max() else { return ["empty": true] }
        let low = (minimum - 1).rounded(.down), high = (maximum + 1).rounded(.up)
        func x(_ hour: Double) -> Double { left + (width - left - right) * hour / 23 }
        func y(_ t: Double) -> Double { top + (height - top - bottom) * (high - t) / max(1, high - low) }
        let names = ["yesterday", "today", "tomorrow"]
        let lines = zip(names, series).map { name, points -> [String: Any] in
            ["day": name, "label": strings("day_" + name, [:]),
             "points": points.map { String(format: "%.1f,%.1f", x(Double($0.0)), y($0.1)) }.joined(separator: " ")]
        }
        let step = max(1.0, ((high - low) / 4).rounded(.up))
        var yTicks: [[String: Any]] = []
        var t = low
        while t <= high {
            yTicks.append(["y": String(format: "%.1f", y(t)), "labelY": String(format: "%.1f", y(t) + 4), "label": "\(Int(t))°"])
            t += step
        }
        let xTicks = stride(from: 0, through: 23, by: 3).map { hour -> [String: Any] in
            ["x": String(format: "%.1f", x(Double(hour))), "label": String(format: "%02d", hour)]
        }
        let (hour, minute) = local.hourMinute(now)
        return [
            "width": Int(width), "height": Int(height), "lines": lines, "xTicks": xTicks, "yTicks": yTicks,
            "nowX": String(format: "%.1f", x(Double(hour) + Double(minute) / 60)), "top": top, "bottomY": height - bottom,
            "left": left, "right": width - right, "axisY": height - bottom + 18,
            "title": strings("chart_title", [:]), "nowLabel": strings("chart_now", [:]),
        ]
    }

    private func rounded(_ value: Double?) -> String {
        guard let value else { return "–" }
        let r = Int(value.rounded())
        return r == 0 ? "0" : String(r)
    }

    private func format(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(format: "%.1f", value)
    }
}
