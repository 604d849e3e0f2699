import Foundation

/// The cities: the list, search by name, and bookmarks (a guest's in a cookie, a member's kept).
enum CitiesFeature {
    /// `surgeLine`: a city's "people are reporting rain" line in the list (the boards' port).
    static func install(_ site: Site, cities: CityIndex, surgeLine: @escaping @Sendable (Int64, Language) -> (count: Int, text: String)?) -> Bookmarks {
        let bookmarks = Bookmarks(store: BookmarkStore(database: site.database), index: cities, clock: site.clock, secureCookies: site.secureCookies)
        bookmarks.addRoutes(to: site.router)
        CitiesController(pages: site.pages, index: cities, surgeLine: surgeLine).addRoutes(to: site.router)
        return bookmarks
    }
}
