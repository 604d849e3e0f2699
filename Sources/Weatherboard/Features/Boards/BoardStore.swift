import Foundation
import HTTPServer

/// The boards' data: posts as each viewer may see them, writing and changing posts, blocks and
/// reports. Checks and the write they guard share one transaction (two quick posts cannot both
/// pass the posting rules; the report that crosses the threshold hides the post with it).
struct BoardStore: Sendable {
    let database: AppDatabase
    /// Who is told of what the board's writes do (`BoardEffects`).
    let effects: any BoardEffects

    func post(id: Int64, viewer: User?, removed: BoardQueries.Removed = .none) throws -> PostRow? {
        try database.readStatement { try BoardQueries.post(id: id, viewer: viewer, removed: removed, $0) }
    }

    /// A board's posts in their order, pins among them (for its feed: pins are the page's).
    func board(cityID: Int64, viewer: User?, before: Int64?) throws -> [PostRow] {
        try database.readStatement { try BoardQueries.board(cityID: cityID, viewer: viewer, before: before, pinnedAt: nil, $0) }
    }

    /// Inserts the post (with what its author saw outside, if they said) unless `rules` refuse
    /// it: the new post's id, or the refusal.
    func create(cityID: Int64, userID: Int64, body: String, observation: Observation? = nil, photo: NewPhoto? = nil,
                now: Double, rules: PostingRules) throws -> Result<Int64, PostingRules.Refusal> {
        // The author is the first (and, but for a photo's space, the only) subject a post locks.
        try database.write(.subject(.member(userID))) { db, changes in
            switch try Self.insert(cityID: cityID, parentID: nil, userID: userID, body: body, observation: observation, photo: photo,
                                   now: now, rules: rules, db, changes) {
            case .failure(let refusal):
                return .failure(refusal)
            case .success(let id):
                try effects.posted(id, body: body, author: userID, now: now, db, changes)
                return .success(id)
            }
        }
    }

    /// A reply refused because the post it answers was removed, or is hidden by reports.
    struct RepliesClosed: Error {
        var hidden = false
    }

    /// Inserts a reply to the post `postID` (to the post a reply answers, when it is a reply:
    /// one level) unless `rules` refuse it; the reply's id and the post it answers, or the refusal.
    /// The post is read again in the transaction: deleted since, 404; removed, or hidden by
    /// reports, `RepliesClosed` (a closed conversation takes replies, and so mentions, from a
    /// `moderator` only).
    func reply(to postID: Int64, userID: Int64, moderator: Bool = false, body: String, now: Double,
               rules: PostingRules) throws -> Result<(id: Int64, parentID: Int64), PostingRules.Refusal> {
        try database.write(.subjects) { db, changes in
            guard let target = try db.one("SELECT id, parent_id, city_id FROM posts WHERE id = ?", [postID], {
                (id: $0.int64(0), parentID: $0.optionalInt64(1), cityID: $0.int64(2))
            }) else { throw HTTPError(.notFound) }
            let parentID = target.parentID ?? target.id
            // Its replies are counted, its state read, under the conversation's lock.
            try db.lock(.post(parentID))
            guard let parent = try db.one("SELECT user_id, removed_at, hidden_at FROM posts WHERE id = ?", [parentID], {
                (authorID: $0.optionalInt64(0), removed: !$0.isNull(1), hidden: !$0.isNull(2))
            }) else { throw HTTPError(.notFound) }
            // A post hidden by reports is not there for anyone but its author, nor its conversation;
            // its author sees it, closed, until a moderator decides.
            if parent.hidden && parent.authorID != userID && !moderator { throw HTTPError(.notFound) }
            if parent.removed && !moderator { throw RepliesClosed() }
            if parent.hidden && !moderator { throw RepliesClosed(hidden: true) }
            // Someone the post's author blocked does not reply under it (their earlier replies stay, for others).
            if let author = parent.authorID, !moderator, try Self.blocks(author, userID, db) { throw BlockedByAuthor() }
            if try db.integer("SELECT count(*) FROM posts WHERE parent_id = ?", parentID) >= PostingRules.repliesPerPost {
                return .failure(PostingRules.Refusal(key: "error_replies_full", arguments: ["n": String(PostingRules.repliesPerPost)],
                                                     status: .conflict))
            }
            // The pause between posts is for starting things: answering in one's own conversation
            // is a conversation, not a flood (the daily limit and duplicates still hold).
            let saved = try Self.insert(cityID: target.cityID, parentID: parentID, userID: userID, body: body, observation: nil, now: now,
                                        rules: rules, paced: parent.authorID != userID, db, changes)
            if case .success(let id) = saved {
                try effects.replied(id, body: body, author: userID, answering: parent.authorID, now: now, db, changes)
            }
            return saved.map { (id: $0, parentID: parentID) }
        }
    }

