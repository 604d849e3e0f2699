import Foundation

/// What a forecast may contain before anything stores, renders or compares it. A provider's
/// answer is outside input like a request: a daily high of 1e19 once reached a trapping
/// `Int(Double)` while the page rendered, and because it had been stored, every node that read the
/// shared cache died on it again. Every answer is checked before it is stored, and every cached
/// row when it is read (a row written by an older version, or by hand, gets no pass).
///
/// An answer with any value out of range is refused whole (`UpstreamError.answer`: the next
/// provider is asked, and the breaker stays closed): one impossible number says the rest cannot
/// be trusted either.
extension Forecast {
    /// Temperatures (air and apparent) the Earth's surface has seen, with a margin: the records
    /// are −89.2 °C and 56.7 °C.
    static let plausibleCelsius: ClosedRange<Double> = -100...70
    /// More days than any provider is asked for (Open-Meteo's maximum is 16).
    static let maximumDays = 16
    /// More hours than any provider is asked for (16 days of hours is 384).
    static let maximumHours = 400
    /// WMO weather interpretation codes are two digits.
    static let weatherCodes: ClosedRange<Int> = 0...99
    /// Instants a forecast can have been fetched at (a cached row's clock cannot be in 1900).
    static let plausibleFetchTimes: ClosedRange<Double> = 946_684_800...7_258_118_400 // 2000…2200
    /// The UV index has reached 43 on the Altiplano; 30 is the index's useful ceiling with a margin.
    static let plausibleUVIndex: ClosedRange<Double> = 0...50
    /// Wind and gusts, km/h: the strongest gust measured is 408 km/h.
    static let plausibleWindSpeed: ClosedRange<Double> = 0...500
    /// A day's rain, snow and showers, mm: the wettest day measured brought 1,825 mm.
    static let plausiblePrecipitation: ClosedRange<Double> = 0...2_000
    /// More quarter hours than any provider is asked for (Open-Meteo is asked for 12).
    static let maximumQuarters = 96
    /// A quarter hour's precipitation, mm, and snow, cm: beyond any measured (about 200 mm has
    /// fallen in an hour).
    static let plausibleQuarterPrecipitation: ClosedRange<Double> = 0...300
    /// How quarter hours may be made (`Forecast.quarterKind`).
    static let quarterKinds: Set<String> = ["model", "interpolated", "demo"]
    /// The longest provider id a cached row may carry (`open-meteo`, `kma`, `demo`).
    static let maximumSourceLength = 32

