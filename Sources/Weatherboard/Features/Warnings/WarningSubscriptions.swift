import Foundation
import HTTPServer

/// `POST /city/{slug}/warnings` and `…/warnings/delete`: a member's subscription to a city's
/// official warnings without bookmarking it (`WarningAlerts` tells followers of either kind).
struct WarningSubscriptions {
    let database: AppDatabase
    let cities: CityIndex
    let clock: @Sendable () -> Date

    func addRoutes(to router: Router<AppContext>) {
        router.post("/city/{slug}/warnings", subscribe)
        router.post("/city/{slug}/warnings/delete", unsubscribe)
    }

    func subscribe(_ request: Request, _ context: AppContext) throws -> Response {
        let user = try context.requireUser()
        let city = try cities.city(named: request)
        let now = clock().timeIntervalSince1970
        try database.write(.subject(.member(user.id))) {  // the member's own subscription
            try $0.execute("INSERT INTO warning_subscriptions (user_id, city_id, created_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
                           user.id, city.id, now)
        }
        return .redirect(to: "/city/\(city.slug)#warning-follow")
    }

    func unsubscribe(_ request: Request, _ context: AppContext) throws -> Response {
        let user = try context.requireUser()
        let city = try cities.city(named: request)
        try database.write(.subject(.member(user.id))) {  // the member's own subscription
            try $0.execute("DELETE FROM warning_subscriptions WHERE user_id = ? AND city_id = ?", user.id, city.id)
        }
        return .redirect(to: "/city/\(city.slug)#warning-follow")
    }

    /// How a reader follows a city's warnings, read inside the page's own read.
    static func following(cityID: Int64, userID: Int64?, bookmarked: Bool, _ db: any SQLConnection) throws -> WarningFollow.State {
        guard let userID else { return .guest }
        if try db.exists("SELECT 1 FROM warning_subscriptions WHERE user_id = ? AND city_id = ?", userID, cityID) { return .subscribed }
        return bookmarked ? .bookmark : .none
    }

}

/// A city page's line about its warnings reaching the reader (`[data-warning-subscription]`,
/// with the state: `guest`, `bookmark`, `subscribed` or `none`).
struct WarningFollow {
    enum State: String { case guest, bookmark, subscribed, none }
    var slug: String
    var state: State
    var signInHref: String
    var stateName: String { state.rawValue }
    var isGuest: Bool { state == .guest }
    var viaBookmark: Bool { state == .bookmark }
    var subscribed: Bool { state == .subscribed }
    var canSubscribe: Bool { state == .none }
}
