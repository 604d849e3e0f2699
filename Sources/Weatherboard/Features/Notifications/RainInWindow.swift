import Foundation

/// What the forecast says of one occurrence of a window: the likely hours (`RainOutlook.likely`)
/// still to come in it, and when the spell that reaches its last one stops.
struct RainInWindow: Equatable {
    /// Local `yyyy-MM-ddTHH:mm`: the first likely time and the end of the last likely hour, both
    /// within the window.
    var from: String
    var to: String
    /// The end of the spell, past the window if it goes on; nil when the forecast stops first.
    var stopsAt: String?
    var kind: RainOutlook.Kind

    init(from: String, to: String, stopsAt: String?, kind: RainOutlook.Kind) {
        (self.from, self.to, self.stopsAt, self.kind) = (from, to, stopsAt, kind)
    }

    /// "Rain likely 17:00–19:00 in Seoul, stopping around 20:00." (the city page's words), or
    /// that it is no longer expected.
    func sentence(_ cleared: Bool, city: String, _ pages: Pages, _ language: Language) -> String {
        var arguments = ["what": pages.string("precip_" + kind.rawValue, language), "city": city,
                         "from": String(from.suffix(5)), "to": String(to.suffix(5))]
        if cleared { return pages.string("alert_rain_cleared", language, arguments) }
        guard let stopsAt else { return pages.string("alert_rain", language, arguments) }
        arguments["stop"] = String(stopsAt.suffix(5))
        return pages.string("alert_rain_stopping", language, arguments)
    }
}
