import Foundation

/// Notices (replies, mentions, agreements, rain, warnings) and how each member wants them.
enum NotificationsFeature {
    static func install(_ site: Site, board: BoardView, pushEnabled: Bool, mailEnabled: Bool) {
        NotificationsController(pages: site.pages, store: NotificationStore(database: site.database), board: board, clock: site.clock)
            .addRoutes(to: site.router)
        NotificationSettingsController(pages: site.pages, database: site.database, pushEnabled: pushEnabled, mailEnabled: mailEnabled,
                                       clock: site.clock).addRoutes(to: site.router)
        site.keep(Notices.keeping)
    }
}