    /// A post or reply, unless `rules` refuse it: the rules count posts and replies together.
    private static func insert(cityID: Int64, parentID: Int64?, userID: Int64, body: String, observation: Observation?,
                               photo: NewPhoto? = nil, now: Double,
                               rules: PostingRules, paced: Bool = true, _ db: any SQLConnection,
                               _ changes: ChangeLog) throws -> Result<Int64, PostingRules.Refusal> {
        // What the rules count of the author, and their ban, read under their lock: two posts at
        // once cannot both pass, and none is saved after a ban committed (the ban is a
        // `.cluster` write; the session the request read may predate it).
        try db.lock(.member(userID))
        let key = PostingRules.duplicateKey(body)
        let (ban, latest, today, duplicateOf, _) = try authorState(userID, duplicateKey: key, now: now, db)
        if let ban { throw BannedError(ban: ban) }
        let last = paced ? latest : nil
        let level = try Standing.refresh(userID, now: Date(timeIntervalSince1970: now), db, changes)
        if let refusal = rules.refusal(of: body, now: now, lastPostAt: last, postsToday: today, duplicateOf: duplicateOf, level: level,
                                       eventMode: rules.inEventMode(cityID), isReply: parentID != nil) {
            return .failure(refusal)
        }
        if let photo {
            if let refusal = try PhotoQueries.refusal(of: photo.photo, author: userID, limits: rules.photoLimits, now: now, db) {
                return .failure(refusal.posting)
            }
            try PhotoQueries.keep(photo.photo, author: userID, now: now, db)
        }
        let id = try db.one("""
            INSERT INTO posts (city_id, user_id, body, created_at, parent_id, sky, feels,
                               photo_hash, photo_alt, photo_state, photo_width, photo_height, photo_small_width, duplicate_key)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id
            """, [cityID, userID, body, now, parentID, observation?.sky?.rawValue, observation?.feels?.rawValue, photo?.photo.hash,
                  photo.map { $0.alt.isEmpty ? nil : $0.alt } ?? nil, photo.map { _ in PhotoQueries.initialState(level).rawValue },
                  photo?.photo.width, photo?.photo.height, photo?.photo.smallWidth, key]) { $0.int64(0) } ?? 0
        try changes.emit(.post(PostEvent(.posted, id: id, city: cityID, parent: parentID, author: userID)))
        return .success(id)
    }

    /// The ban, the last post, the day's count, a recent post saying the same and the stored
    /// level of `userID`, in one statement: this runs on every post.
    private static func authorState(_ userID: Int64, duplicateKey key: Int64, now: Double, _ db: any SQLConnection) throws
        -> (ban: Ban?, latest: Double?, today: Int, duplicateOf: Int64?, level: Int) {
        try db.one("""
            SELECT b.reason, b.until, (SELECT max(created_at) FROM posts WHERE user_id = ?1),
                   (SELECT count(*) FROM posts WHERE user_id = ?1 AND created_at > ?3),
                   (SELECT min(id) FROM posts WHERE user_id = ?1 AND created_at > ?4 AND duplicate_key = ?5),
                   (SELECT level FROM users WHERE id = ?1)
            FROM (SELECT CAST(?1 AS BIGINT) AS id) u LEFT JOIN bans b ON b.id = (\(Ban.activeIDSQL))
            """, [userID, now, now - 86400, now - PostingRules.duplicateWindow, key]) { row in
            (row.isNull(0) ? nil : Ban(reason: row.string(0), until: row.optionalDate(1)), row.optionalDouble(2), row.int(3),
             row.optionalInt64(4), row.isNull(5) ? 0 : row.int(5))
        } ?? (nil, nil, 0, nil, 0)
    }

    /// What the rules would refuse a post for now, read before work that costs more than the post
    /// (a photo's decode): the pace, the day's count and a recent post saying the same, by the
    /// level the account holds. The write checks them all again under the member's lock.
    func refusalBeforeWork(cityID: Int64, userID: Int64, body: String, now: Double, rules: PostingRules) throws -> PostingRules.Refusal? {
        let state = try database.readStatement(.current) { try Self.authorState(userID, duplicateKey: PostingRules.duplicateKey(body), now: now, $0) }
        if let ban = state.ban { throw BannedError(ban: ban) }
        return rules.refusal(of: body, now: now, lastPostAt: state.latest, postsToday: state.today, duplicateOf: state.duplicateOf,
                             level: Standing.Level(value: state.level), eventMode: rules.inEventMode(cityID))
    }

    /// Why a reply is refused: the post's author blocked the replier.
    struct BlockedByAuthor: Error {}

    /// Whether `blocker` blocked `person`.
    static func blocks(_ blocker: Int64, _ person: Int64, _ db: any SQLConnection) throws -> Bool {
        try db.exists("SELECT 1 FROM blocks WHERE blocker_id = ? AND blocked_id = ?", blocker, person)
    }

