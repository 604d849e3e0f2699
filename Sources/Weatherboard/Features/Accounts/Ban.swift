import Foundation

/// A ban in force: the person may read but not post, edit, report or block. It lives with the
/// accounts because sign-in and every session look-up read it; moderation only writes bans.
public struct Ban: Sendable, Equatable {
    public let reason: String
    /// nil for a permanent ban.
    public let until: Date?

    /// The id of the ban in force for `u.id` at `?2`, as a subquery: the one rule of which
    /// ban counts, used here and joined by the session look-up.
    static let activeIDSQL = """
        SELECT id FROM bans WHERE user_id = u.id AND lifted_at IS NULL AND (until IS NULL OR until > ?2)
        ORDER BY until IS NULL DESC, until DESC LIMIT 1
        """

    /// The ban in force for `userID` at `now`, if any.
    static func active(userID: Int64, now: Date, _ db: any SQLConnection) throws -> Ban? {
        try db.one("""
            SELECT b.reason, b.until FROM (SELECT CAST(?1 AS BIGINT) AS id) u JOIN bans b ON b.id = (\(activeIDSQL))
            """, [userID, now]) { Ban(reason: $0.string(0), until: $0.optionalDate(1)) }
    }

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
