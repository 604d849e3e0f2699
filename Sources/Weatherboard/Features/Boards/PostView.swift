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
    /// When it was written, in its city's time (`DateFormatting.localMinute`).
    let time: String
    let edited: Bool
    let parts: [Part]
    let isHidden: Bool
    let citySlug: String
    let cityName: String
    let returnTo: HTMLFragment
    var removedNotice: String?
    var reportedByMe = false
    var canWithdraw = false
    var canBlock = false
    var canReport = false
    /// Block and Report sit in one menu per post (issue 26 #5): one tap more, none by mistake.
    var hasMenu: Bool { canBlock || canReport }
    var reasonOptions = HTMLFragment([])
    var canDelete = false
    var canEdit = false
    /// "until 14:20" beside Edit (the same at every minute); a page's script counts it down
    /// from `editEnds` ("12 min left").
    var editLeft: String?
    var editEnds = ""
    /// The author is an admin: the post says so beside the name (a look-alike cannot).
    var isAdminAuthor = false
    /// Written by the site (a warning's thread): labelled so; nobody blocks, mutes or reports it.
    var isSiteAuthor = false
    /// The warning whose thread it is (`data-warning-id`).
    var warningID: String?
    /// The reader wrote it: "You" beside the name, so that one's own posts stand out in a long board.
    var isMine = false
    /// Pinned by a moderator at the top of its board (`data-pinned`); what an admin may do about it.
    var pinned = false
    var canPin = false
    var canUnpin = false
    /// The author's standing (`data-level` on the author), and whether they are new here.
    var authorLevel = 1
    var isNewMember: Bool { authorLevel == 0 && !isSiteAuthor }
    /// By someone the reader muted: collapsed, shown on request (`data-muted`).
    var muted = false
    /// Its own address (`/posts/{id}`, or a reply's place on its post's page).
    var href = ""
    /// For a reply, the post it answers (`data-parent-id`); nil for a post.
    var parentID: String?
    /// How many people agreed, whether the viewer did, and whether they may (members, not on their own).
    var reactions = 0
    var reacted = false
    var canReact = false
    /// For a post on a board or its own page: the replies the viewer can see (`data-replies`), the
    /// newest shown under it on a board, and the link to them all (nil where they were not counted:
    /// a profile's list).
    var replyCount = 0
    var replies: [PostView] = []
    var repliesText: String?
    /// The small reply form under a post on a board.
    var canReply = false
    /// What its author saw outside, if they said.
    var observation: ObservationTags?
    /// Its photo as this reader sees it.
    var photo: PhotoView?

    init(id: Int64, author: String, hasAuthor: Bool, displayName: String, datetime: String, time: String, edited: Bool,
         parts: [Part], isHidden: Bool, citySlug: String, cityName: String, returnTo: HTMLFragment) {
        self.id = id
        self.author = author
        self.hasAuthor = hasAuthor
        self.displayName = displayName
        self.datetime = datetime
        self.time = time
        self.edited = edited
        self.parts = parts
        self.isHidden = isHidden
        self.citySlug = citySlug
        self.cityName = cityName
        self.returnTo = returnTo
    }
}

/// A post's photo in `post.mustache`: the WebP in two widths (`srcset`; every browser of the last
/// five years reads WebP) and the JPEG as `src` for those that read no `srcset`, blurred with
/// "Show photo" while it waits for a moderator (never for its author).
struct PhotoView {
    var hash: String
    var srcset: String
    var jpeg: String
    var alt: String
    var width: Int
    var height: Int
    var blurred: Bool
    /// Why it is blurred, said above the button.
    var notice: String?
    /// Its author sees it as it is, told that others do not yet.
    var waitingMine: Bool
}

/// The report reasons as `report_reasons.mustache` lists them.
struct ReportReasons {
    var options: [SelectOption]
}

/// The closed list of report reasons.
enum ReportReason: String, CaseIterable {
    case spam, harassment, off_topic, personal_info, illegal, other
}

/// An observation as a post and a city page show it: a code for tools, an icon and a word.
struct ObservationTag {
    var code: String
    var icon = ""
    var word: String
}

/// The sky and the feel a post's author reported (at least one of them).
struct ObservationTags {
    var sky: ObservationTag?
    var feels: ObservationTag?
}

/// One choice of the post form's optional observation.
struct ObservationChoice {
    var value: String
    var icon = ""
    var label: String
    var checked: Bool
}