    /// Whether the author of `post` blocked `viewer` (their reply form is gone under it).
    /// The author of a post the viewer cannot see only because they blocked that author (a post
    /// still on its board), as (username, display name): said rather than "not found".
    func blockedAuthor(ofPost postID: Int64, viewer: Int64) throws -> (username: String, displayName: String)? {
        try database.readStatement { db in
            try db.one("""
                SELECT u.username, u.display_name FROM posts p JOIN users u ON u.id = p.user_id
                JOIN blocks b ON b.blocker_id = ? AND b.blocked_id = p.user_id
                WHERE p.id = ? AND p.removed_at IS NULL AND p.hidden_at IS NULL
                """, [viewer, postID]) { ($0.string(0), $0.string(1)) }
        }
    }

    func isBlocked(_ viewer: Int64, by author: Int64?) throws -> Bool {
        guard let author, author != viewer else { return false }
        return try database.readStatement { try Self.blocks(author, viewer, $0) }
    }

    /// Why a reaction is refused: it is the person's own post.
    struct OwnPost: Error {}

    /// Agrees with a post or reply, or takes the agreement back; whether the person agrees now.
    /// Not with their own, and not with a removed or hidden one, nor a reply in a conversation
    /// closed by removal or reports (404, as it is not there for them), unless a `moderator`.
    /// Whether the person agrees now, and how many do.
    func toggleReaction(postID: Int64, userID: Int64, moderator: Bool = false, now: Date, limit: RateLimit) throws -> (agrees: Bool, count: Int) {
        try database.write(.subjects) { db, changes in
            // Its agreements, and the one notice that counts them, change under the post's lock.
            try db.lock(.post(postID))
            guard let post = try db.one("""
                SELECT p.city_id, p.user_id, p.removed_at, p.parent_id, p.hidden_at, q.hidden_at, q.removed_at
                FROM posts p LEFT JOIN posts q ON q.id = p.parent_id WHERE p.id = ?
                """, [postID], {
                (cityID: $0.int64(0), authorID: $0.optionalInt64(1), removed: !$0.isNull(2), parentID: $0.optionalInt64(3),
                 hidden: !$0.isNull(4), parentHidden: !$0.isNull(5), parentRemoved: !$0.isNull(6))
            }), !post.removed else { throw HTTPError(.notFound) }
            if (post.hidden || post.parentHidden || post.parentRemoved) && !moderator { throw HTTPError(.notFound) }
            if post.authorID == userID { throw OwnPost() }
            // Each toggle changes the board's cached page: a person cannot make it re-render without end.
            try limit.hit("react:user:\(userID)", now: now, db)
            let agrees: Bool
            if try db.execute("DELETE FROM reactions WHERE post_id = ? AND user_id = ?", postID, userID) > 0 {
                try effects.agreementWithdrawn(from: postID, db)
                agrees = false
            } else {
                try db.execute("INSERT INTO reactions (post_id, user_id, created_at) VALUES (?, ?, ?)", postID, userID, now)
                try effects.agreed(with: postID, author: post.authorID, by: userID, now: now.timeIntervalSince1970, db, changes)
                try PhotoQueries.agreementsChanged(postID, db, changes)
                if let author = post.authorID { try Standing.refresh(author, now: now, db, changes) }
                agrees = true
            }
            let count = try db.integer("SELECT count(*) FROM reactions WHERE post_id = ?", postID)
            try changes.emit(.post(PostEvent(.agreed, id: postID, city: post.cityID, parent: post.parentID, author: post.authorID, count: count)))
            return (agrees, count)
        }
    }

    /// A post's page: the post as the viewer may see it (a removed one as its notice) and a page
    /// of its replies, in one read.
    func conversation(postID: Int64, viewer: User?, after: Int64?) throws -> (post: PostRow, replies: [PostRow], count: Int)? {
        try database.read { db in
            guard let post = try BoardQueries.post(id: postID, viewer: viewer, removed: .all, db) else { return nil }
            // Nobody reads the replies of a removed post.
            guard post.removedAt == nil, post.parentID == nil else { return (post, [], 0) }
            let (replies, count) = try BoardQueries.replies(to: postID, viewer: viewer, after: after, db)
            return (post, replies, count)
        }
    }

    /// A reply as someone with no part in it may see it: shown (neither hidden nor removed)
    /// under a post that is shown too; nil otherwise.
    func sharedReply(_ id: Int64) throws -> PostRow? {
        try database.read { db in
            guard let reply = try BoardQueries.post(id: id, viewer: nil, db), let postID = reply.parentID,
                  try BoardQueries.post(id: postID, viewer: nil, db) != nil else { return nil }
            return reply
        }
    }

