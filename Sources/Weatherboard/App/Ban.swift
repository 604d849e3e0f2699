import Foundation

/// A ban in force: the person may read but not post, edit, report or block. The request's
/// context holds it beside the person (sign-in and every session look-up read it; moderation
/// only writes bans), so it is the application's type, not one feature's.
public struct Ban: Sendable, Equatable {
    public let reason: String
    /// nil for a permanent ban.
    public let until: Date?

    /// What the banned person reads, in their language: the end as an instant their browser
    /// shows in their own zone ("until 29 Nov 2026 14:45 GMT+9"), UTC without script.
    func notice(_ pages: Pages, _ language: Language) -> BanNotice {
        guard let until else {
            return BanNotice(before: pages.string("ban_permanent", language, ["reason": reason]), until: nil, after: "")
        }
        let (before, after) = pages.split("ban_until", language, around: "until", ["reason": reason])
        return BanNotice(before: before, until: Moment(until, language), after: after)
    }
}

/// Thrown when a banned person tries to change anything; shown as a 403 that says why.
struct BannedError: Error {
    let ban: Ban
}

/// A ban's explanation as a page shows it (`ban_notice.mustache`).
struct BanNotice {
    var before: String
    var until: Moment?
    var after: String
}
