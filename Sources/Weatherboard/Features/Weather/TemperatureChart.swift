import Foundation

/// The hourly temperature chart of yesterday, today and tomorrow as SVG geometry: a line per
/// day, round ticks, the "now" marker, and the chart said in words.
struct TemperatureChart {
    let dates: [String]
    let forecast: Forecast
    let local: LocalCalendar
    let now: Date
    let strings: (String, [String: String]) -> String

    var view: CityWeather.Chart? {
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
        func number(_ value: Double) -> String { WeatherNumbers.oneDecimal(value) }
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
            CityWeather.Chart.XTick(x: number(x(Double(hour))), axisY: number(height - bottom + 18), label: LocalCalendar.twoDigits(hour))
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
                    "lowTime": LocalCalendar.twoDigits(coldest.0) + ":00", "high": String(Comparison.wholeDegrees(warmest.1)),
                    "highTime": LocalCalendar.twoDigits(warmest.0) + ":00",
                ]))
            })
    }
}