    /// Whether people's reports of the post wait for a moderator.
    private static func isUnderReview(postID: Int64, _ db: any SQLConnection) throws -> Bool {
        try db.exists("SELECT 1 FROM reports WHERE post_id = ? AND outcome = 'pending' LIMIT 1", postID)
    }

    /// An author's change to their post, refused while reports of it wait for a moderator.
    struct UnderReview: Error {}

    /// Changes the text, unless reports of the post wait for review (checked in the same
    /// transaction: a report arriving between a check and the write cannot be overtaken).
    func edit(postID: Int64, authorID: Int64?, body: String, now: Date) throws {
        try database.write(.cluster) { db, changes in  // checked against reports, which lock no post yet
            if try Self.isUnderReview(postID: postID, db) { throw UnderReview() }
            try Self.changed(.edited, on: changes, try db.one("""
                UPDATE posts SET body = ?, edited_at = ?, duplicate_key = ? WHERE id = ? AND user_id = ? RETURNING id, city_id, parent_id, user_id
                """, [body, now, PostingRules.duplicateKey(body), postID, authorID], PostEvent.read))
        }
    }

    /// How many replies a post has (whoever can see them): they are deleted with it.
    func replyCount(of postID: Int64) throws -> Int {
        try database.readStatement { try $0.integer("SELECT count(*) FROM posts WHERE parent_id = ?", postID) }
    }

    /// Deletes the post (with its reports and replies), unless reports of it wait for review (same transaction).
    func delete(postID: Int64, authorID: Int64?) throws {
        try database.write(.cluster) { db, changes in  // checked against reports; replies and notices of others go
            if try Self.isUnderReview(postID: postID, db) { throw UnderReview() }
            let photo = try db.one("SELECT photo_hash FROM posts WHERE id = ? AND user_id = ?", [postID, authorID]) { $0.optionalString(0) } ?? nil
            try Self.changed(.gone, on: changes, try db.one("""
                DELETE FROM posts WHERE id = ? AND user_id = ? RETURNING id, city_id, parent_id, user_id
                """, [postID, authorID], PostEvent.read))
            // Its photo's files go with it (they count against the author's and the site's space).
            if let photo { try PhotoQueries.dropIfUnused(photo, db) }
        }
    }

    /// Emits what happened to the post a statement changed (nil: it changed none), read by
    /// `PostEvent.read` from the statement's `RETURNING id, city_id, parent_id, user_id`.
    private static func changed(_ kind: PostEvent.Kind, on changes: ChangeLog, _ event: PostEvent?) throws {
        if var event {
            event.kind = kind
            try changes.emit(.post(event))
        }
    }

    // MARK: - Blocks

    /// Who wrote a post, and whether it is hidden by reports or removed (live pages decide by it
    /// who may hear of its replies); nil when it is gone.
    func conversationState(of postID: Int64) throws -> LiveBoards.Conversation? {
        try database.readStatement { db in
            try db.one("SELECT user_id, hidden_at IS NOT NULL, removed_at IS NOT NULL FROM posts WHERE id = ?", [postID]) {
                LiveBoards.Conversation(author: $0.optionalInt64(0), hidden: $0.int(1) != 0, removed: $0.int(2) != 0)
            }
        }
    }

    /// Everyone `userID` blocked, and everyone they have muted now.
    func silencedIDs(by userID: Int64, now: Date) throws -> (blocked: Set<Int64>, muted: Set<Int64>) {
        try database.read { db in
            (Set(try db.all("SELECT blocked_id FROM blocks WHERE blocker_id = ?", [userID]) { $0.int64(0) }),
             try Mutes.mutedIDs(by: userID, now: now, db))
        }
    }

    /// The people `userID` has muted now.
    func mutedIDs(by userID: Int64?, now: Date) throws -> Set<Int64> {
        guard let userID else { return [] }
        return try database.readStatement { try Mutes.mutedIDs(by: userID, now: now, $0) }
    }

    /// A person's recent posts as the viewer may see them, whether the viewer blocked them, and
    /// the viewer's mute of them in force.
    func profile(of personID: Int64, viewer: User?, now: Date) throws -> (posts: [PostRow], blockedByViewer: Bool, mute: Mute?, level: Int) {
        try database.read { db in
            (try BoardQueries.byAuthor(userID: personID, viewer: viewer, db),
             try db.exists("SELECT 1 FROM blocks WHERE blocker_id = ? AND blocked_id = ?", viewer?.id, personID),
             try viewer.map { try Mutes.mute(of: personID, by: $0.id, now: now, db) } ?? nil,
             try Standing.stored(personID, db).level)
        }
    }

