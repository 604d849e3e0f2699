import Foundation

/// The report queue: reported posts grouped, most reporters first.
struct AdminQueuePage {
    /// A photo waiting for a moderator, with Approve and Remove.
    struct WaitingPhoto {
        var postID: Int64
        var hash: String
        var src: String
        var alt: String
        var why: String
        var author: String?
        var citySlug: String
        var body: String
    }
    var photos: [WaitingPhoto] = []
    var hasPhotos: Bool { !photos.isEmpty }

    struct ReasonCount {
        var reason: String
        var count: Int
    }

    struct Detail {
        var reporter: String
        var reason: String
        var detail: String
        var at: Moment
    }

    struct Group {
        var id: Int64
        var body: String
        var isHidden: Bool
        var author: String?
        var authorName: String
        var citySlug: String
        var cityName: String
        var reporters: Int
        var firstReport: Moment
        var lastReport: Moment
        var reasons: [ReasonCount]
        var details: [Detail]
        var problem: String?
        var typedReason = ""
        /// For a reply: the post it answers.
        var parent: Parent?
        /// The author's record in a line ("24 posts in 2 min · 23 reported · banned now").
        var history: String?
    }

    struct Parent {
        var id: Int64
        var body: String
    }

    struct Signal {
        var username: String
        var displayName: String
        var count: Int
    }

    var layout: LayoutView
    var problem: String?
    var groups: [Group]
    var hasGroups: Bool { !groups.isEmpty }
    var newerHref: String?
    var olderHref: String?
    var signals: [Signal]
    var hasSignals: Bool { !signals.isEmpty }
    var durations: [SelectOption]
    /// Removal reasons offered as presets (editable).
    var reasonPresets: [String] = []
    /// Carried by the GET forms that lead to a confirmation (`AdminArea.formProof`).
    var formProof = ""
}

/// The moderation log.
struct AdminLogPage {
    struct Entry {
        var id: Int64
        /// A removal or a ban: it can be taken back from here.
        var undoable: Bool
        var admin: String
        var action: String
        var actionText: String
        var postID: Int64?
        var username: String?
        var citySlug: String?
        var cityName: String?
        /// The start of the post's text, while it exists.
        var excerpt: String?
        var reason: String
        var at: Moment
    }

    var layout: LayoutView
    var adminFilter: String
    var actions: [SelectOption]
    var entries: [Entry]
    var hasEntries: Bool { !entries.isEmpty }
    var newerHref: String?
    var olderHref: String?
}

/// An admin's look at one person.
struct AdminUserPage {
    struct BanEntry {
        var reason: String
        var from: String
        var until: String
        var lifted: String?
    }

    struct Report {
        var postID: Int64
        var other: String
        var reason: String
        var outcome: String
    }

    var layout: LayoutView
    var username: String
    var displayName: String
    var problem: String?
    var blocksReceived: Int
    var isBanned: Bool
    /// The ban in force, said as the person sees it ("until …: reason").
    var banStatus: String?
    var canBan: Bool
    var durations: [SelectOption]
    /// Removal reasons offered as presets (editable).
    var reasonPresets: [String] = []
    /// Carried by the GET forms that lead to a confirmation (`AdminArea.formProof`).
    var formProof = ""
    var bans: [BanEntry]
    /// Their posts as the store reads them (nothing in them needs wording).
    var posts: [ModerationStore.Person.Post]
    var made: [Report]
    var received: [Report]
    /// Their standing (`data-level`), how it came ("earned" or set by a moderator), and the
    /// choices of the form that sets it.
    var level = 0
    var levelText = ""
    var levelChoices: [SelectOption] = []
    var canSetLevel: Bool { !levelChoices.isEmpty }
}
