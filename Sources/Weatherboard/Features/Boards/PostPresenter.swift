import Foundation

/// Everything a post's render reads about its reader. The presenter sees the reader only through
/// this value, and a kept board is keyed by it (`BoardRender`): a per-reader flag added here is
/// in the key by construction.
struct Reader: Hashable, Sendable {
    var signedIn: Bool
    /// Whose posts get Edit and Delete: the reader's id when something shown is theirs; nil
    /// otherwise, so that every member with nothing of theirs shown shares one render.
    var owner: Int64?
    /// An admin: posts get Pin and Unpin.
    var moderates = false
    /// Authors shown whom the reader has muted: their posts come collapsed.
    var muted: Set<Int64> = []

    /// Someone with no part in what is shown: a guest, or a member whose forms need no token,
    /// who wrote none of it, muted none of its authors and moderates nothing.
    static func bystander(signedIn: Bool) -> Reader {
        Reader(signedIn: signedIn, owner: nil)
    }

    private init(signedIn: Bool, owner: Int64?) {
        self.signedIn = signedIn
        self.owner = owner
    }

    /// `context`'s reader, owning what is shown when `owns` says something shown is theirs.
    init(_ context: AppContext, owns: Bool, muted: Set<Int64> = []) {
        signedIn = context.user != nil
        owner = owns ? context.user?.id : nil
        moderates = context.user?.isAdmin == true
        self.muted = muted
    }
}

/// Turns posts into template data: author, times, the body as text and links, and the actions
/// the viewer may take (precomputed here; templates stay logic-less).
struct PostPresenter {
    let reader: Reader
    let language: Language
    /// The clock as this render reads it: when the render stops being true is noted there.
    let clock: ClockReading
    let strings: (String, [String: String]) -> String
    /// The report reasons' `<option>`s in the viewer's language, rendered once per page (none for
    /// guests, who cannot report).
    let reasonOptions: HTMLFragment
    let replyPhrases: ReplyPhrases

    /// `returnTo`: where the post's forms send the viewer back, escaped once per page.
    func view(_ post: PostRow, returnTo: HTMLFragment) -> PostView {
        let mine = reader.owner != nil && post.userID == reader.owner
        let view = PostView(
            id: post.id, author: post.username ?? "", hasAuthor: post.username != nil,
            displayName: post.displayName ?? strings("deleted_user", [:]), datetime: DateFormatting.iso8601(post.createdAt),
            time: DateFormatting.localMinute(post.createdAt, in: zone(post), language: language), edited: post.editedAt != nil, parts: Self.parts(of: post.body),
            isHidden: post.hiddenAt != nil, citySlug: post.citySlug,
            cityName: language == .ko ? (post.cityNameKo ?? post.cityNameEn) : post.cityNameEn, returnTo: returnTo)
        view.isAdminAuthor = post.authorIsAdmin
        view.isSiteAuthor = post.authorIsSite
        view.warningID = post.warningID
        view.authorLevel = post.authorLevel
        view.isMine = mine
        view.href = post.href
        view.parentID = post.parentID.map { String($0) }
        view.reactions = post.reactions
        view.reacted = post.reactedByViewer
        view.pinned = post.pinnedUntil.map(clock.isBefore) ?? false
        view.muted = post.userID.map(reader.muted.contains) ?? false
        if reader.moderates && post.parentID == nil && post.removedAt == nil {
            view.canPin = !view.pinned
            view.canUnpin = view.pinned
        }
        if post.observation.sky != nil || post.observation.feels != nil {
            view.observation = ObservationTags(
                sky: post.observation.sky.map { ObservationTag(code: $0.rawValue, icon: $0.icon, word: strings("sky_\($0.rawValue)", [:])) },
                feels: post.observation.feels.map { ObservationTag(code: $0.rawValue, word: strings("feels_\($0.rawValue)", [:])) })
        }
        if let photo = post.photo {
            let alt = photo.alt ?? strings("photo_alt_default", ["name": post.displayName ?? strings("deleted_user", [:]), "time": view.time])
            let blurred = photo.state.blurredForOthers && !mine
            view.photo = PhotoView(
                hash: photo.hash,
                srcset: "\(PhotoVariant.small.path(photo.hash)) \(photo.smallWidth)w, \(PhotoVariant.large.path(photo.hash)) \(photo.width)w",
                jpeg: PhotoVariant.jpeg.path(photo.hash),
                alt: alt, width: photo.width, height: photo.height, blurred: blurred,
                notice: blurred ? strings(photo.state == .reported ? "photo_reported" : "photo_blurred", [:]) : nil,
                waitingMine: mine && photo.state.blurredForOthers)
        }
        if post.removedAt != nil {
            view.removedNotice = strings("removed_notice", ["reason": post.removedReason ?? ""])
            return view
        }
        if let reported = post.reportedByViewerAt {
            view.reportedByMe = true
            view.canWithdraw = clock.isBefore(PostingRules.withdrawEnds(reportedAt: reported))
        }
        view.canReact = reader.signedIn && !mine
        view.canReply = reader.signedIn && post.parentID == nil
        if reader.signedIn, !mine, post.userID != nil, !post.authorIsSite {
            view.canBlock = !post.authorIsAdmin
            view.canReport = post.reportedByViewerAt == nil
            if view.canReport { view.reasonOptions = reasonOptions }
        }
        if mine {
            view.canDelete = true
            let ends = PostingRules.editEnds(postedAt: post.createdAt)
            view.canEdit = clock.isBefore(ends)
            if view.canEdit {
                view.editLeft = strings("edit_until", ["time": LocalCalendar(zone(post)).clockString(ends)])
                view.editEnds = DateFormatting.iso8601(ends)
            }
        }
        return view
    }