    /// Mutes `mutedID` for `muterID` for `duration` (muting again sets the new end).
    func mute(_ mutedID: Int64, by muterID: Int64, for duration: MuteDuration, now: Date) throws {
        try database.write(.subject(.member(muterID))) { db, changes in  // the muter's own row
            try Mutes.set(mutedID, by: muterID, until: duration.until(now), now: now, db)
            try changes.emit(.silenced(muterID))
        }
    }

    func unmute(_ mutedID: Int64, by muterID: Int64) throws {
        try database.write(.subject(.member(muterID))) { db, changes in  // the muter's own row
            try Mutes.remove(mutedID, by: muterID, db)
            try changes.emit(.silenced(muterID))
        }
    }

    /// Blocking twice is blocking once. What the blocked person caused to be told goes too.
    func block(_ blockedID: Int64, by blockerID: Int64, now: Date) throws {
        try database.write(.cluster) { db, changes in  // notices the blocked person caused go too
            try db.execute("INSERT INTO blocks (blocker_id, blocked_id, created_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
                           blockerID, blockedID, now)
            try db.execute("DELETE FROM notifications WHERE user_id = ? AND actor_id = ?", blockerID, blockedID)
            try changes.emit(.silenced(blockerID))
        }
    }

    func unblock(_ blockedID: Int64, by blockerID: Int64) throws {
        try database.write(.cluster) { db, changes in  // as its block
            try db.execute("DELETE FROM blocks WHERE blocker_id = ? AND blocked_id = ?", blockerID, blockedID)
            try changes.emit(.silenced(blockerID))
        }
    }

    // MARK: - Reports

    /// The post as the reporter sees it, and whether they reported it already.
    func postToReport(id: Int64, reporter: User) throws -> (post: PostRow?, alreadyReported: Bool) {
        try database.read { db in
            (try BoardQueries.post(id: id, viewer: reporter, db),
             try db.exists("SELECT 1 FROM reports WHERE post_id = ? AND reporter_id = ?", id, reporter.id))
        }
    }

    /// Why a report may not be made: too many today.
    struct TooManyReports: Error {
        /// The reporter's allowance (fewer for a new member: `Standing`).
        let perDay: Int
    }

    /// Records the report (a second one by the same person is a no-op) and hides the post if it
    /// reaches `threshold` distinct reporters.
    func report(_ post: PostRow, by reporterID: Int64, reason: String, detail: String, now: Double,
                perDay: Int, threshold: Int) throws {
        try database.write(.subjects) { db, changes in
            // The threshold is weighed under the post's lock: reports at once all count.
            try db.lock(.post(post.id))
            // Read again in this transaction: a post deleted since the form was shown is gone (404),
            // not a foreign-key failure.
            guard try db.exists("SELECT 1 FROM posts WHERE id = ?", post.id) else { throw HTTPError(.notFound) }
            // The site's own thread is not the members' to hide: a moderator removes it if need be.
            guard !post.authorIsSite else { throw HTTPError(.forbidden, message: "The site's own posts cannot be reported.") }
            let level = try Standing.refresh(reporterID, now: Date(timeIntervalSince1970: now), db, changes) // locks the reporter
            let today = try db.integer("SELECT count(*) FROM reports WHERE reporter_id = ? AND created_at > ?", reporterID, now - 86400)
            if today >= level.reportsPerDay(perDay) { throw TooManyReports(perDay: level.reportsPerDay(perDay)) }
            try db.execute("""
                INSERT INTO reports (post_id, reporter_id, reason, detail, created_at, reported_body, weight) VALUES (?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (post_id, reporter_id) DO NOTHING
                """, post.id, reporterID, reason, detail, now, post.body, level.reportWeight)
            try PhotoQueries.reported(post.id, db, changes)
            try Self.applyThreshold(postID: post.id, threshold: threshold, now: now, db, changes)
        }
    }

    /// Why a withdrawal is refused: the window closed.
    struct WithdrawalClosed: Error {}

    /// Withdraws the reporter's pending report, inside the window; the post's city, or nil when
    /// there was no such report.
    func withdraw(postID: Int64, reporterID: Int64, now: Double, threshold: Int) throws -> (id: Int64, slug: String)? {
        try database.write(.subjects) { db, changes in
            try db.lock(.post(postID))
            guard let created = try db.one("SELECT created_at FROM reports WHERE post_id = ? AND reporter_id = ? AND outcome = 'pending'",
                                           [postID, reporterID], { $0.double(0) }) else { return nil }
            guard PostingRules.canWithdraw(reportedAt: Date(timeIntervalSince1970: created), now: Date(timeIntervalSince1970: now)) else {
                throw WithdrawalClosed()
            }
            try db.execute("DELETE FROM reports WHERE post_id = ? AND reporter_id = ?", postID, reporterID)
            try Self.applyThreshold(postID: postID, threshold: threshold, now: now, db, changes)
            return try db.one("SELECT c.id, c.slug FROM posts p JOIN cities c ON c.id = p.city_id WHERE p.id = ?", [postID]) {
                (id: $0.int64(0), slug: $0.string(1))
            }
        }
    }

