import Foundation

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
        /// None for yesterday (over, no chance left); today's is for the hours left of it.
        var precipitation: String?
        /// The chance in words, saying which hours it covers when they are not the whole day.
        var precipitationText = ""
        /// The local hours it covers, `15-24`.
        var precipitationHours = "0-24"
        /// Today's: now against the same hour yesterday.
        var sameHour: SameHour?
        /// Today's: what yesterday's forecast said of it.
        var forecastCheck: ForecastCheckLine?
        /// Today's: its high and low against the normal for the date.
        var normal: NormalLine?
        var classes = ""
        var current: String?
        var feelsLike = ""
        /// "Rain likely from 15:00 to 18:00" (today only).
        var rainSummary: String?
        /// Today's: the day's precipitation (fallen and to come) beside yesterday's.
        var rainTotals: RainTotals?
        /// Today's: the next two hours by the quarter hour (`Nowcast`).
        var nowcast: NowcastView?
        /// Today's: what to wear, against yesterday (`Clothing`).
        var wear: Wear?
        var details: Details?
    }

    /// The next two hours: the sentence, where the quarters came from (`data-source`, and
    /// `data-issued` in ISO 8601), the first spell's local start and end (absent when none, or
    /// when it goes on past the window) and a cell per quarter hour.
    struct NowcastView {
        struct Quarter {
            /// `data-quarter`: local `HH:mm` the quarter hour starts.
            var start: String
            /// `data-precipitation`, mm.
            var precipitation: String
            /// 0 dry, 1 light, 2 moderate, 3 heavy: the cell's height.
            var band: Int
            /// The clock under the cell on the hour.
            var label: String?
        }
        var source: String
        var issued: String
        var rainStart: String?
        var rainEnd: String?
        var sentence: String
        var quarters: [Quarter]
        var provenance: String
    }

    /// "A jacket or cardigan — one layer more than yesterday. Take an umbrella.": the step's id
    /// (`data-layer`), `same`/`more`/`less` against yesterday (absent when yesterday is unknown),
    /// whether to take an umbrella, the picture and the words.
    struct Wear {
        var layer: String
        var vsYesterday: String?
        var umbrella: Bool
        /// `data-umbrella`.
        var umbrellaFlag: String { umbrella ? "true" : "false" }
        var icon: String
        var text: String
        /// "Feels like 14° on average from 07 to 22 h", and that the figures are demo ones.
        var basis: String
    }

    /// "Now 4°, feels like −1° — 3° colder than this time yesterday": the reading now and the
    /// provider's value for the same wall-clock hour yesterday (°C, one decimal), and the sentence.
    struct SameHour {
        var now: String
        var yesterday: String
        var hour: String
        var text: String
    }

    /// "Yesterday's forecast for today: high 12°, rain unlikely (Open-Meteo) · now 13°", with the
    /// figures (°C, one decimal) and the address of the city's 30-day score.
    struct ForecastCheckLine {
        var forecastHigh: String
        var currentHigh: String
        var text: String
        var href: String
    }

    /// "Precipitation: 3.1 mm today (the whole day), 12.4 mm yesterday." (mm, one decimal): the
    /// day's sum, fallen and to come, so that it never reads as rain still to come.
    struct RainTotals {
        var today: String
        var yesterday: String
        var text: String
    }

    /// "High 5° above normal for 26 Nov (7°); low 1° below (4°)": the normals (°C, one decimal),
    /// the high's difference in whole degrees as the cards round, the sentence and its source.
    struct NormalLine {
        var normalHigh: String
        var normalLow: String
        var highAnomaly: String
        var text: String
        var source: String
    }

    /// Today's sun, wind, humidity and UV; each absent when the provider gave none.
    struct Details {
        struct Sun {
            var sunrise: String
            var sunset: String
            var text: String
        }
        struct Value {
            /// As the provider gave it, for `data-…` attributes.
            var raw: String
            var text: String
        }
        var sun: Sun?
        var wind: Value?
        var humidity: Value?
        var uv: Value?
        var isEmpty: Bool { sun == nil && wind == nil && humidity == nil && uv == nil }
    }

    /// A day's chance of rain, hour by hour.
    struct RainDay {
        struct Hour {
            var chance: Int
            /// 0–10: the bar's height in tenths.
            var band: Int
            /// Every third hour's label under the bars ("00", "03", …).
            var label: String?
            var isPast: Bool
            /// "14": the local hour (`data-hour`).
            var hour = ""
            /// Past and current hours: distinct people who reported rain, snow, fog or a storm
            /// (`data-reports`), and whether the forecast was missed (`data-missed`).
            var reports: Int?
            var missed = false
            var isCounted: Bool { reports != nil }
            var reportCount: Int { reports ?? 0 }
            var hasReports: Bool { reportCount > 0 }
        }
        var day: String
        var title: String
        var hours: [Hour]
        /// Tomorrow's rain in words, under its bars.
        var sentence: String?
        /// The numbers on the bars are people's reports: said once under them.
        var hasReportCounts: Bool { hours.contains(where: \.hasReports) }
        /// Today's hours whose forecast people's reports missed, in words.
        var missedSentence: String?
    }

    /// Today's and tomorrow's rows (an optional: only an optional opens a template scope).
    struct RainHours {
        var days: [RainDay]
    }

    /// PM10 and PM2.5 with their bands and where they came from.
    struct Air {
        struct Reading {
            var raw: String
            var value: String
            /// `good`, `moderate`, `unhealthy`, `very_unhealthy`.
            var band: String
            var bandName: String
        }
        var pm10: Reading?
        var pm25: Reading?
        var provenance: String
        var source: String
        var isDemo: Bool
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
    var rainHours: RainHours?
    var air: Air?
    var provenance: Provenance?
}
