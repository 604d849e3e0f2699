import Foundation

/// A photo on its way onto a post: the processed picture and the description its author gave.
struct NewPhoto: Sendable {
    var photo: ProcessedPhoto
    /// At most `TextPolicy.photoAlt`'s length; empty: none given.
    var alt: String
}

/// Who sees a post's photo unblurred (`posts.photo_state`).
enum PhotoState: String, Sendable {
    /// Its author had standing, or three members with standing agreed.
    case shown
    /// Its author is new: blurred for others until a moderator approves or three members with standing agree.
    case waiting
    /// Someone reported the post: blurred for everyone but its author until a moderator decides.
    case reported
    /// A moderator approved it (a later report blurs it again).
    case approved

    var blurredForOthers: Bool { self == .waiting || self == .reported }
}

/// The stored forms of a photo, each its own address.
enum PhotoVariant: String, CaseIterable, Sendable {
    case large = "webp", small = "480.webp", jpeg = "jpg"

    var column: String {
        switch self {
        case .large: "large_webp"
        case .small: "small_webp"
        case .jpeg: "jpeg"
        }
    }

    var contentType: String { self == .jpeg ? "image/jpeg" : "image/webp" }

    func path(_ hash: String) -> String { "/photos/\(hash).\(rawValue)" }

    /// `{hash}.webp`, `{hash}.480.webp` or `{hash}.jpg`: the hash and the variant, or nil.
    static func parse(_ file: String) -> (hash: String, variant: PhotoVariant)? {
        guard let dot = file.firstIndex(of: ".") else { return nil }
        let hash = String(file[..<dot]), rest = String(file[file.index(after: dot)...])
        guard hash.utf8.count == 32, hash.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }),
              let variant = PhotoVariant(rawValue: rest) else { return nil }
        return (hash, variant)
    }
}

/// The photo queries, beside the records they read; the writes run inside the board's and the
/// moderators' transactions.
enum PhotoQueries {
    /// Why `photo` may not be kept for `author` now, or nil.
    static func refusal(of photo: ProcessedPhoto, author: Int64, limits: PhotoLimits, now: Double, _ db: any SQLConnection) throws -> PhotoRefusal? {
        // The author's photos are counted under their lock (the post's write holds it); the
        // site's space under its own, until this photo is kept or refused.
        try db.lock(.photoSpace)
        if try postedTheirDay(author, limits: limits, now: now, db) { return .dailyLimit }
        if try db.integer("SELECT coalesce(sum(bytes), 0) FROM photos WHERE user_id = ?", author) + photo.bytes > limits.bytesPerMember {
            return .memberBytes
        }
        if try db.integer("SELECT coalesce(sum(bytes), 0) FROM photos") + photo.bytes > limits.siteBudget {
            return .siteBudget
        }
        // Every removed picture is compared (a few bits each): linear in removals, which are rare.
        var removed = false
        try db.forEachRow("SELECT difference_hash FROM removed_photos", []) { row in
            if PhotoLikeness.distance(UInt64(bitPattern: row.int64(0)), photo.differenceHash) <= PhotoLikeness.sameWithin { removed = true }
        }
        return removed ? .removedBefore : nil
    }

    /// Whether `author` has posted as many photos as a day allows: asked again before an upload
    /// is decoded, so that a member past the limit costs no decode.
    /// Counted as posts with a photo as well as photos kept: a picture already kept (one's own
    /// again, or someone else's) adds no row to `photos`, and a deleted post leaves its row.
    static func postedTheirDay(_ author: Int64, limits: PhotoLimits, now: Double, _ db: any SQLConnection) throws -> Bool {
        try db.integer("""
            SELECT max(n) FROM (SELECT count(*) AS n FROM photos WHERE user_id = ?1 AND created_at > ?2
                                UNION ALL SELECT count(*) FROM posts WHERE user_id = ?1 AND created_at > ?2 AND photo_hash IS NOT NULL) counted
            """, author, now - 86_400) >= limits.perDay
    }

    /// Keeps the photo's files (a photo already kept under the same hash is the same bytes).
    static func keep(_ photo: ProcessedPhoto, author: Int64, now: Double, _ db: any SQLConnection) throws {
        try db.execute("""
            INSERT INTO photos (hash, user_id, width, height, small_width, bytes, difference_hash, created_at, large_webp, small_webp, jpeg)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (hash) DO NOTHING
            """, ([photo.hash, author, photo.width, photo.height, photo.smallWidth, photo.bytes, Int64(bitPattern: photo.differenceHash),
                   now, photo.largeWebP, photo.smallWebP, photo.jpeg] as [any SQLArgument]).map { $0.sqlValue })
    }

    /// The state a new photo starts in: shown at once when its author has standing.
    static func initialState(_ level: Standing.Level) -> PhotoState { level.value >= 1 ? .shown : .waiting }

    /// One stored form of a photo, while a post that is not removed shows it.
    static func file(_ hash: String, _ variant: PhotoVariant, _ db: any SQLConnection) throws -> [UInt8]? {
        try db.one("""
            SELECT ph.\(variant.column) FROM photos ph WHERE ph.hash = ?
            AND EXISTS (SELECT 1 FROM posts p WHERE p.photo_hash = ph.hash AND p.removed_at IS NULL)
            """, [hash]) { $0.bytes(0) }
    }

