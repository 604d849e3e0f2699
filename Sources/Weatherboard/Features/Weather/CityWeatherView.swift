import Foundation

/// The view data of a city's weather: three day cards, the headline, the hourly chart, the
/// five-day strip and the provenance line. Pure: the same forecast and clock give the same page.
struct CityWeatherView {
    let city: City
    let report: WeatherReport
    let now: Date
    let language: Language
    /// What yesterday's forecast said of today (`ForecastHistory`), when the site kept it.
    var forecastForToday: ForecastHistory? = nil
    /// The normal for today's date (`ClimateNormals`), when known.
    var normal: ClimateNormals.Day? = nil
    /// What people reported in each of today's hours, and how many such reports mark an hour's
    /// forecast missed.
    var hourReports = HourReports()
    var missedAfter = HourReports.defaultMissedAfter
    /// The most severe official warning in force in the city, by its event's name: a dry
    /// sentence says it (`RainOutlook.tempered`).
    var warning: String? = nil
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
                + (RainOutlook.tomorrowChange(today: days[1], tomorrow: days[2]).map { strings($0, [:]) } ?? "")
        }
        if let today = days[1] {
            view.headerClass = gradientClasses(high: today.high, low: today.low)
        }
        view.chart = TemperatureChart(dates: dates, forecast: forecast, local: local, now: now, strings: strings).view
        let rainDays = zip(["today", "tomorrow"], dates.dropFirst()).compactMap { name, date in rainDay(name, date: date, forecast: forecast) }
        view.rainHours = rainDays.isEmpty ? nil : CityWeather.RainHours(days: rainDays)
        view.air = air(forecast.airQuality)
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
        return strings(report.source == "cache" ? "provenance_cached" : "provenance",
                       ["source": sourceName(forecast.source, strings: strings),
                        "when": updated(forecast.fetchedAt, local: local, city: city, now: now, strings: strings)])
    }

    /// "16:11 GMT+9" for something fetched on the city's today, "2 h ago" otherwise.
    static func updated(_ fetchedAt: Date, local: LocalCalendar, city: City, now: Date,
                        strings: (String, [String: String]) -> String) -> String {
        if local.dateString(fetchedAt) == local.dateString(now) {
            let zone = city.timeZone.abbreviation(for: fetchedAt) ?? city.timezone
            return local.clockString(fetchedAt) + " " + zone
        }
        let hours = max(1, Int(min(1e6, max(0, now.timeIntervalSince(fetchedAt) / 3600))))
        return hours < 24 ? strings("time_hours", ["n": String(hours)]) : strings("time_days", ["n": String(hours / 24)])
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
        // A day that is over has no chance of rain left to give; today's is for the hours left.
        if name != "yesterday" {
            let chance = name == "today" ? restOfToday(day, date: date) : (day.precipitationProbability, 0)
            card.precipitation = chance.0.map { String($0) } ?? "–"
            card.precipitationHours = "\(chance.1)-24"
            card.precipitationText = chance.1 == 0 ? strings("precipitation", [:]) + " " + card.precipitation! + "%"
                : strings("precipitation_rest", ["p": card.precipitation!, "from": RainOutlook.clock(chance.1)])
        }
        card.classes = gradientClasses(high: day.high, low: day.low)
        if name == "today" {
            if let current = report.forecast.current, now.timeIntervalSince(report.forecast.fetchedAt) < Self.currentReadingLifetime {
                card.current = rounded(current.temperature)
                card.feelsLike = rounded(current.apparentTemperature)
            }
            card.sameHour = sameHour(today: date, yesterday: local.dateString(now, offset: -1))
            card.forecastCheck = forecastCheck(today: day)
            card.normal = normalLine(today: day)
            let hour = LocalCalendar(city.timeZone).hourMinute(now).hour
            let nowcast = Nowcast(report.forecast, now: now, local: local)
            card.nowcast = nowcast.map(nowcastView)
            let outlook = RainOutlook(hours: report.forecast.hours(on: date), from: hour, nowcast: nowcast)
            card.rainSummary = outlook.isKnown && outlook.spells.isEmpty ? tempered(outlook.sentence(strings: strings), hour: hour)
                : outlook.sentence(strings: strings)
            card.rainTotals = rainTotals(today: day, yesterday: report.forecast.day(local.dateString(now, offset: -1)))
            card.wear = wear(today: date, yesterday: local.dateString(now, offset: -1), hour: hour, nowcast: nowcast)
            card.details = details(day, date: date, hour: hour)
        }
        return card
    }

    /// Today's highest hourly chance from the hour now on, and that hour (the sentence beside it
    /// speaks of the same hours: a wet morning over is not a chance left); the day's own figure
    /// from midnight when the provider gave no hourly chances.
    private func restOfToday(_ day: Forecast.Day, date: String) -> (Int?, Int) {
        let hour = LocalCalendar(city.timeZone).hourMinute(now).hour
        let left = report.forecast.hours(on: date).filter { (Int($0.time.dropFirst(11).prefix(2)) ?? -1) >= hour }
            .compactMap(\.precipitationProbability)
        guard let highest = left.max() else { return (day.precipitationProbability, 0) }
        return (highest, hour)
    }

    /// Yesterday's forecast for today beside today's high in the forecast now.
    private func forecastCheck(today: Forecast.Day) -> CityWeather.ForecastCheckLine? {
        guard let kept = forecastForToday, kept.day == today.date, let forecastHigh = kept.forecastHigh, let high = today.high else { return nil }
        let rain = kept.forecastChance.map { strings($0 >= RainOutlook.likely ? "check_rain_likely" : "check_rain_unlikely", ["p": String($0)]) }
        return CityWeather.ForecastCheckLine(
            forecastHigh: format(forecastHigh), currentHigh: format(high),
            text: strings(rain == nil ? "check_line_no_rain" : "check_line", [
                "high": rounded(forecastHigh), "rain": rain ?? "", "source": Self.sourceName(kept.source, strings: strings), "now": rounded(high),
            ]), href: "/city/\(city.slug)/forecast-check")
    }

    /// Today's expected precipitation and yesterday's, where the provider gives both and either
    /// is something to one decimal (two dry days need no line).
    private func rainTotals(today: Forecast.Day, yesterday: Forecast.Day?) -> CityWeather.RainTotals? {
        guard let expected = today.precipitationSum, let fell = yesterday?.precipitationSum,
              WeatherNumbers.tenth(expected) > 0 || WeatherNumbers.tenth(fell) > 0 else { return nil }
        let (todayText, yesterdayText) = (WeatherNumbers.oneDecimal(expected), WeatherNumbers.oneDecimal(fell))
        return CityWeather.RainTotals(today: todayText, yesterday: yesterdayText,
                                      text: strings("rain_totals", ["today": todayText, "yesterday": yesterdayText]))
    }

    /// A dry sentence as `RainOutlook.tempered` says it, with this hour's reports.
    private func tempered(_ sentence: String, hour: Int) -> String {
        RainOutlook.tempered(sentence, warning: warning, wetReports: hourReports.hours[LocalCalendar.twoDigits(hour)]?.wet ?? 0,
                             reportsNeeded: missedAfter, strings: strings)
    }

    /// The next two hours' sentence and strip, with where they came from and how old they are.
    private func nowcastView(_ nowcast: Nowcast) -> CityWeather.NowcastView {
        let forecast = report.forecast
        let spell = nowcast.firstSpell
        let quarters = nowcast.quarters.enumerated().map { index, quarter in
            CityWeather.NowcastView.Quarter(
                start: quarter.start, precipitation: format(quarter.precipitation),
                band: !quarter.isWet ? 0 : quarter.precipitation < 0.5 ? 1 : quarter.precipitation < 2 ? 2 : 3,
                label: quarter.start.hasSuffix(":00") ? quarter.start : nil)
        }
        let kind = strings("nowcast_kind_" + (forecast.quarterKind ?? "interpolated"), [:])
        let local = LocalCalendar(city.timeZone)
        return CityWeather.NowcastView(
            source: forecast.source, issued: DateFormatting.iso8601(forecast.fetchedAt),
            rainStart: spell.map { nowcast.quarters[$0.from].start },
            rainEnd: spell.flatMap { $0.to == nowcast.quarters.count - 1 ? nil : nowcast.quarters[$0.to].end },
            sentence: spell == nil ? tempered(nowcast.sentence(strings: strings), hour: LocalCalendar(city.timeZone).hourMinute(now).hour)
                : nowcast.sentence(strings: strings), quarters: quarters,
            provenance: strings("nowcast_source", ["source": Self.sourceName(forecast.source, strings: strings), "kind": kind,
                                                   "when": Self.updated(forecast.fetchedAt, local: local, city: city, now: now, strings: strings)]))
    }

    /// What to wear while out today, against yesterday's hours; nil without enough hourly values.
    private func wear(today: String, yesterday: String, hour: Int, nowcast: Nowcast?) -> CityWeather.Wear? {
        let forecast = report.forecast
        guard let advice = Clothing.advice(today: forecast.hours(on: today), yesterday: forecast.hours(on: yesterday), hour: hour,
                                           nowcast: nowcast)
        else { return nil }
        let step = Clothing.steps[advice.step]
        var text = strings("wear_line", ["what": strings("wear_" + step.id, [:])])
        if let change = advice.vsYesterday { text += " " + strings("wear_" + change, [:]) }
        if advice.umbrella { text += " " + strings("wear_umbrella", [:]) }
        var basis = strings("wear_basis", ["n": rounded(advice.feel), "from": LocalCalendar.twoDigits(Clothing.outHours.lowerBound),
                                           "to": LocalCalendar.twoDigits(Clothing.outHours.upperBound)])
        if forecast.source == "demo" { basis += " · " + strings("wear_demo", [:]) }
        return CityWeather.Wear(layer: step.id, vsYesterday: advice.vsYesterday, umbrella: advice.umbrella, icon: step.icon,
                                text: text, basis: basis)
    }

    /// Today's high and low against the normal for its date, in whole degrees as the cards show
    /// them, with where the normal came from and when it was fetched.
    private func normalLine(today: Forecast.Day) -> CityWeather.NormalLine? {
        guard let normal, let high = today.high, let low = today.low else { return nil }
        let date = DayLabels.dayMonth(month: normal.month, day: normal.day, language)
        let highs = Comparison.phrase(today: high, reference: normal.high), lows = Comparison.phrase(today: low, reference: normal.low)
        let text = strings("normal_line", [
            "high": strings("normal_high_" + highs.key, ["n": String(highs.degrees), "date": date, "normal": rounded(normal.high)]),
            "low": strings("normal_low_" + lows.key, ["n": String(lows.degrees), "normal": rounded(normal.low)]),
        ])
        let local = LocalCalendar(city.timeZone)
        let source = normal.source == "demo" ? strings("normal_source_demo", [:])
            : strings("normal_source", ["source": strings("source_era5", [:]),
                                        "when": Self.updated(normal.fetchedAt, local: local, city: city, now: now, strings: strings)])
        return CityWeather.NormalLine(normalHigh: format(normal.high), normalLow: format(normal.low),
                                      highAnomaly: String(Comparison.wholeDegrees(high) - Comparison.wholeDegrees(normal.high)),
                                      text: text, source: source)
    }

    /// A provider's name as pages say it.
    static func sourceName(_ id: String, strings: (String, [String: String]) -> String) -> String {
        ["open-meteo": "Open-Meteo", "kma": strings("source_kma", [:]), "demo": strings("source_demo", [:])][id] ?? id
    }

    /// Now against the same wall-clock hour yesterday (a DST day compares 09:00 with 09:00):
    /// the provider's current reading, while it is fresh, and its hourly value for yesterday.
    private func sameHour(today: String, yesterday: String) -> CityWeather.SameHour? {
        let forecast = report.forecast
        guard let current = forecast.current, current.time.hasPrefix(today + "T"), let temperature = current.temperature,
              now.timeIntervalSince(forecast.fetchedAt) < Self.currentReadingLifetime else { return nil }
        let hour = String(current.time.dropFirst(11).prefix(2)) + ":00"
        guard let past = forecast.hourly.first(where: { $0.time == yesterday + "T" + hour })?.temperature else { return nil }
        let (key, degrees) = Comparison.phrase(today: temperature, reference: past)
        let reading = current.apparentTemperature.map { strings("same_hour_now_feels", ["now": rounded(temperature), "feels": rounded($0)]) }
            ?? strings("same_hour_now", ["now": rounded(temperature)])
        return CityWeather.SameHour(now: format(temperature), yesterday: format(past), hour: hour,
                                    text: strings("same_hour_sentence", ["now": reading, "compare": strings("same_hour_" + key, ["n": String(degrees)])]))
    }

    /// Sun, wind, humidity and UV for today's card; nil when the provider gave none of them.
    private func details(_ day: Forecast.Day, date: String, hour: Int) -> CityWeather.Details? {
        var details = CityWeather.Details()
        // A sunrise on another date (the polar summer's) is no sunrise of this day.
        func clock(_ time: String?) -> String? {
            guard let time, time.hasPrefix(date + "T") else { return nil }
            return String(time.suffix(5))
        }
        if let sunrise = clock(day.sunrise), let sunset = clock(day.sunset) {
            details.sun = CityWeather.Details.Sun(sunrise: sunrise, sunset: sunset,
                                                  text: strings("details_sun", ["rise": sunrise, "set": sunset]))
        }
        if let speed = day.windSpeedMax {
            let kmh = String(Comparison.wholeDegrees(speed))
            var text = strings("details_wind", ["speed": kmh])
            if let direction = day.windDirection { text += " " + strings("details_wind_from", ["direction": strings(Self.compassKey(direction), [:])]) }
            if let gusts = day.windGustsMax { text += strings("details_gusts", ["speed": String(Comparison.wholeDegrees(gusts))]) }
            details.wind = CityWeather.Details.Value(raw: format(speed), text: text)
        }
        let hourKey = date + "T" + LocalCalendar.twoDigits(hour) + ":00"
        if let humidity = report.forecast.hourly.first(where: { $0.time == hourKey })?.humidity {
            details.humidity = CityWeather.Details.Value(raw: String(humidity), text: strings("details_humidity", ["n": String(humidity)]))
        }
        if let uv = day.uvIndexMax {
            let whole = Comparison.wholeDegrees(uv)
            details.uv = CityWeather.Details.Value(raw: format(uv), text: strings("details_uv", [
                "n": String(whole), "band": strings(UVBand.of(whole).key, [:]),
            ]))
        }
        return details.isEmpty ? nil : details
    }

    /// The eight compass points' catalog keys, north first (`wind_n`, `wind_ne`, …).
    static func compassKey(_ degrees: Int) -> String {
        let points = ["n", "ne", "e", "se", "s", "sw", "w", "nw"]
        return "wind_" + points[((degrees % 360 + 360) % 360 * 2 + 45) / 90 % 8]
    }

    // MARK: - Rain by the hour and the air

    /// One row of hourly chances of rain; nil when the day has none.
    private func rainDay(_ name: String, date: String, forecast: Forecast) -> CityWeather.RainDay? {
        let nowHour = LocalCalendar(city.timeZone).hourMinute(now).hour
        let hours = forecast.hours(on: date).compactMap { hour -> CityWeather.RainDay.Hour? in
            guard let chance = hour.precipitationProbability else { return nil }
            let clock = String(hour.time.suffix(5))
            var bar = CityWeather.RainDay.Hour(chance: chance, band: min(10, (chance + 5) / 10),
                                               label: clock.hasSuffix(":00") && Int(clock.prefix(2)).map { $0 % 3 == 0 } == true ? String(clock.prefix(2)) : nil,
                                               isPast: name == "today" && Int(clock.prefix(2)).map { $0 < nowHour } == true)
            bar.hour = String(clock.prefix(2))
            if name == "today", let hour = Int(bar.hour), hour <= nowHour {
                let reported = hourReports.hours[bar.hour] ?? HourReports.Hour()
                bar.reports = reported.wet
                bar.missed = HourReports.missed(chance: chance, reported, after: missedAfter)
            }
            return bar
        }
        guard !hours.isEmpty else { return nil }
        // The bars are a picture of this sentence (hidden from screen readers, which read it):
        // today's is on its card, tomorrow's under its bars.
        let sentence = name == "tomorrow" ? RainOutlook(hours: forecast.hours(on: date), from: 0).sentence(strings: strings, day: "tomorrow") : nil
        var day = CityWeather.RainDay(day: name, title: strings("day_" + name, [:]), hours: hours, sentence: sentence)
        let missed = hours.filter(\.missed).map { $0.hour + ":00" }
        if !missed.isEmpty { day.missedSentence = strings("forecast_missed", ["hours": missed.joined(separator: ", ")]) }
        return day
    }

    /// The air's values with their Korean bands, if fetched recently enough to mean anything.
    private func air(_ values: Forecast.AirQuality?) -> CityWeather.Air? {
        guard let values, now.timeIntervalSince(values.fetchedAt) < WeatherService.airQualityKeptFor,
              values.pm10 != nil || values.pm25 != nil else { return nil }
        func reading(_ value: Double?, band: (Double) -> AirQualityBand) -> CityWeather.Air.Reading? {
            guard let value else { return nil }
            let band = band(value)
            return CityWeather.Air.Reading(raw: format(value), value: String(Comparison.wholeDegrees(value)),
                                           band: band.rawValue, bandName: strings(band.key, [:]))
        }
        let sourceName = ["open-meteo": strings("source_air_open_meteo", [:]), "demo": strings("source_demo", [:])]
        let local = LocalCalendar(city.timeZone)
        return CityWeather.Air(
            pm10: reading(values.pm10, band: AirQualityBand.of(pm10:)), pm25: reading(values.pm25, band: AirQualityBand.of(pm25:)),
            provenance: strings("provenance", ["source": sourceName[values.source] ?? values.source,
                                               "when": Self.updated(values.fetchedAt, local: local, city: city, now: now, strings: strings)]),
            source: values.source, isDemo: values.source == "demo")
    }

    /// `hi-N lo-M`: the gradient from the high's colour to the low's (text sits on plates over
    /// it, see `Palette.Plate`). A missing value has the neutral colour (`hi-none`), never the
    /// colour of 0 °C.
    private func gradientClasses(high: Double?, low: Double?) -> String {
        "hi-\(high.map(Palette.classSuffix) ?? Palette.noValueSuffix) lo-\(low.map(Palette.classSuffix) ?? Palette.noValueSuffix)"
    }

    private func dayLabel(_ date: String, local: LocalCalendar) -> String {
        guard let civil = CivilDate(date) else { return date }
        return DayLabels.label(civil, language)
    }

    private func rounded(_ value: Double?) -> String {
        guard let value else { return "–" }
        return String(Comparison.wholeDegrees(value))
    }

    private func format(_ value: Double) -> String {
        Int(exactly: value).map { String($0) } ?? WeatherNumbers.oneDecimal(value)
    }
}
