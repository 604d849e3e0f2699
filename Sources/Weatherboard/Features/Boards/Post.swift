import Foundation

/// A post as a viewer may see it, with its author and the viewer's relation to it.
struct PostRow: Sendable {
    var id: Int64
    var cityID: Int64
    var userID: Int64?
    var username: String?
    var displayName: String?
    var authorIsAdmin: Bool
    var body: String
    var createdAt: Date
    var editedAt: Date?
    var hiddenAt: Date?
    var removedAt: Date?
    var removedReason: String?
    var citySlug: String
    var cityNameEn: String
    var cityNameKo: String?
    /// When the viewer reported it (they see a placeholder instead).
    var reportedByViewerAt: Date?
    /// The post it answers, for a reply.
    var parentID: Int64?
    /// How many people agreed with it, and whether the viewer is one of them.
    var reactions: Int
    var reactedByViewer: Bool
    /// What its author saw outside, if they said (posts only).
    var observation: Observation

    /// The columns `init(row:)` reads; a query may select more after them.
    static let columnCount = 21

    /// Its own address: a post's page, or its place on the page of the post it answers.
    var href: String { parentID.map { "/posts/\($0)#post-\(id)" } ?? "/posts/\(id)" }

    /// Where its author left it: a post on its board, a reply in its conversation (a board shows
    /// only the newest two replies of a post).
    var placeHref: String { parentID == nil ? "/city/\(citySlug)#post-\(id)" : href }

    /// Reads the columns of `BoardQueries.visibleSQL` by position (by name, each look-up hashed
    /// the column's name: 16 columns × 21 rows on every board page).
    init(row: any SQLRow) {
        id = row.int64(0)
        cityID = row.int64(1)
        userID = row.optionalInt64(2)
        body = row.string(3)
        createdAt = row.date(4)
        editedAt = row.optionalDate(5)
        hiddenAt = row.optionalDate(6)
        removedAt = row.optionalDate(7)
        removedReason = row.optionalString(8)
        username = row.optionalString(9)
        displayName = row.optionalString(10)
        authorIsAdmin = row.optionalString(11) == "admin"
        citySlug = row.string(12)
        cityNameEn = row.string(13)
        cityNameKo = row.optionalString(14)
        reportedByViewerAt = row.optionalDate(15)
        parentID = row.optionalInt64(16)
        reactions = row.int(17)
        reactedByViewer = row.int(18) > 0
        observation = Observation(sky: row.optionalString(19).flatMap(Observation.Sky.init(rawValue:)),
                                  feels: row.optionalString(20).flatMap(Observation.Feels.init(rawValue:)))
    }
}
