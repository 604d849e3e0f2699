import Foundation

/// A member's time zone, which their digest's 07:00 and their quiet hours are kept in: an IANA
/// name from the system's list only (what a browser's `Intl` gives, "Asia/Seoul"), never a
/// string Foundation would read some other way, and how it was set.
struct MemberTimeZone: Equatable, Sendable {
    /// How the zone was set (`users.time_zone_source`).
    enum Source: Int, Sendable {
        /// Never: the site's default, UTC (accounts from before the zone was asked, a browser without scripts).
        case unset = 0
        /// Taken from the member's browser, at sign-up or on a page while none was set.
        case browser = 1
        /// Chosen on the settings page.
        case chosen = 2
    }

    let name: String
    var source: Source

    static let `default` = MemberTimeZone(name: "UTC", source: .unset)

    /// Every name a member may have: the system's list, and UTC.
    static let names: [String] = {
        var names = Set(TimeZone.knownTimeZoneIdentifiers)
        names.insert("UTC")
        return names.sorted()
    }()
    private static let known = Set(names)

    /// `name` if it is one the system knows (exactly as listed), else nil.
    init?(_ name: String?, source: Source) {
        guard let name, name.utf8.count <= 64, Self.known.contains(name) else { return nil }
        self.name = name
        self.source = source
    }

    private init(name: String, source: Source) {
        self.name = name
        self.source = source
    }

    var timeZone: TimeZone { TimeZone(identifier: name) ?? .gmt }

    /// "Asia/Seoul (GMT+9)", "Asia/Kolkata (GMT+5:30)", "UTC (GMT+0)": the name with its offset
    /// at `date` (summer time included).
    static func label(_ name: String, at date: Date) -> String {
        let seconds = (TimeZone(identifier: name) ?? .gmt).secondsFromGMT(for: date)
        let hours = abs(seconds) / 3600, minutes = abs(seconds) % 3600 / 60
        return "\(name) (GMT\(seconds < 0 ? "−" : "+")\(hours)\(minutes == 0 ? "" : ":" + (minutes < 10 ? "0" : "") + String(minutes)))"
    }
}
