import Foundation

/// What every page shows around its content: title, language switch, who is signed in.
struct LayoutView {
    struct LanguageOption {
        var code: String
        var label: String
        var href: String
        var current: Bool
    }

    struct CurrentUser {
        var username: String
        var displayName: String
        var isAdmin: Bool
        /// Unread notices (`data-unread`).
        var unread: Int
        var hasUnread: Bool { unread > 0 }
        /// For an admin, posts whose reports wait (`data-reports-waiting`).
        var reportsWaiting = 0
        /// No time zone was ever set for them: app.js sends the browser's (`data-time-zone-unset-member`).
        var detectsTimeZone = false
    }

    var lang: String
    var pageTitle: String
    var searchQuery = ""
    var currentUser: CurrentUser?
    var signInHref = ""
    var signUpHref = ""
    var languages: [LanguageOption]
    /// A one-time confirmation of the last action, and its Undo (a form) where there is one.
    var flash: String?
    /// The address Undo posts to (unblock, unmute).
    var undoAction: String?
    /// The page's own address: where Undo comes back to (the page the action was taken on).
    var here = "/"
    /// The footer credits the weather sources this site can show, and no other.
    var creditsOpenMeteo = false
    var creditsKMA = false
    var creditsDemo = false
    /// Where what every reader of the page in its language sees ends (`HTML.endShared`).
    var endOfShared = SharedEnd()
}

/// Written in a template, ends a stretch many pages share; shows nothing.
struct SharedEnd: HTMLText {
    func write(to html: inout HTML) { html.endShared() }
}
