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

    func view(_ post: PostRow, returnTo: String) -> [String: Any] {
        let mine = viewer?.id != nil && post.userID == viewer?.id
        var view: [String: Any] = [
            "id": post.id, "author": post.username ?? "", "hasAuthor": post.username != nil,
            "displayName": post.displayName ?? strings("deleted_user", [:]),
            "datetime": DateFormatting.iso8601(post.createdAt),
            "relativeTime": relativeTime(post.createdAt), "edited": post.editedAt != nil,
            "parts": Self.parts(of: post.body), "isHidden": post.hiddenAt != nil, "csrfToken": csrfToken,
            "citySlug": post.citySlug, "cityName": language == .ko ? (post.cityNameKo ?? post.cityNameEn) : post.cityNameEn,
            "returnTo": returnTo,
        ]
        if post.removedAt != nil {
            view["removedNotice"] = strings("removed_notice", ["reason": post.removedReason ?? ""])
            return view
        }
        if let reported = post.reportedByViewerAt {
            view["reportedByMe"] = true
            view["canWithdraw"] = now.timeIntervalSince(reported) < Self.withdrawWindow
        }
        if viewer != nil, !mine, post.userID != nil {
            view["canBlock"] = !post.authorIsAdmin
            view["canReport"] = post.reportedByViewerAt == nil
            view["reasons"] = ReportReason.allCases.map { ["value": $0.rawValue, "label": strings("reason_\($0.rawValue)", [:])] }
        }
        if mine {
            view["canDelete"] = true
            view["canEdit"] = now.timeIntervalSince(post.createdAt) < Self.editWindow
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
    /// make only the links clickable.
    static func parts(of body: String) -> [[String: Any]] {
        var parts: [[String: Any]] = []
        var rest = body[...]
        while let match = rest.firstMatch(of: linkPattern) {
            if match.range.lowerBound > rest.startIndex { parts.append(["text": String(rest[..<match.range.lowerBound])]) }
            var link = String(rest[match.range])
            // Trailing punctuation belongs to the sentence, not the link.
            while let last = link.last, ".,;:!?)".contains(last) { link.removeLast() }
            parts.append(["text": link, "href": link])
            rest = rest[rest.index(match.range.lowerBound, offsetBy: link.count)...]
        }
        if !rest.isEmpty { parts.append(["text": String(rest)]) }
        return parts
    }

    nonisolated(unsafe) private static let linkPattern = #/https?://[^\s<>"']+/#
}

/// The closed list of report reasons.
enum ReportReason: String, CaseIterable {
    case spam, harassment, off_topic, personal_info, illegal, other
}