    /// Hides a post once enough distinct people report it (pending reports only); shows it
    /// again when withdrawals bring it under the threshold.
    private static func applyThreshold(postID: Int64, threshold: Int, now: Double, _ db: any SQLConnection, _ changes: ChangeLog) throws {
        // One report per person (a unique index); a report whose author has since deleted their
        // account still counts.
        // Weighed by each reporter's standing when they reported (`Standing.Level.reportWeight`,
        // in halves of a member's).
        let weight = try db.integer("SELECT coalesce(sum(weight), 0) FROM reports WHERE post_id = ? AND outcome = 'pending'", postID)
        let returning = "RETURNING id, city_id, parent_id, user_id"
        if weight >= threshold * Standing.Level(value: 1).reportWeight {
            try changed(.hidden, on: changes, try db.one("UPDATE posts SET hidden_at = ? WHERE id = ? AND hidden_at IS NULL \(returning)",
                                                         [now, postID], PostEvent.read))
        } else {
            try changed(.shown, on: changes, try db.one("UPDATE posts SET hidden_at = NULL WHERE id = ? AND hidden_at IS NOT NULL \(returning)",
                                                        [postID], PostEvent.read))
        }
    }

    /// A report as its reporter follows it.
    struct MyReport {
        let postID: Int64, reason: String, outcome: String, createdAt: Double, body: String, citySlug: String
    }

    func reports(by reporterID: Int64) throws -> [MyReport] {
        try database.readStatement { db in
            try db.all("""
                SELECT r.post_id, r.reason, r.outcome, r.created_at, p.body, c.slug
                FROM reports r JOIN posts p ON p.id = r.post_id JOIN cities c ON c.id = p.city_id
                WHERE r.reporter_id = ? ORDER BY r.created_at DESC LIMIT 100
                """, [reporterID]) {
                MyReport(postID: $0.int64(0), reason: $0.string(1), outcome: $0.string(2), createdAt: $0.double(3),
                         body: $0.string(4), citySlug: $0.string(5))
            }
        }
    }
}

/// The queries that list posts and replies. Every list goes through `visibleSQL`, so the rules —
/// no posts by people the viewer blocked; hidden posts only for their author and admins; removed
/// posts for nobody (their author sees a notice on their own profile, everyone on the post's own
/// page) — hold on every page, profile and feed alike, for posts and replies alike.
enum BoardQueries {
    static let pageSize = 20
    /// Replies a post's page lists at once (oldest first), and the newest shown under each post on a board.
    static let repliesPageSize = 100
    static let repliesOnBoard = 2

    /// What `PostRow(row:)` reads, from `posts p` and `joinsSQL`.
    static let columnsSQL = PostRow.selectList
    static let joinsSQL = "LEFT JOIN users u ON u.id = p.user_id JOIN cities c ON c.id = p.city_id"

    /// Who may see the post `p`: the rules, on `p` alone (so that a query can apply them to
    /// bare ids before it reads whole rows).
    static let visibleWhere = """
        (p.hidden_at IS NULL OR p.user_id = ?1 OR ?2 = 1 OR (?3 = 2 AND p.removed_at IS NOT NULL))
          AND (p.removed_at IS NULL OR ?3 = 2 OR (?3 = 1 AND p.user_id = ?1))
          AND NOT EXISTS (SELECT 1 FROM blocks b WHERE b.blocker_id = ?1 AND b.blocked_id = p.user_id)
          AND NOT EXISTS (SELECT 1 FROM hidden_posts h WHERE h.viewer_id = ?1 AND h.post_id = p.id)
        """

    private static let visibleSQL = "SELECT \(columnsSQL) FROM posts p \(joinsSQL) WHERE \(visibleWhere)"

    /// Which removed posts a list shows (as a notice, never their text).
    enum Removed: Int {
        case none = 0, ownOnly = 1, all = 2
    }

    /// Posts a board may pin at once (issue 45 #4).
    static let pinsPerBoard = 2

