import Foundation

/// A post's photo as a board reads it.
struct PostPhoto: Sendable, Hashable {
    var hash: String
    var alt: String?
    var state: PhotoState
    var width: Int
    var height: Int
    var smallWidth: Int
}

/// A post as a viewer may see it, with its author and the viewer's relation to it.
struct PostRow: Sendable, Hashable {
    var id: Int64
    var cityID: Int64
    var userID: Int64?
    var username: String?
    var displayName: String?
    var authorIsAdmin: Bool
    /// The author's standing (`Standing`), as kept on their account.
    var authorLevel: Int
    var body: String
    var createdAt: Date
    var editedAt: Date?
    var hiddenAt: Date?
    var removedAt: Date?
    var removedReason: String?
    var citySlug: String
    var cityNameEn: String
    var cityNameKo: String?
    /// Its city's IANA zone: the time it was written is shown in it.
    var cityTimeZone: String
    /// When the viewer reported it (they see a placeholder instead).
    var reportedByViewerAt: Date?
    /// The post it answers, for a reply.
    var parentID: Int64?
    /// How many people agreed with it, and whether the viewer is one of them.
    var reactions: Int
    var reactedByViewer: Bool
    /// What its author saw outside, if they said (posts only).
    var observation: Observation
    /// Until when a moderator pinned it at the top of its board.
    var pinnedUntil: Date?
    /// Written by the site itself (a warning's thread).
    var authorIsSite: Bool
    /// The warning whose thread this is.
    var warningID: String?
    /// Its photo, if it has one.
    var photo: PostPhoto?

    /// The SELECT list `init(row:)` reads, in order (`p` the post, `u` its author, `c` its city,
    /// `?1` the viewer): the list and the reader come from this one enum, so a column added or
    /// moved cannot be read from the wrong place.
    enum Column: Int, CaseIterable {
        case id, cityID, userID, body, createdAt, editedAt, hiddenAt, removedAt, removedReason
        case username, displayName, role, citySlug, cityNameEn, cityNameKo
        case reportedAt, parentID, reactions, reacted, sky, feels, pinnedUntil, authorLevel, authorIsSite, warningID
        case photoHash, photoAlt, photoState, photoWidth, photoHeight, photoSmallWidth, cityTimeZone

        var sql: String {
            switch self {
            case .id: "p.id"
            case .cityID: "p.city_id"
            case .userID: "p.user_id"
            case .body: "p.body"
            case .createdAt: "p.created_at"
            case .editedAt: "p.edited_at"
            case .hiddenAt: "p.hidden_at"
            case .removedAt: "p.removed_at"
            case .removedReason: "p.removed_reason"
            case .username: "u.username"
            case .displayName: "u.display_name"
            case .role: "u.role"
            case .citySlug: "c.slug"
            case .cityNameEn: "c.name_en"
            case .cityNameKo: "c.name_ko"
            case .reportedAt: ReaderMark.reported.forPost
            case .parentID: "p.parent_id"
            case .reactions: "(SELECT count(*) FROM reactions x WHERE x.post_id = p.id)"
            case .reacted: ReaderMark.agreed.forPost
            case .sky: "p.sky"
            case .feels: "p.feels"
            case .pinnedUntil: "p.pinned_until"
            case .authorLevel: "u.level"
            case .authorIsSite: "u.is_system"
            case .warningID: "p.warning_id"
            case .photoHash: "p.photo_hash"
            case .photoAlt: "p.photo_alt"
            case .photoState: "p.photo_state"
            case .photoWidth: "p.photo_width"
            case .photoHeight: "p.photo_height"
            case .photoSmallWidth: "p.photo_small_width"
            case .cityTimeZone: "c.timezone"
            }
        }
    }

    static let selectList = Column.allCases.map(\.sql).joined(separator: ", ")
    /// The columns `init(row:)` reads; a query may select more after them.
    static let columnCount = Column.allCases.count

    /// Its own address: a post's page, or its place on the page of the post it answers.
    var href: String { Self.href(id: id, parentID: parentID) }

    /// The address of a post (its page) or of a reply (its place on its post's page).
    static func href(id: Int64, parentID: Int64?) -> String {
        parentID.map { "/posts/\($0)#post-\(id)" } ?? "/posts/\(id)"
    }

