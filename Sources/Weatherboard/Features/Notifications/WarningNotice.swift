import Foundation

/// What a member was told of an official warning (`warning_alerts`), as the list, a push and a
/// mail say it: the event, its severity and its end in the city's time, as told then.
struct WarningNotice: Equatable {
    var event: String
    var severity: String
    var expires: Double
    var endsWhenLifted: Bool
    /// `started`, `raised`, `extended` or `cancelled`.
    var state: String
    var timeZone: TimeZone

    /// "Severe warning in Los Angeles: Flash Flood Warning, until 01:00, 22 Nov."
    func sentence(city: String, _ pages: Pages, _ language: Language) -> String {
        let end = Date(timeIntervalSince1970: expires)
        let local = LocalCalendar(timeZone)
        let (hour, minute) = local.hourMinute(end)
        let day = CivilDate(local.dateString(end)).map { DayLabels.dayMonth(month: $0.month, day: $0.day, language) } ?? ""
        let until = endsWhenLifted ? pages.string("warning_until_lifted", language)
            : pages.string("warning_until_day", language, ["time": LocalCalendar.twoDigits(hour) + ":" + LocalCalendar.twoDigits(minute), "day": day])
        return pages.string("alert_warning_" + state, language, [
            "city": city, "event": event, "until": until, "severity": pages.string("severity_" + severity, language),
        ])
    }
}