    /// Deletes the photo's files when no post shows it any more.
    static func dropIfUnused(_ hash: String, _ db: any SQLConnection) throws {
        try db.execute("DELETE FROM photos WHERE hash = ? AND NOT EXISTS (SELECT 1 FROM posts WHERE photo_hash = ?)", hash, hash)
    }

    /// Three members with standing (other than its author) agreeing show a new member's photo.
    static let agreementsToShow = 3

    /// After an agreement with `postID`: a waiting photo is shown once enough members with standing agree.
    static func agreementsChanged(_ postID: Int64, _ db: any SQLConnection, _ changes: ChangeLog) throws {
        let agreeing = try db.integer("""
            SELECT count(*) FROM reactions x JOIN users u ON u.id = x.user_id JOIN posts p ON p.id = x.post_id
            WHERE x.post_id = ? AND p.photo_state = 'waiting' AND u.level >= 1 AND x.user_id <> coalesce(p.user_id, 0)
            """, postID)
        guard agreeing >= agreementsToShow else { return }
        try setState(postID, .shown, only: [.waiting], db, changes)
    }

    /// A report blurs the photo for everyone but its author.
    static func reported(_ postID: Int64, _ db: any SQLConnection, _ changes: ChangeLog) throws {
        try setState(postID, .reported, only: [.shown, .waiting, .approved], db, changes)
    }

    /// Sets the post's photo state (when it is in one of `only`), telling the boards.
    @discardableResult
    static func setState(_ postID: Int64, _ state: PhotoState, only: [PhotoState], _ db: any SQLConnection, _ changes: ChangeLog) throws -> Bool {
        let marks = only.map { _ in "?" }.joined(separator: ", ")
        guard let event = try db.one("""
            UPDATE posts SET photo_state = ? WHERE id = ? AND photo_state IN (\(marks)) RETURNING id, city_id, parent_id, user_id
            """, [state.rawValue, postID] + only.map(\.rawValue), PostEvent.read) else { return false }
        var edited = event
        edited.kind = .edited
        try changes.emit(.post(edited))
        return true
    }

    /// A removed post's photo is refused again as a removed photo is (issue 61 #6): its likeness
    /// remembered at the post's removal time, `removedAt`.
    static func rememberLikeness(ofPost postID: Int64, removedAt: Date, _ db: any SQLConnection) throws {
        try db.execute("""
            INSERT INTO removed_photos (difference_hash, removed_at)
            SELECT f.difference_hash, ? FROM posts p JOIN photos f ON f.hash = p.photo_hash WHERE p.id = ?
            """, removedAt, postID)
    }

    /// A restored post's photo is no longer refused: the likeness its removal remembered goes
    /// (read before the post's removal time is cleared).
    static func forgetLikeness(ofPost postID: Int64, _ db: any SQLConnection) throws {
        try db.execute("""
            DELETE FROM removed_photos WHERE id IN (
                SELECT r.id FROM posts p JOIN photos f ON f.hash = p.photo_hash
                JOIN removed_photos r ON r.difference_hash = f.difference_hash AND r.removed_at = p.removed_at
                WHERE p.id = ?)
            """, postID)
    }

    /// Takes the photo off every post that shows it, remembers what it looks like so that it is
    /// refused again, and deletes its files. The posts' events, for the boards.
    static func remove(hash: String, now: Double, _ db: any SQLConnection, _ changes: ChangeLog) throws {
        guard let likeness = try db.one("SELECT difference_hash FROM photos WHERE hash = ?", [hash], { $0.int64(0) }) else { return }
        try db.execute("INSERT INTO removed_photos (difference_hash, removed_at) VALUES (?, ?)", likeness, now)
        let events = try db.all("""
            UPDATE posts SET photo_hash = NULL, photo_alt = NULL, photo_state = NULL, photo_width = NULL, photo_height = NULL,
                             photo_small_width = NULL
            WHERE photo_hash = ? RETURNING id, city_id, parent_id, user_id
            """, [hash], PostEvent.read)
        for var event in events {
            event.kind = .edited
            try changes.emit(.post(event))
        }
        try db.execute("DELETE FROM photos WHERE hash = ?", hash)
    }

    /// A photo waiting for a moderator: its post, its city, its author and why it waits.
    struct Waiting: Sendable {
        var postID: Int64
        var hash: String
        var alt: String
        var state: PhotoState
        var citySlug: String
        var author: String?
        var body: String
    }

    static func waiting(limit: Int = 50, _ db: any SQLConnection) throws -> [Waiting] {
        try db.all("""
            SELECT p.id, p.photo_hash, coalesce(p.photo_alt, ''), p.photo_state, c.slug, u.username, p.body
            FROM posts p JOIN cities c ON c.id = p.city_id LEFT JOIN users u ON u.id = p.user_id
            WHERE p.photo_state IN ('waiting', 'reported') AND p.removed_at IS NULL ORDER BY p.id LIMIT ?
            """, [limit]) { row in
            Waiting(postID: row.int64(0), hash: row.string(1), alt: row.string(2), state: PhotoState(rawValue: row.string(3)) ?? .waiting,
                    citySlug: row.string(4), author: row.optionalString(5), body: row.string(6))
        }
    }
}