    /// Where its author left it: a post on its board, a reply in its conversation (a board shows
    /// only the newest two replies of a post).
    var placeHref: String { parentID == nil ? "/city/\(citySlug)#post-\(id)" : href }

    /// Reads `selectList` by position (by name, each look-up hashed the column's name: 21
    /// columns × 21 rows on every board page).
    init(row: any SQLRow) {
        id = row.int64(Column.id.rawValue)
        cityID = row.int64(Column.cityID.rawValue)
        userID = row.optionalInt64(Column.userID.rawValue)
        body = row.string(Column.body.rawValue)
        createdAt = row.date(Column.createdAt.rawValue)
        editedAt = row.optionalDate(Column.editedAt.rawValue)
        hiddenAt = row.optionalDate(Column.hiddenAt.rawValue)
        removedAt = row.optionalDate(Column.removedAt.rawValue)
        removedReason = row.optionalString(Column.removedReason.rawValue)
        username = row.optionalString(Column.username.rawValue)
        displayName = row.optionalString(Column.displayName.rawValue)
        authorIsAdmin = row.optionalString(Column.role.rawValue) == "admin"
        citySlug = row.string(Column.citySlug.rawValue)
        cityNameEn = row.string(Column.cityNameEn.rawValue)
        cityNameKo = row.optionalString(Column.cityNameKo.rawValue)
        cityTimeZone = row.string(Column.cityTimeZone.rawValue)
        reportedByViewerAt = row.optionalDate(Column.reportedAt.rawValue)
        parentID = row.optionalInt64(Column.parentID.rawValue)
        reactions = row.int(Column.reactions.rawValue)
        reactedByViewer = row.int(Column.reacted.rawValue) > 0
        observation = Observation(sky: row.optionalString(Column.sky.rawValue).flatMap(Observation.Sky.init(rawValue:)),
                                  feels: row.optionalString(Column.feels.rawValue).flatMap(Observation.Feels.init(rawValue:)))
        pinnedUntil = row.optionalDate(Column.pinnedUntil.rawValue)
        authorLevel = row.int(Column.authorLevel.rawValue)
        authorIsSite = (row.optionalInt(Column.authorIsSite.rawValue) ?? 0) != 0
        warningID = row.optionalString(Column.warningID.rawValue)
        if let hash = row.optionalString(Column.photoHash.rawValue) {
            photo = PostPhoto(hash: hash, alt: row.optionalString(Column.photoAlt.rawValue),
                              state: row.optionalString(Column.photoState.rawValue).flatMap(PhotoState.init(rawValue:)) ?? .waiting,
                              width: row.int(Column.photoWidth.rawValue), height: row.int(Column.photoHeight.rawValue),
                              smallWidth: row.int(Column.photoSmallWidth.rawValue))
        }
    }
}

/// A mark on a post that only its reader sees, said once (issue 63 #3): the table and the
/// reader's column, read either for one post as a `PostRow` column (`forPost`) or for the reader
/// over a page's ids when the board as everyone sees it is kept (`forReader`, `ViewerMarks`).
enum ReaderMark: CaseIterable {
    /// When the reader reported the post.
    case reported
    /// Whether the reader agreed with it.
    case agreed

    var table: String { self == .reported ? "reports" : "reactions" }
    var readerColumn: String { self == .reported ? "reporter_id" : "user_id" }
    /// What the mark reads: the report's time, or a count (0 or 1) of agreements.
    private var value: String { self == .reported ? "x.created_at" : "count(*)" }

    /// The column for the post `p.id` and the reader `?1`.
    var forPost: String { "(SELECT \(value) FROM \(table) x WHERE x.post_id = p.id AND x.\(readerColumn) = ?1)" }

    /// The reader `?1`'s marks on posts `?3...?4`: rows of `kind, post id, report time`.
    func forReader(kind: Int) -> String {
        "SELECT \(kind), x.post_id, \(self == .reported ? "x.created_at" : "NULL") FROM \(table) x WHERE x.\(readerColumn) = ?1 AND x.post_id BETWEEN ?3 AND ?4"
    }
}