    /// A board page, newest first, before the post `before` (the cursor): posts, not replies.
    /// With `pinnedAt`, the first page starts with the posts pinned then (newest pin first),
    /// which the pages leave out of their order; without, every post in its order (a feed).
    static func board(cityID: Int64, viewer: User?, before: Int64?, limit: Int = pageSize, pinnedAt now: Date?,
                      _ db: any SQLConnection) throws -> [PostRow] {
        let ordered = visibleSQL + " AND p.parent_id IS NULL AND p.city_id = ?4 AND p.id < ?5"
        guard let now else {
            return try db.all(ordered + " ORDER BY p.id DESC LIMIT ?6", arguments(viewer, cityID, before ?? Int64.max, limit), PostRow.init(row:))
        }
        let pinned = before != nil ? [] : try db.all(
            visibleSQL + " AND p.parent_id IS NULL AND p.city_id = ?4 AND p.pinned_until > ?5 ORDER BY p.pinned_until DESC, p.id DESC LIMIT ?6",
            arguments(viewer, cityID, now, pinsPerBoard), PostRow.init(row:))
        return pinned + (try db.all(ordered + " AND (p.pinned_until IS NULL OR p.pinned_until <= ?7) ORDER BY p.id DESC LIMIT ?6",
                                    arguments(viewer, cityID, before ?? Int64.max, limit, now), PostRow.init(row:)))
    }

    /// The newest replies the viewer can see under each post of `cityID` whose id is in
    /// `lowest...highest` (a board page's posts), at most `repliesOnBoard` each, oldest first, and
    /// how many the viewer can see in all: one statement for the whole page. The page's posts are
    /// found first and their replies through `posts_parent` (filtering the city's posts by
    /// `parent_id` walked every post of a busy city).
    static func newestReplies(cityID: Int64, posts lowest: Int64, _ highest: Int64, viewer: User?,
                              _ db: any SQLConnection) throws -> [Int64: (shown: [PostRow], count: Int)] {
        var replies: [Int64: (shown: [PostRow], count: Int)] = [:]
        // Ranked and counted on bare ids; whole rows read for the shown ones only (a window over
        // whole rows copied every reply's columns through SQLite's sorter).
        try db.forEachRow("""
            SELECT \(columnsSQL), ranked.replies FROM (
                SELECT p.id, row_number() OVER (PARTITION BY p.parent_id ORDER BY p.id DESC) AS newest_rank,
                       count(*) OVER (PARTITION BY p.parent_id) AS replies
                FROM posts p WHERE \(visibleWhere) AND p.parent_id IN (
                    SELECT t.id FROM posts t WHERE t.city_id = ?4 AND t.parent_id IS NULL AND t.id BETWEEN ?5 AND ?6)
            ) ranked JOIN posts p ON p.id = ranked.id \(joinsSQL)
            WHERE ranked.newest_rank <= ?7 ORDER BY p.parent_id, p.id
            """, arguments(viewer, cityID, lowest, highest, repliesOnBoard).map { $0.sqlValue }) { row in
            let reply = PostRow(row: row)
            guard let parent = reply.parentID else { return }
            replies[parent, default: ([], row.int(PostRow.columnCount))].shown.append(reply)
        }
        return replies
    }

    /// What `viewer` adds to a board page of `cityID` whose posts and replies have ids in
    /// `lowest...highest` (`ViewerMarks`) at `now`: one statement, walking the reader's own rows only.
    static func viewerMarks(cityID: Int64, viewer: User, ids lowest: Int64, _ highest: Int64, now: Date,
                            _ db: any SQLConnection) throws -> ViewerMarks {
        var marks = ViewerMarks()
        try db.forEachRow("""
            SELECT 0, CASE WHEN EXISTS (SELECT 1 FROM blocks WHERE blocker_id = ?1)
                            OR EXISTS (SELECT 1 FROM hidden_posts WHERE viewer_id = ?1)
                            OR EXISTS (SELECT 1 FROM posts WHERE user_id = ?1 AND city_id = ?2
                                       AND hidden_at IS NOT NULL AND removed_at IS NULL)
                          THEN 1 ELSE 0 END, NULL
            UNION ALL \(ReaderMark.reported.forReader(kind: 1))
            UNION ALL \(ReaderMark.agreed.forReader(kind: 2))
            UNION ALL SELECT 3, m.muted_id, NULL FROM mutes m WHERE m.muter_id = ?1 AND \(Mutes.active("m", at: "?5"))
            """, [viewer.id.sqlValue, cityID.sqlValue, lowest.sqlValue, highest.sqlValue, now.sqlValue]) { row in
            switch row.int(0) {
            case 0: marks.seesOtherwise = row.int64(1) != 0
            case 1: marks.reported[row.int64(1)] = row.date(2)
            case 2: marks.agreed.insert(row.int64(1))
            default: marks.muted.insert(row.int64(1))
            }
        }
        return marks
    }

