import Foundation
import HTTPServer

/// Bookmarked cities: in the database for signed-in people, in a cookie for guests.
struct Bookmarks {
    let store: BookmarkStore
    let index: CityIndex
    let clock: @Sendable () -> Date
    let secureCookies: Bool
    static let cookie = "bookmarks"
    static let limit = 20

    func addRoutes(to router: Router<AppContext>) {
        router.post("/bookmarks/{slug}", add)
        router.post("/bookmarks/{slug}/delete", remove)
    }

    /// The viewer's bookmarked cities, oldest first.
    func cities(for context: AppContext) throws -> [City] {
        if let user = context.user {
            return try store.cityIDs(of: user.id).compactMap(index.city(id:))
        }
        return guestSlugs(context.request).compactMap(index.city(slug:))
    }

    /// Whether the viewer bookmarked `city`: a guest's cookie, or one row looked up inside the
    /// caller's read.
    func contains(_ city: City, for context: AppContext, _ db: any SQLConnection) throws -> Bool {
        guard let user = context.user else { return containsForGuest(city, context) }
        return try BookmarkStore.contains(cityID: city.id, userID: user.id, db)
    }

    func containsForGuest(_ city: City, _ context: AppContext) -> Bool {
        guestSlugs(context.request).contains(city.slug)
    }

    /// At sign-up and sign-in: the bookmarks the person kept as a guest become the account's (the
    /// cookie is cleared), up to the limit; how many did not fit, to be said, never dropped
    /// silently.
    func adoptGuestBookmarks(_ request: Request, userID: Int64, into response: inout Response) throws -> Int {
        guard hasGuestCookie(request) else { return 0 }
        let cities = guestSlugs(request).compactMap(index.city(slug:))
        let left = try store.merge(cityIDs: cities.map(\.id), userID: userID, limit: Self.limit, now: clock())
        response.setCookie(.expired(Self.cookie))
        return left
    }

    func hasGuestCookie(_ request: Request) -> Bool { request.cookie(Self.cookie) != nil }

    /// The guest's bookmarks: known cities, each once, at most `limit` whatever the cookie holds.
    private func guestSlugs(_ request: Request) -> [String] {
        var slugs: [String] = []
        for slug in (request.cookie(Self.cookie) ?? "").split(separator: ".") where slugs.count < Self.limit {
            let slug = String(slug)
            if index.city(slug: slug) != nil && !slugs.contains(slug) { slugs.append(slug) }
        }
        return slugs
    }

    private func city(_ request: Request) throws -> City {
        let city = try index.city(named: request)
        return city
    }

    func add(_ request: Request, _ context: AppContext) throws -> Response {
        let city = try city(request)
        let added: Bool
        var cookie: SetCookie?
        if let user = context.user {
            added = try store.add(cityID: city.id, userID: user.id, limit: Self.limit, now: clock())
        } else {
            var slugs = guestSlugs(request)
            added = slugs.contains(city.slug) || slugs.count < Self.limit
            if !slugs.contains(city.slug) && added { slugs.append(city.slug) }
            cookie = self.cookie(slugs)
        }
        var response: Response
        if request.asksForJSON {
            // board.js changes the button in place; past the limit, 409, and it sends the form
            // itself to be told why on the page.
            response = .json(["bookmarked": added], status: added ? .ok : .conflict)
        } else {
            // Past the limit nothing is added, and the person is told so (never "bookmarked").
            context.nextFlash = Flash(added ? .bookmarked : .bookmarkLimit)
            response = .redirect(to: context.returnPath(or: "/city/\(city.slug)"))
        }
        if let cookie { response.setCookie(cookie) }
        return response
    }

    func remove(_ request: Request, _ context: AppContext) throws -> Response {
        let city = try city(request)
        var response = request.asksForJSON ? Response.json(["bookmarked": false]) : Response.redirect(to: context.returnPath(or: "/"))
        if !request.asksForJSON { context.nextFlash = Flash(.unbookmarked) }
        if let user = context.user {
            try store.remove(cityID: city.id, userID: user.id)
        } else {
            response.setCookie(cookie(guestSlugs(request).filter { $0 != city.slug }))
        }
        return response
    }

    private func cookie(_ slugs: [String]) -> SetCookie {
        SetCookie(name: Self.cookie, value: slugs.joined(separator: "."), maxAge: 365 * 24 * 3600, secure: secureCookies)
    }
}

/// The city a visitor opened last, found by "use my location" or by search (issue 26 #10): put
/// first on the home page of anyone without bookmarks. A cookie for guests and members alike, so
/// that reading a page writes nothing to the database; it holds a slug and nothing else.
enum LastCity {
    static let cookie = "last_city"

    static func remembered(_ request: Request, in index: CityIndex) -> City? {
        request.cookie(cookie).flatMap(index.city(slug:))
    }

    /// Sets the cookie on the city page's answer when it names another city.
    static func remember(_ city: City, on response: inout Response, for request: Request, secure: Bool) {
        guard response.status == .ok || response.status == .notModified, request.cookie(cookie) != city.slug else { return }
        response.setCookie(SetCookie(name: cookie, value: city.slug, maxAge: 365 * 24 * 3600, secure: secure))
    }
}

