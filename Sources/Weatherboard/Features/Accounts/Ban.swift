import Foundation

/// A ban in force: the person may read but not post, edit, report or block. It lives with the
/// accounts because sign-in and every session look-up read it; moderation only writes bans.
public struct Ban: Sendable, Equatable {
    public let reason: String
    /// nil for a permanent ban.
    public let until: Date?

    /// "until 29 Nov 2026 05:45 UTC: reason" in the viewer's language.
    func explanation(_ pages: Pages, _ language: Language) -> String {
        guard let until else { return pages.string("ban_permanent", language, ["reason": reason]) }
        return pages.string("ban_until", language, ["until": DateFormatting.utcMinute(until, language: language), "reason": reason])
    }
}

/// Thrown when a banned person tries to change anything; shown as a 403 that says why.
struct BannedError: Error {
    let ban: Ban
}
