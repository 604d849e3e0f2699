import Foundation
import HTTPServer

/// A one-time confirmation after an action ("You blocked Ivan." with Undo): set in a short-lived
/// cookie on the redirect, shown by the next page, then cleared. The cookie holds only which
/// message and, for Undo, a username; the text comes from the catalog in the page's language.
struct Flash: Equatable {
    enum Kind: String, CaseIterable {
        case blocked, unblocked, reported, reportWithdrawn = "report_withdrawn", postDeleted = "post_deleted"
        case postEdited = "post_edited", postAlreadySaved = "post_already_saved", bookmarked, bookmarkLimit = "bookmark_limit", unbookmarked,
             bookmarksLeftOut = "bookmarks_left_out", settingsSaved = "settings_saved"
        case banned, unbanned, postRemoved = "post_removed", postRestored = "post_restored", purged, welcome, recovered, recoveredForPasskey = "recovered_for_passkey"
        case emailSent = "email_sent", emailRemoved = "email_removed", emailConfirmed = "email_confirmed", passwordReset = "password_reset"
        case passkeyAdded = "passkey_added", passkeyRemoved = "passkey_removed", passkeyRenamed = "passkey_renamed", oidcConnected = "oidc_connected", oidcDisconnected = "oidc_disconnected", pushRemoved = "push_removed"
        case rainWindowAdded = "rain_window_added", rainWindowRemoved = "rain_window_removed"
        case banUndone = "ban_undone", nothingToUndo = "nothing_to_undo"
        case muted, unmuted, levelSet = "level_set"
        case photoApproved = "photo_approved", photoRemoved = "photo_removed", posted
    }

    let kind: Kind
    /// The person the action was about (for the message and Undo).
    var username: String?

    static let cookieName = "flash"

    /// `kind` or `kind:username`; anything else is no flash.
    init?(cookie value: String) {
        let parts = value.split(separator: ":", maxSplits: 1).map(String.init)
        guard let kind = parts.first.flatMap(Kind.init(rawValue:)) else { return nil }
        self.kind = kind
        if parts.count == 2 {
            guard User.usernameFormProblems(parts[1]).isEmpty else { return nil }
            username = parts[1]
        }
    }

    init(_ kind: Kind, username: String? = nil) {
        self.kind = kind
        self.username = username
    }

    var cookieValue: String { username.map { "\(kind.rawValue):\($0)" } ?? kind.rawValue }

    /// The catalog key of the message.
    var key: String { "flash_" + kind.rawValue }

    /// Reads the flash a request carries (`context.flash`), sets the one an action asked for
    /// (`context.nextFlash`, for the page its redirect leads to), and clears a shown one.
    static func middleware(secure: Bool) -> Router<AppContext>.Middleware {
        { request, context, next in
            context.flash = request.cookie(cookieName).flatMap(Flash.init(cookie:))
            var response = try next(request, context)
            if let next = context.nextFlash {
                response.setCookie(SetCookie(name: cookieName, value: next.cookieValue, maxAge: 60, secure: secure))
            } else if context.flash != nil && response.status == .ok {
                response.setCookie(SetCookie.expired(cookieName))
            }
            return response
        }
    }
}
