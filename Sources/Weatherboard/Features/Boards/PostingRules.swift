import Foundation
import HTTPServer

/// The board's rules in one place: what a post may say, how often a person may post, and how
/// long an author may edit a post and a reporter withdraw a report.
struct PostingRules: Sendable {
    var secondsBetweenPosts: Int
    var postsPerDay: Int
    /// Whether a city's board is in event mode (a severe or extreme warning in force there):
    /// new members then wait `eventPaceFactor` times longer between posts.
    var inEventMode: @Sendable (Int64) -> Bool = { _ in false }
    static let eventPaceFactor = 4
    /// A reply waits this many times less than a post after the member's last post or reply: a
    /// conversation goes back and forth (a new member replying under their own post waited 25 s).
    static let replyPaceDivisor = 5
    /// What a member and the site may keep in photos.
    var photoLimits = PhotoLimits()

    /// An author may edit a post for this long after posting it.
    static let editWindow: TimeInterval = 15 * 60
    /// A reporter may withdraw a report for this long after making it.
    static let withdrawWindow: TimeInterval = 10 * 60
    /// The same text again within this long is a duplicate.
    static let duplicateWindow: TimeInterval = 5 * 60
    /// Replies a post takes at most: its page is read a page of replies at a time, but a
    /// conversation that never ends is a channel of its own (and its count is read per reply).
    static let repliesPerPost = 1_000
    /// Why a post is refused: a catalog key with its arguments, and the status to answer with.
    struct Refusal: Error {
        let key: String
        var arguments: [String: String] = [:]
        var status: HTTPStatus = .unprocessableContent
        /// The same text is already posted, as this post: a retry (a double click, a client that
        /// gave up waiting while the first was saved) is shown the post, not told it failed.
        var duplicateOf: Int64?
    }

    static func canEdit(postedAt: Date, now: Date) -> Bool {
        now < editEnds(postedAt: postedAt)
    }

    static func editEnds(postedAt: Date) -> Date { postedAt.addingTimeInterval(editWindow) }

    /// Whole minutes of editing left, rounded up ("1 min left" until the very end).
    static func editMinutesLeft(postedAt: Date, now: Date) -> Int {
        // Clamped before the conversion: a stored time far off (or not a number) cannot trap.
        let seconds = min(editWindow, max(0, editWindow - now.timeIntervalSince(postedAt)))
        return max(1, Int((seconds / 60).rounded(.up)))
    }

    static func canWithdraw(reportedAt: Date, now: Date) -> Bool {
        now < withdrawEnds(reportedAt: reportedAt)
    }

    static func withdrawEnds(reportedAt: Date) -> Date { reportedAt.addingTimeInterval(withdrawWindow) }

    /// The body as stored (see `TextPolicy.normalise`), or what is wrong with it.
    static func normalise(_ typed: TextPolicy.Typed) -> Result<String, Refusal> {
        switch TextPolicy.post.normalise(typed) {
        case .success(let body): return .success(body)
        case .failure(.empty): return .failure(Refusal(key: "error_post_empty"))
        case .failure(let problem): return .failure(Refusal(key: problem.key(lengthKey: "error_post_long")))
        }
    }

    /// A web link among a post's parts (a mention links to a profile, and is no link here).
    static func isLink(_ href: String) -> Bool { href.hasPrefix("http://") || href.hasPrefix("https://") }

    /// The form of a body the duplicate rule compares: case and runs of white space do not make
    /// two posts different. Kept with each post as a 64-bit hash (FNV-1a: stable across
    /// processes), which the store compares with its author's recent posts'.
    static func duplicateKey(_ body: String) -> Int64 {
        var hash: UInt64 = 14_695_981_039_346_656_037
        for byte in body.lowercased().split(whereSeparator: { $0.isWhitespace }).joined(separator: " ").utf8 {
            hash = (hash ^ UInt64(byte)) &* 1_099_511_628_211
        }
        return Int64(bitPattern: hash)
    }

    /// Why a post may not be made at `now` by someone whose last post was at `lastPostAt`, who
    /// posted `postsToday` times in the last day and whose post `duplicateOf` within the duplicate
    /// window says the same (the same text again, first: it is already there; then too soon, too
    /// many), or nil. The store reads those in the transaction that inserts the post, so that two
    /// posts sent at once cannot both pass.
    /// A new member (`Standing`) posts no links and waits longer between posts, longer still on a
    /// board in event mode.
    func refusal(of body: String, now: TimeInterval, lastPostAt: Double?, postsToday: Int,
                 duplicateOf: Int64?, level: Standing.Level = Standing.Level(value: 1), eventMode: Bool = false, isReply: Bool = false) -> Refusal? {
        if let same = duplicateOf {
            return Refusal(key: "error_post_duplicate", duplicateOf: same)
        }
        if !level.mayPostLinks && PostPresenter.parts(of: body).contains(where: { $0.href.map(Self.isLink) ?? false }) {
            return Refusal(key: "error_post_link_new_member")
        }
        let pause = Double(secondsBetweenPosts * level.paceFactor * (eventMode && level.value == 0 ? Self.eventPaceFactor : 1))
            / Double(isReply ? Self.replyPaceDivisor : 1)
        if let last = lastPostAt, now - last < pause {
            let wait = max(1, Int(clampedSeconds: (pause - (now - last)).rounded(.up)))
            return Refusal(key: "error_post_too_fast", arguments: ["n": String(wait)], status: .tooManyRequests)
        }
        if postsToday >= postsPerDay { return Refusal(key: "error_post_daily", arguments: ["n": String(postsPerDay)], status: .tooManyRequests) }
        return nil
    }
}

extension PhotoRefusal {
    /// The refusal as the post form says it.
    var posting: PostingRules.Refusal { PostingRules.Refusal(key: key, status: status) }
}
