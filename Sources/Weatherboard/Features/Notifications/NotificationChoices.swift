import Foundation

/// What a member chose to hear of, and how: a topic (a group of notice kinds) on each channel,
/// and quiet hours for pushes. Only choices that differ from `defaultOn` are stored.
struct NotificationChoices: Sendable, Equatable {
    enum Topic: String, CaseIterable, Sendable {
        case replies, mentions, agreements, moderation, rain, warnings

        init(_ kind: NoticeKind) {
            switch kind {
            case .rain, .rainCleared: self = .rain
            case .reply: self = .replies
            case .mention: self = .mentions
            case .reaction: self = .agreements
            case .reportDecided, .removed, .restored: self = .moderation
            case .warning, .warningUpdate: self = .warnings
            }
        }
    }

    enum Channel: String, CaseIterable, Sendable {
        /// The list and the header's count.
        case site
        /// The member's browsers, with Web Push on.
        case push
        /// Their confirmed address, with a relay configured.
        case email
    }

    /// Everything on the site; by push, replies, rain alerts and warnings (the rest can wait for
    /// the list); nothing by e-mail but the digest the member chooses.
    static func defaultOn(_ topic: Topic, _ channel: Channel) -> Bool {
        channel == .site || (channel == .push && (topic == .replies || topic == .rain || topic == .warnings))
    }

    var enabled: [String: Bool] = [:]
    /// Minutes after midnight; both nil: no quiet hours.
    var quietFrom: Int?
    var quietTo: Int?
    /// Severe and extreme warnings are pushed through quiet hours.
    var warningsPassQuiet = true
    /// The member's zone: quiet hours and the digest's 07:00 are in it.
    var zone = MemberTimeZone.default
    var timeZone: TimeZone { zone.timeZone }
    var digest = DigestEvery.off
    /// The member's confirmed address and the language of their mail (read, not saved here).
    var address: String?
    var language = Language.en

    func isOn(_ topic: Topic, _ channel: Channel) -> Bool {
        enabled["\(topic.rawValue)_\(channel.rawValue)"] ?? Self.defaultOn(topic, channel)
    }

    /// When a push may go, from `now`: now, or the end of quiet hours when they hold now.
    func pushTime(after now: Date) -> Date {
        guard let from = quietFrom, let to = quietTo, from != to else { return now }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let parts = calendar.dateComponents([.hour, .minute], from: now)
        let minute = (parts.hour ?? 0) * 60 + (parts.minute ?? 0)
        let quiet = from < to ? (minute >= from && minute < to) : (minute >= from || minute < to)
        guard quiet else { return now }
        let wait = ((to - minute) + 1440) % 1440
        return now.addingTimeInterval(TimeInterval(wait * 60) - TimeInterval(calendar.component(.second, from: now)))
    }

    // MARK: - Queries

    static func of(_ userID: Int64, _ db: any SQLConnection) throws -> NotificationChoices {
        var choices = try db.one("""
            SELECT quiet_from, quiet_to, time_zone, digest, email, language, time_zone_source, warnings_pass_quiet FROM users WHERE id = ?
            """, [userID]) { row in
            NotificationChoices(quietFrom: row.optionalInt(0), quietTo: row.optionalInt(1), warningsPassQuiet: row.int(7) != 0,
                                zone: MemberTimeZone(row.string(2), source: MemberTimeZone.Source(rawValue: row.int(6)) ?? .unset) ?? .default,
                                digest: DigestEvery(rawValue: row.string(3)) ?? .off,
                                address: row.optionalString(4), language: Language(rawValue: row.string(5)) ?? .en)
        } ?? NotificationChoices()
        for (key, on) in try db.all("SELECT topic, channel, enabled FROM notification_choices WHERE user_id = ?", [userID], {
            ("\($0.string(0))_\($0.string(1))", $0.int(2) == 1)
        }) { choices.enabled[key] = on }
        return choices
    }

    /// Keeps the choices; a digest turned on now starts with the next period (none at once).
    func save(for userID: Int64, now: Date, _ db: any SQLConnection) throws {
        try db.execute("DELETE FROM notification_choices WHERE user_id = ?", userID)
        for topic in Topic.allCases {
            for channel in Channel.allCases where isOn(topic, channel) != Self.defaultOn(topic, channel) {
                try db.execute("INSERT INTO notification_choices (user_id, topic, channel, enabled) VALUES (?, ?, ?, ?)",
                               userID, topic.rawValue, channel.rawValue, isOn(topic, channel))
            }
        }
        try db.execute("""
            UPDATE users SET quiet_from = ?, quiet_to = ?, time_zone = ?, time_zone_source = ?, digest = ?, warnings_pass_quiet = ?,
                digest_handled_at = CASE WHEN digest = 'off' THEN ? ELSE digest_handled_at END
            WHERE id = ?
            """, quietFrom, quietTo, zone.name, zone.source.rawValue, digest.rawValue, warningsPassQuiet ? 1 : 0, now, userID)
    }

    /// The browser's zone for a member who never set one (`MemberTimeZone.Source.unset`); a zone
    /// set meanwhile stays. Whether it was taken.
    static func takeBrowserZone(_ zone: MemberTimeZone, for userID: Int64, _ db: any SQLConnection) throws -> Bool {
        try db.execute("UPDATE users SET time_zone = ?, time_zone_source = ? WHERE id = ? AND time_zone_source = ?",
                       zone.name, MemberTimeZone.Source.browser.rawValue, userID, MemberTimeZone.Source.unset.rawValue) > 0
    }
}

/// How often a member wants the e-mail digest.
enum DigestEvery: String, CaseIterable, Sendable {
    case off, daily, weekly

    /// The digest goes at this local hour, on Mondays for a weekly one.
    static let hour = 7

    /// The start of the period that holds `now` in `timeZone`: today's 07:00 (or yesterday's,
    /// before it), or the latest Monday's; nil when off.
    func periodStart(at now: Date, in timeZone: TimeZone) -> Date? {
        guard self != .off else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let local = LocalCalendar(timeZone)
        for back in 0...7 {
            let day = local.dateString(now, offset: -back)
            guard let midnight = local.startOfDay(day), let start = calendar.date(byAdding: .hour, value: Self.hour, to: midnight),
                  start <= now else { continue }
            if self == .daily || calendar.component(.weekday, from: midnight) == 2 { return start }
        }
        return nil
    }

    /// How far back a digest looks.
    var length: TimeInterval { self == .weekly ? 7 * 86_400 : 86_400 }
}