    /// A post's replies the viewer can see, oldest first, after the reply `after` (the cursor),
    /// one more than a page; and how many the viewer can see in all.
    static func replies(to postID: Int64, viewer: User?, after: Int64?, _ db: any SQLConnection) throws -> (rows: [PostRow], count: Int) {
        var count = 0
        var rows: [PostRow] = []
        try db.forEachRow("""
            SELECT \(columnsSQL), counted.replies FROM (
                SELECT p.id, count(*) OVER () AS replies FROM posts p WHERE \(visibleWhere) AND p.parent_id = ?4
            ) counted JOIN posts p ON p.id = counted.id \(joinsSQL)
            WHERE p.id > ?5 ORDER BY p.id LIMIT ?6
            """, arguments(viewer, postID, after ?? 0, repliesPageSize + 1).map { $0.sqlValue }) { row in
            rows.append(PostRow(row: row))
            count = row.int(PostRow.columnCount)
        }
        if rows.isEmpty, after != nil {
            count = try db.one("SELECT count(*) FROM posts p WHERE \(visibleWhere) AND p.parent_id = ?4", arguments(viewer, postID)) { $0.int(0) } ?? 0
        }
        return (rows, count)
    }

    /// What people said it is like outside in the city, in the `Observation.window` before `now`,
    /// from the posts the viewer can see, counting one observation per person per hour (their
    /// latest in it).
    static func observations(cityID: Int64, viewer: User?, now: Double, _ db: any SQLConnection) throws -> ObservationTally {
        var tally = ObservationTally()
        try db.forEachRow("""
            SELECT sky, feels, CASE WHEN created_at > ?7 THEN 1 ELSE 0 END FROM (
                SELECT p.sky, p.feels, p.created_at,
                       row_number() OVER (PARTITION BY coalesce(p.user_id, -p.id), CAST(p.created_at AS BIGINT) / ?6 ORDER BY p.id DESC) AS latest
                FROM posts p WHERE \(visibleWhere) AND p.city_id = ?4 AND p.parent_id IS NULL AND p.created_at > ?5
                      AND (p.sky IS NOT NULL OR p.feels IS NOT NULL)
            ) ranked WHERE latest = 1
            """, arguments(viewer, cityID, now - Observation.window, Int(Observation.onePerPersonEvery),
                           now - Observation.lastHour).map { $0.sqlValue }) { row in
            let recent = row.int(2) != 0
            if let sky = row.optionalString(0).flatMap(Observation.Sky.init(rawValue:)) { tally.skies.add(sky, recent: recent) }
            if let feels = row.optionalString(1).flatMap(Observation.Feels.init(rawValue:)) { tally.feels.add(feels, recent: recent) }
        }
        return tally
    }

    /// A person's recent posts and replies on every board; on their own profile they also see what was removed.
    static func byAuthor(userID: Int64, viewer: User?, limit: Int = pageSize, _ db: any SQLConnection) throws -> [PostRow] {
        try db.all(visibleSQL + " AND p.user_id = ?4 ORDER BY p.id DESC LIMIT ?5",
                   arguments(viewer, userID, limit, removed: viewer?.id == userID ? .ownOnly : .none), PostRow.init(row:))
    }

    /// A post or reply as the viewer may see it; `removed: .all` on its own page, where a removed
    /// post is shown as the notice.
    static func post(id: Int64, viewer: User?, removed: Removed = .none, _ db: any SQLConnection) throws -> PostRow? {
        try db.one(visibleSQL + " AND p.id = ?4", arguments(viewer, id, removed: removed), PostRow.init(row:))
    }

    /// `?1` the viewer (-1 for a guest), `?2` whether they are an admin, `?3` which removed posts
    /// show, then the query's own values from `?4`.
    static func arguments(_ viewer: User?, _ more: any SQLArgument..., removed: Removed = .none) -> [any SQLArgument] {
        [viewer?.id ?? -1, viewer?.isAdmin == true, removed.rawValue] + more
    }
}

extension PostEvent {
    /// A post's event from a row of `id, city_id, parent_id, user_id` (its kind set by the caller).
    static func read(_ row: any SQLRow) -> PostEvent {
        PostEvent(.posted, id: row.int64(0), city: row.int64(1), parent: row.optionalInt64(2), author: row.optionalInt64(3))
    }
}

/// What the board's writes tell others of, written inside the write's own transaction, so that
/// nobody is told of something that was not saved. The board does not know who is told or how:
/// the application hands it the notifications feature's (`BoardNotices`).
protocol BoardEffects: Sendable {
    /// A post saved, by `author`, saying `body`.
    func posted(_ id: Int64, body: String, author: Int64, now: Double, _ db: any SQLConnection, _ changes: ChangeLog) throws
    /// A reply saved, answering a post by `parentAuthor` (nil: an account since deleted).
    func replied(_ id: Int64, body: String, author: Int64, answering parentAuthor: Int64?, now: Double, _ db: any SQLConnection,
                 _ changes: ChangeLog) throws
    /// `actor` agreed with the post by `author`.
    func agreed(with postID: Int64, author: Int64?, by actor: Int64, now: Double, _ db: any SQLConnection, _ changes: ChangeLog) throws
    /// An agreement with the post taken back.
    func agreementWithdrawn(from postID: Int64, _ db: any SQLConnection) throws
}