    /// The forecast, if everything in it is plausible; otherwise why not. Linear in its size, and
    /// its size is bounded first.
    func checked() throws -> Forecast {
        func refuse(_ reason: String) -> UpstreamError { UpstreamError.answer("\(source.prefix(Self.maximumSourceLength)): \(reason)") }
        guard !source.isEmpty, source.utf8.count <= Self.maximumSourceLength else { throw refuse("no usable source name") }
        guard Self.plausibleFetchTimes.contains(fetchedAt.timeIntervalSince1970) else { throw refuse("fetched at an impossible time") }
        guard daily.count <= Self.maximumDays else { throw refuse("\(daily.count) days (at most \(Self.maximumDays))") }
        guard hourly.count <= Self.maximumHours else { throw refuse("\(hourly.count) hours (at most \(Self.maximumHours))") }

        func temperature(_ value: Double?, _ what: @autoclosure () -> String) throws {
            // `contains` is false for NaN and the infinities.
            if let value, !Self.plausibleCelsius.contains(value) { throw refuse("\(what()) is \(value) °C") }
        }
        func percentage(_ value: Int?, _ what: @autoclosure () -> String) throws {
            if let value, !(0...100).contains(value) { throw refuse("\(what()) is \(value) %") }
        }
        func code(_ value: Int?, _ what: @autoclosure () -> String) throws {
            if let value, !Self.weatherCodes.contains(value) { throw refuse("\(what()) has weather code \(value)") }
        }

        /// Stamps well-formed, in order and unrepeated (the fixed-width formats sort as text).
        func timeline(_ stamps: [String], _ what: String, isValid: (String) -> Bool) throws {
            var previous = ""
            for stamp in stamps {
                guard isValid(stamp) else { throw refuse("\(what) dated \(stamp.prefix(40).debugDescription)") }
                guard stamp > previous else { throw refuse("\(what)s out of order or repeated at \(stamp)") }
                previous = stamp
            }
        }
        try timeline(daily.map(\.date), "a day") { Self.isDate($0[...]) }
        try timeline(hourly.map(\.time), "an hour", isValid: Self.isHour)
        func within(_ value: Double?, _ range: ClosedRange<Double>, _ what: @autoclosure () -> String) throws {
            if let value, !range.contains(value) { throw refuse("\(what()) is \(value)") }
        }
        /// A sunrise or sunset is a local time like the hours' (on a polar day it may fall on
        /// another date: the page shows it only when it falls on its own).
        func sunTime(_ value: String?, _ what: String, of date: String) throws {
            if let value, !Self.isHour(value) { throw refuse("\(what) of \(date) is \(value.prefix(40).debugDescription)") }
        }
        for day in daily {
            try sunTime(day.sunrise, "the sunrise", of: day.date)
            try sunTime(day.sunset, "the sunset", of: day.date)
            try within(day.uvIndexMax, Self.plausibleUVIndex, "the UV index of \(day.date)")
            try within(day.windSpeedMax, Self.plausibleWindSpeed, "the wind of \(day.date) in km/h")
            try within(day.windGustsMax, Self.plausibleWindSpeed, "the gusts of \(day.date) in km/h")
            try within(day.windDirection.map(Double.init), 0...360, "the wind's direction on \(day.date)")
            try within(day.precipitationSum, Self.plausiblePrecipitation, "the precipitation of \(day.date) in mm")
            try temperature(day.high, "the high of \(day.date)")
            try temperature(day.low, "the low of \(day.date)")
            try percentage(day.precipitationProbability, "the chance of rain on \(day.date)")
            try code(day.weatherCode, day.date)
        }
        for hour in hourly {
            try temperature(hour.temperature, "the temperature at \(hour.time)")
            try temperature(hour.apparentTemperature, "the apparent temperature at \(hour.time)")
            try percentage(hour.precipitationProbability, "the chance of rain at \(hour.time)")
            try code(hour.weatherCode, hour.time)
            try percentage(hour.humidity, "the humidity at \(hour.time)")
        }
        if let quarters {
            guard quarters.count <= Self.maximumQuarters else { throw refuse("\(quarters.count) quarter hours (at most \(Self.maximumQuarters))") }
            try timeline(quarters.map(\.time), "a quarter hour", isValid: Self.isHour)
            for quarter in quarters {
                try within(quarter.precipitation, Self.plausibleQuarterPrecipitation, "the precipitation in the quarter to \(quarter.time) in mm")
                try within(quarter.snowfall, Self.plausibleQuarterPrecipitation, "the snow in the quarter to \(quarter.time) in cm")
            }
        }
        if let quarterKind, !Self.quarterKinds.contains(quarterKind) { throw refuse("quarter hours of an unknown kind") }
        if let airQuality { _ = try airQuality.checked() }
        if let current {
            guard Self.isHour(current.time) else { throw refuse("the current reading is dated \(current.time.prefix(40).debugDescription)") }
            try temperature(current.temperature, "the current temperature")
            try temperature(current.apparentTemperature, "the current apparent temperature")
            try code(current.weatherCode, "the current reading")
        }
        return self
    }

    /// `yyyy-MM-dd` with a month and day that exist in some year.
    static func isDate(_ text: Substring) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count == 10, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
              let month = digits(bytes[5..<7]), let day = digits(bytes[8..<10]), digits(bytes[0..<4]) != nil
        else { return false }
        return (1...12).contains(month) && (1...31).contains(day)
    }

    /// `yyyy-MM-ddTHH:mm` (Open-Meteo's local times; KMA's are made the same way).
    static func isHour(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count == 16, bytes[10] == UInt8(ascii: "T"), bytes[13] == UInt8(ascii: ":"),
              isDate(text.prefix(10)), let hour = digits(bytes[11..<13]), let minute = digits(bytes[14..<16])
        else { return false }
        return hour < 24 && minute < 60
    }

    private static func digits(_ bytes: ArraySlice<UInt8>) -> Int? {
        var value = 0
        for byte in bytes {
            guard byte >= 48 && byte <= 57 else { return nil }
            value = value * 10 + Int(byte - 48)
        }
        return value
    }
}