    /// Its city's zone, which its times are written in.
    private func zone(_ post: PostRow) -> TimeZone { TimeZone(identifier: post.cityTimeZone) ?? .gmt }

    /// A post with the replies shown under it and how many the viewer can see in all.
    func view(_ post: PostRow, replies: [PostRow], count: Int, returnTo: HTMLFragment) -> PostView {
        let view = view(post, returnTo: returnTo)
        view.replies = replies.map { self.view($0, returnTo: returnTo) }
        // A conversation closed by reports (its author still sees it) takes nothing more until a
        // moderator decides: no reply form, no agreeing (BoardStore refuses them too).
        if post.hiddenAt != nil {
            view.canReply = false
            view.canReact = false
            for reply in view.replies { reply.canReact = false }
        }
        view.replyCount = count
        view.repliesText = replyPhrases.summary(count, shown: replies.count)
        return view
    }

    /// "3 replies" / "All 5 replies" / "댓글 3개", looked up once per page.
    struct ReplyPhrases {
        let none: String
        let one: String
        let many: CountedPhrase
        let all: CountedPhrase

        init(_ string: (String) -> String) {
            none = string("replies_none")
            one = string("replies_one")
            many = CountedPhrase(string("replies_many"))
            all = CountedPhrase(string("replies_all"))
        }

        func summary(_ count: Int, shown: Int) -> String {
            switch count {
            case 0: none
            case 1: one
            case _ where shown < count: all(count)
            default: many(count)
            }
        }
    }

    static func relativeTime(_ date: Date, now: Date, _ relativeTimes: RelativeTimes) -> String {
        let seconds = Swift.max(0, Int(clampedSeconds: now.timeIntervalSince(date)))
        switch seconds {
        case ..<60: return relativeTimes.now
        case ..<3600: return relativeTimes.minutes(seconds / 60)
        case ..<86400: return relativeTimes.hours(seconds / 3600)
        default: return relativeTimes.days(seconds / 86400)
        }
    }

    /// The phrases of `relativeTime` in a language, looked up once.
    struct RelativeTimes {
        let now: String
        let minutes: CountedPhrase
        let hours: CountedPhrase
        let days: CountedPhrase

        init(_ string: (String) -> String) {
            now = string("time_now")
            minutes = CountedPhrase(string("time_minutes"))
            hours = CountedPhrase(string("time_hours"))
            days = CountedPhrase(string("time_days"))
        }
    }

    /// The body split into plain text, `http(s)` links and `@username` mentions (linked to the
    /// person's profile), so templates can escape the text and make only the links clickable. A
    /// scan over the UTF-8 bytes: a link runs from `http://` or `https://` to the next space, `<`,
    /// `>`, `"` or `'`, less trailing sentence punctuation.
    static func parts(of body: String) -> [PostView.Part] {
        var contiguous = body // `withUTF8` needs a mutable string (it may make the storage contiguous)
        return contiguous.withUTF8 { bytes in
            var parts: [PostView.Part] = []
            var textStart = 0
            var index = 0
            while index < bytes.count {
                if let length = Mentions.length(at: index, in: bytes) {
                    if index > textStart { parts.append(PostView.Part(text: String(decoding: bytes[textStart..<index], as: UTF8.self))) }
                    let mention = String(decoding: bytes[index ..< index + length], as: UTF8.self)
                    parts.append(PostView.Part(text: mention, href: "/users/" + mention.dropFirst()))
                    index += length
                    textStart = index
                    continue
                }
                guard bytes[index] == UInt8(ascii: "h"), let schemeLength = linkScheme(in: bytes, at: index) else { index += 1; continue }
                var end = index + schemeLength
                while end < bytes.count, !endsLink(bytes[end]) { end += 1 }
                while end > index + schemeLength, isTrailingPunctuation(bytes[end - 1]) { end -= 1 }
                guard end > index + schemeLength else { index += schemeLength; continue }
                if index > textStart { parts.append(PostView.Part(text: String(decoding: bytes[textStart..<index], as: UTF8.self))) }
                let link = String(decoding: bytes[index..<end], as: UTF8.self)
                parts.append(PostView.Part(text: link, href: link))
                index = end
                textStart = end
            }
            if textStart == 0 { return [PostView.Part(text: body)] } // no link: the body as it is
            if textStart < bytes.count { parts.append(PostView.Part(text: String(decoding: bytes[textStart...], as: UTF8.self))) }
            return parts
        }
    }

    /// The length of `https://` or `http://` at `index`, if one starts there and something follows.
    private static func linkScheme(in bytes: UnsafeBufferPointer<UInt8>, at index: Int) -> Int? {
        for scheme: StaticString in ["https://", "http://"]
        where bytes.count - index > scheme.utf8CodeUnitCount
            && memcmp(bytes.baseAddress! + index, scheme.utf8Start, scheme.utf8CodeUnitCount) == 0 {
            return scheme.utf8CodeUnitCount
        }
        return nil
    }

    private static func endsLink(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x20, 0x09, 0x0A, 0x0D, 0x0B, 0x0C, 0x3C, 0x3E, 0x22, 0x27: true
        default: false
        }
    }

    private static func isTrailingPunctuation(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "."), UInt8(ascii: ","), UInt8(ascii: ";"), UInt8(ascii: ":"), UInt8(ascii: "!"), UInt8(ascii: "?"), UInt8(ascii: ")"): true
        default: false
        }
    }
}
