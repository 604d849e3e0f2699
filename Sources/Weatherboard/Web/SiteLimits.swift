import Foundation

/// Every abuse limit in one place; each has a flag and an environment variable.
public struct SiteLimits: Sendable {
    /// Sign-in attempts per account and per client address, per minute.
    public var signInsPerMinute = 6
    /// Failed sign-ins across the site, per minute, that put on the site-wide brake
    /// (`SiteWideBrake`); then password checks from browsers an account does not know are
    /// admitted `signInsPerSecondUnderBrake` a second for each priority.
    public var failedSignInsForBrake = 30
    public var signInsPerSecondUnderBrake = 2
    /// Searches in posts per client address, per minute (each node counts its own).
    public var searchesPerMinute = 30
    /// Sign-ups per client address, per hour.
    public var signUpsPerHour = 10
    /// Seconds between two posts by one person (replies are posts: they count).
    public var secondsBetweenPosts = 10
    /// Posts and replies per person per day.
    public var postsPerDay = 50
    /// Reports per person per day.
    public var reportsPerDay = 20
    /// Members' reports that hide a post pending review (weighed by `Standing`).
    public var reportThreshold = 3
    /// Display-name changes per person per hour (each re-renders the boards with their posts).
    public var profileChangesPerHour = 10
    /// "Agree" toggles per person per hour (each re-renders the board's kept page).
    public var reactionsPerHour = 120
    /// Photos a member may post a day, and what they and the site may keep (bytes as stored).
    var photos = PhotoLimits()
    public var photoMegabytesPerMember: Int {
        get { photos.bytesPerMember >> 20 }
        set { photos.bytesPerMember = newValue << 20 }
    }
    public var photoBudgetMegabytes: Int {
        get { photos.siteBudget >> 20 }
        set { photos.siteBudget = newValue << 20 }
    }
    public init() {}
}

/// What a member and the site may keep in photos (`--photos-per-day`, `--photo-bytes-per-member`,
/// `--photo-budget`), counted in the bytes written, not uploaded.
struct PhotoLimits: Sendable {
    var perDay = 10
    var bytesPerMember = 200 << 20
    var siteBudget = 20 << 30
}
