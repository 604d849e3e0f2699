import Foundation

/// Sunrise and sunset from the Earth's orbit alone (the "sunrise equation" with the Sun's
/// equation of centre and the equation of time, as in NOAA's solar calculator), for providers
/// that give none: KMA's forecast and the demo. Within about two minutes of published tables
/// away from the poles; refraction and the Sun's radius are the standard −0.833°, elevation is
/// ignored.
enum SunTimes {
    /// The instants of sunrise and sunset on the calendar date `date` (`yyyy-MM-dd`, the place's
    /// own) at `latitude`/`longitude` (degrees, east positive); nil where the sun stays up (or
    /// down) all day.
    static func of(date: String, latitude: Double, longitude: Double) -> (rise: Date, set: Date)? {
        let radians = Double.pi / 180
        // Days from 2000-01-01 to the date, less the longitude's share of a day: the mean solar
        // noon there on that date (east of Greenwich it comes earlier in UTC).
        guard let utcMidnight = utc.startOfDay(date) else { return nil }
        let n = (utcMidnight.timeIntervalSince1970 / 86_400).rounded() - 10_957
        let meanNoon = n + 0.0008 - longitude / 360
        let anomaly = (357.5291 + 0.985_600_28 * meanNoon).truncatingRemainder(dividingBy: 360)
        let centre = 1.9148 * sin(anomaly * radians) + 0.02 * sin(2 * anomaly * radians) + 0.0003 * sin(3 * anomaly * radians)
        let eclipticLongitude = (anomaly + centre + 180 + 102.9372).truncatingRemainder(dividingBy: 360)
        let transit = 2_451_545.0 + meanNoon + 0.0053 * sin(anomaly * radians) - 0.0069 * sin(2 * eclipticLongitude * radians)
        let declination = asin(sin(eclipticLongitude * radians) * sin(23.4397 * radians))
        let hourAngleCosine = (sin(-0.833 * radians) - sin(latitude * radians) * sin(declination))
            / (cos(latitude * radians) * cos(declination))
        guard hourAngleCosine.isFinite, (-1...1).contains(hourAngleCosine) else { return nil }
        let halfDay = acos(hourAngleCosine) / radians / 360
        func instant(_ julian: Double) -> Date { Date(timeIntervalSince1970: (julian - 2_440_587.5) * 86_400) }
        return (instant(transit - halfDay), instant(transit + halfDay))
    }

    /// The day's sunrise and sunset as local `yyyy-MM-ddTHH:mm`, as Open-Meteo gives them.
    static func local(_ date: String, city: City) -> (sunrise: String, sunset: String)? {
        guard let times = of(date: date, latitude: city.latitude, longitude: city.longitude) else { return nil }
        let local = LocalCalendar(city.timeZone)
        return (local.minuteString(times.rise), local.minuteString(times.set))
    }

    private static let utc = LocalCalendar(.gmt)
}
