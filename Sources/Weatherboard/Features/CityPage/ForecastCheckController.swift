import Foundation
import HTTPServer

/// `GET /city/{slug}/forecast-check`: the last 30 days' forecasts for the city, each as the site
/// fetched it the day before, against what the same provider gave for the day once it was over:
/// a chart of the highs, a table, and the score (highs within 2°, rain right).
struct ForecastCheckController {
    let pages: Pages
    let index: CityIndex
    let database: AppDatabase
    let clock: @Sendable () -> Date

    func addRoutes(to router: Router<AppContext>) {
        router.get("/city/{slug}/forecast-check", show)
    }

    func show(_ request: Request, _ context: AppContext) throws -> Response {
        let city = try index.city(named: request)
        let language = context.language
        let strings = { (key: String, arguments: [String: String]) in pages.string(key, language, arguments) }
        let today = LocalCalendar(city.timeZone).dateString(clock())
        let days = try database.readStatement { try ForecastHistory.scored(cityID: city.id, before: today, $0) }
        let rows = days.map { day in
            ForecastCheckPage.Row(
                day: day.day, label: CivilDate(day.day).map { DayLabels.label($0, language) } ?? day.day,
                forecastHighRaw: day.forecastHigh.map(WeatherNumbers.oneDecimal) ?? "",
                observedHighRaw: day.observedHigh.map(WeatherNumbers.oneDecimal) ?? "",
                forecastHigh: Self.degrees(day.forecastHigh), observedHigh: Self.degrees(day.observedHigh),
                hit: day.highHit == true ? "true" : "false", hitText: strings(day.highHit == true ? "check_yes" : "check_no", [:]),
                rainForecast: day.forecastChance.map { String($0) + "%" } ?? "–",
                rainHit: day.rainHit.map { $0 ? "true" : "false" } ?? "",
                rainText: day.rainHit.map { strings($0 ? "check_yes" : "check_no", [:]) } ?? "–",
                source: CityWeatherView.sourceName(day.source, strings: strings))
        }
        let highHits = days.filter { $0.highHit == true }.count
        let rainScored = days.compactMap(\.rainHit)
        var view = ForecastCheckPage(layout: pages.layout(context, title: strings("check_title", ["city": city.name(language)])),
                                     heading: strings("check_title", ["city": city.name(language)]), slug: city.slug,
                                     cityName: city.name(language), rows: rows, chart: Self.chart(days.reversed()))
        if !days.isEmpty {
            view.summary = strings("check_summary", ["n": String(days.count), "hits": String(highHits),
                                                     "percent": String(highHits * 100 / days.count), "tolerance": String(ForecastHistory.highTolerance)])
            if !rainScored.isEmpty {
                view.rainSummary = strings("check_rain_summary", ["hits": String(rainScored.filter { $0 }.count), "n": String(rainScored.count)])
            }
            view.highHits = String(highHits)
            view.scored = String(days.count)
        }
        return pages.html(context) { Templates.forecast_check(view, &$0, $1) }
    }

    static func degrees(_ value: Double?) -> String { value.map { String(Comparison.wholeDegrees($0)) + "°" } ?? "–" }

    /// Two lines over the days, oldest left: the highs forecast and the highs that followed.
    static func chart(_ days: [ForecastHistory]) -> ForecastCheckPage.Chart? {
        let values = days.flatMap { [$0.forecastHigh, $0.observedHigh].compactMap { $0 } }
        guard days.count >= 2, let low = values.min(), let high = values.max() else { return nil }
        let width = 600.0, height = 160.0, pad = 12.0
        let span = max(high - low, 1)
        func x(_ index: Int) -> Double { pad + Double(index) * (width - 2 * pad) / Double(days.count - 1) }
        func y(_ value: Double) -> Double { height - pad - (value - low) / span * (height - 2 * pad) }
        func line(_ pick: (ForecastHistory) -> Double?) -> String {
            days.enumerated().compactMap { index, day in pick(day).map { WeatherNumbers.oneDecimal(x(index)) + "," + WeatherNumbers.oneDecimal(y($0)) } }
                .joined(separator: " ")
        }
        return ForecastCheckPage.Chart(forecast: line(\.forecastHigh), observed: line(\.observedHigh))
    }
}

struct ForecastCheckPage {
    struct Row {
        var day: String
        var label: String
        var forecastHighRaw: String
        var observedHighRaw: String
        var forecastHigh: String
        var observedHigh: String
        var hit: String
        var hitText: String
        var rainForecast: String
        var rainHit: String
        var rainText: String
        var source: String
    }

    struct Chart {
        var forecast: String
        var observed: String
    }

    var layout: LayoutView
    var heading: String
    var slug: String
    var cityName: String
    var rows: [Row]
    var hasRows: Bool { !rows.isEmpty }
    var chart: Chart?
    var summary: String?
    var rainSummary: String?
    var highHits = "0"
    var scored = "0"
}
