import Foundation

/// A ban in force: the person may read but not post, edit, report or block. The request's
/// context holds it beside the person (sign-in and every session look-up read it; moderation
/// only writes bans), so it is the application's type, not one feature's.
public struct Ban: Sendable, Equatable {
    public let reason: String
    /// nil for a permanent ban.
    public let until: Date?

}

/// Thrown when a banned person tries to change anything; shown as a 403 that says why.
struct BannedError: Error {
    let ban: Ban
}
