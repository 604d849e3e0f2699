import Foundation
import GRDB

/// A ban in force: the person may read but not post, edit, report or block. It lives with the
/// accounts because sign-in and every session look-up read it; moderation only writes bans.
public struct Ban: Sendable, Equatable {
    public let reason: String
    /// nil for a permanent ban.
    public let until: Date?

    /// The id of the ban in force for `u.id` at `:now`, as a subquery: the one rule of which
    /// ban counts, used here and joined by the session look-up.
    static let activeIDSQL = """
        SELECT id FROM bans WHERE user_id = u.id AND lifted_at IS NULL AND (until IS NULL OR until > :now)
        ORDER BY until IS NULL DESC, until DESC LIMIT 1
        """

    /// The ban in force for `userID` at `now`, if any.
    static func active(userID: Int64, now: Date, _ db: Database) throws -> Ban? {
        let row = try Row.fetchOne(db.cachedStatement(sql: """
            SELECT b.reason, b.until FROM (SELECT :user AS id) u JOIN bans b ON b.id = (\(activeIDSQL))
            """), arguments: ["user": userID, "now": now.timeIntervalSince1970])
        return row.map { Ban(reason: $0["reason"], until: ($0["until"] as Double?).map(Date.init(timeIntervalSince1970:))) }
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
