import Foundation

/// A post as `post.mustache` shows it, with the actions the viewer may take.
///
/// A class, unlike the other views: a template section over a flag (`{{#canEdit}}`) hands its
/// scope on by value, and copying a dozen strings five times per post cost more than rendering
/// the post's bytes.
final class PostView {
    /// A run of the body: plain text, or a link.
    struct Part {
        var text: String
        var href: String?
    }

    let id: Int64
    let author: String
    let hasAuthor: Bool
    let displayName: String
    let datetime: String
    let relativeTime: String
    let edited: Bool
    let parts: [Part]
    let isHidden: Bool
    let csrfToken: HTMLFragment
    let citySlug: String
    let cityName: String
    let returnTo: HTMLFragment
    var removedNotice: String?
    var reportedByMe = false
    var canWithdraw = false
    var canBlock = false
    var canReport = false
    var reasonOptions = HTMLFragment([])
    var canDelete = false
    var canEdit = false
    /// The author is an admin: the post says so beside the name (a look-alike cannot).
    var isAdminAuthor = false

    init(id: Int64, author: String, hasAuthor: Bool, displayName: String, datetime: String, relativeTime: String, edited: Bool,
         parts: [Part], isHidden: Bool, csrfToken: HTMLFragment, citySlug: String, cityName: String, returnTo: HTMLFragment) {
        self.id = id
        self.author = author
        self.hasAuthor = hasAuthor
        self.displayName = displayName
        self.datetime = datetime
        self.relativeTime = relativeTime
        self.edited = edited
        self.parts = parts
        self.isHidden = isHidden
        self.csrfToken = csrfToken
        self.citySlug = citySlug
        self.cityName = cityName
        self.returnTo = returnTo
    }
}

/// The report reasons as `report_reasons.mustache` lists them.
struct ReportReasons {
    var options: [SelectOption]
}

/// The closed list of report reasons.
enum ReportReason: String, CaseIterable {
    case spam, harassment, off_topic, personal_info, illegal, other
}
