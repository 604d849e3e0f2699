import Foundation

/// Turns posts into template data: author, times, the body as text and links, and the actions
/// the viewer may take (precomputed here; templates stay logic-less).
struct PostPresenter {
    let viewer: User?
    let csrfToken: String
    let language: Language
    let now: Date
    let strings: (String, [String: String]) -> String
    static let editWindow: TimeInterval = 15 * 60
    static let withdrawWindow: TimeInterval = 10 * 60

    /// The report reasons in the viewer's language, made once per page rather than per post.
    var reasons: [SelectOption] {
        ReportReason.allCases.map { SelectOption(value: $0.rawValue, label: strings("reason_\($0.rawValue)", [:])) }
    }

    func view(_ post: PostRow, returnTo: String, reasons: [SelectOption]) -> PostView {
        let mine = viewer?.id != nil && post.userID == viewer?.id
        var view = PostView(
            id: post.id, author: post.username ?? "", hasAuthor: post.username != nil,
            displayName: post.displayName ?? strings("deleted_user", [:]), datetime: DateFormatting.iso8601(post.createdAt),
            relativeTime: relativeTime(post.createdAt), edited: post.editedAt != nil, parts: Self.parts(of: post.body),
            isHidden: post.hiddenAt != nil, csrfToken: csrfToken, citySlug: post.citySlug,
            cityName: language == .ko ? (post.cityNameKo ?? post.cityNameEn) : post.cityNameEn, returnTo: returnTo)
        if post.removedAt != nil {
            view.removedNotice = strings("removed_notice", ["reason": post.removedReason ?? ""])
            return view
        }
        if let reported = post.reportedByViewerAt {
            view.reportedByMe = true
            view.canWithdraw = now.timeIntervalSince(reported) < Self.withdrawWindow
        }
        if viewer != nil, !mine, post.userID != nil {
            view.canBlock = !post.authorIsAdmin
            view.canReport = post.reportedByViewerAt == nil
            if view.canReport { view.reasons = reasons }
        }
        if mine {
            view.canDelete = true
            view.canEdit = now.timeIntervalSince(post.createdAt) < Self.editWindow
        }
        return view
    }

    /// "3 min ago" / "3분 전".
    func relativeTime(_ date: Date) -> String {
        let seconds = max(0, Int(now.timeIntervalSince(date)))
        switch seconds {
        case ..<60: return strings("time_now", [:])
        case ..<3600: return strings("time_minutes", ["n": String(seconds / 60)])
        case ..<86400: return strings("time_hours", ["n": String(seconds / 3600)])
        default: return strings("time_days", ["n": String(seconds / 86400)])
        }
    }

    /// The body split into plain text and `http(s)` links, so templates can escape the text and
    /// make only the links clickable. A scan over the UTF-8 bytes: a link runs from `http://` or
    /// `https://` to the next space, `<`, `>`, `"` or `'`, less trailing sentence punctuation.
    static func parts(of body: String) -> [PostView.Part] {
        let bytes = Array(body.utf8)
        var parts: [PostView.Part] = []
        var textStart = 0
        var index = 0
        func startsLink(at i: Int) -> Int? {
            for scheme in linkSchemes where bytes.count - i > scheme.count && bytes[i..<(i + scheme.count)].elementsEqual(scheme) {
                return scheme.count
            }
            return nil
        }
        while index < bytes.count {
            guard bytes[index] == 0x68 /* h */, let schemeLength = startsLink(at: index) else { index += 1; continue }
            var end = index + schemeLength
            while end < bytes.count, !linkStoppers.contains(bytes[end]) { end += 1 }
            while end > index + schemeLength, trailingPunctuation.contains(bytes[end - 1]) { end -= 1 }
            guard end > index + schemeLength else { index += schemeLength; continue }
            if index > textStart { parts.append(PostView.Part(text: String(decoding: bytes[textStart..<index], as: UTF8.self))) }
            let link = String(decoding: bytes[index..<end], as: UTF8.self)
            parts.append(PostView.Part(text: link, href: link))
            index = end
            textStart = end
        }
        if textStart < bytes.count { parts.append(PostView.Part(text: String(decoding: bytes[textStart...], as: UTF8.self))) }
        return parts
    }

    private static let linkSchemes: [[UInt8]] = [Array("https://".utf8), Array("http://".utf8)]
    /// ASCII white space and the characters that end a link in running text.
    private static let linkStoppers: Set<UInt8> = [0x20, 0x09, 0x0A, 0x0D, 0x0B, 0x0C, 0x3C, 0x3E, 0x22, 0x27]
    private static let trailingPunctuation: Set<UInt8> = Set(".,;:!?)".utf8)
}

/// A post as `post.mustache` shows it, with the actions the viewer may take.
struct PostView {
    /// A run of the body: plain text, or a link.
    struct Part {
        var text: String
        var href: String?
    }

    var id: Int64
    var author: String
    var hasAuthor: Bool
    var displayName: String
    var datetime: String
    var relativeTime: String
    var edited: Bool
    var parts: [Part]
    var isHidden: Bool
    var csrfToken: String
    var citySlug: String
    var cityName: String
    var returnTo: String
    var removedNotice: String?
    var reportedByMe = false
    var canWithdraw = false
    var canBlock = false
    var canReport = false
    var reasons: [SelectOption] = []
    var canDelete = false
    var canEdit = false
}

/// The closed list of report reasons.
enum ReportReason: String, CaseIterable {
    case spam, harassment, off_topic, personal_info, illegal, other
}
