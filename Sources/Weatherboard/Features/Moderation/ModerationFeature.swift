import Foundation

/// The admin area (queue, people, log) and the public transparency page.
enum ModerationFeature {
    /// `forgetPhoto`: a removed photo leaves the photos' memory at once (their port).
    static func install(_ site: Site, cities: CityIndex, forgetPhoto: @escaping @Sendable (String) -> Void) {
        let store = ModerationStore(database: site.database)
        AdminArea(pages: site.pages, store: store, database: site.database, clock: site.clock, forgetPhoto: forgetPhoto).addRoutes(to: site.router)
        TransparencyController(pages: site.pages, store: store, index: cities).addRoutes(to: site.router)
    }
}
