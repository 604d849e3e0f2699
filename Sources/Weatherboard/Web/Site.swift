import Foundation
import HTTPServer
import Logging
import Metrics
import Synchronization

/// What every feature is built from, made once by the application and handed to each feature's
/// `install` (issue 63 #1): the database, the catalogs, the clock, the log, the limits and the
/// site's own addresses; and where a feature puts its routes, its background work and what it
/// keeps. A feature that needs another's work is handed it by name (a port), never reaches for it.
final class Site: Sendable {
    let database: AppDatabase
    let pages: Pages
    let clock: @Sendable () -> Date
    let logger: Logger
    let metrics: any MetricsFactory
    let router: Router<AppContext>
    let limits: SiteLimits
    let clientAddress: ClientAddress
    let secureCookies: Bool
    /// The site as its members reach it (`--public-url`), for links that leave the page.
    let publicURL: String?
    /// Whether rendered pages and parts are kept (`--page-caches`).
    let keepsPages: Bool

    /// Background work: started with the server, stopped last first before the database closes.
    struct Worker: Sendable {
        let name: String
        let work: any BackgroundWork
    }
    /// A cache in this process that holds bytes: what it holds now and at most (nil: the
    /// engine's own, bounded by its configuration).
    struct Cache: Sendable {
        let name: String
        let bound: Int?
        let held: @Sendable () -> Int
    }
    private let registered = Mutex<(workers: [Worker], keeping: [Keeping], caches: [Cache])>(([], [], []))

    init(database: AppDatabase, pages: Pages, clock: @escaping @Sendable () -> Date, logger: Logger, metrics: any MetricsFactory,
         router: Router<AppContext>, limits: SiteLimits, clientAddress: ClientAddress, secureCookies: Bool, publicURL: String?,
         keepsPages: Bool) {
        (self.database, self.pages, self.clock, self.logger, self.metrics, self.router) = (database, pages, clock, logger, metrics, router)
        (self.limits, self.clientAddress, self.secureCookies, self.publicURL, self.keepsPages) = (limits, clientAddress, secureCookies, publicURL, keepsPages)
    }

    func run(_ name: String, _ work: any BackgroundWork) {
        registered.withLock { $0.workers.append(Worker(name: name, work: work)) }
    }

    /// The background work registered under `name` (tests wait for its rounds).
    func worker(_ name: String) -> (any BackgroundWork)? { workers.first { $0.name == name }?.work }

    /// Rows of the feature's tables that the janitor purges past their time.
    func keep(_ keeping: Keeping...) { keep(keeping) }

    func keep(_ keeping: [Keeping]) {
        registered.withLock { $0.keeping += keeping }
    }

    /// A cache the feature keeps bytes in, for `weatherboard_cache_bytes` and the node's total.
    func holds(_ name: String, upTo bound: Int?, _ held: @escaping @Sendable () -> Int) {
        registered.withLock { $0.caches.append(Cache(name: name, bound: bound, held: held)) }
    }

    var workers: [Worker] { registered.withLock { $0.workers } }
    var caches: [Cache] { registered.withLock { $0.caches } }
    var keeping: [Keeping] { registered.withLock { $0.keeping } }
}
