import Foundation
import HTTPServer
import Logging

/// The composition root: opens the database, builds what every feature is made from (`Site`),
/// puts the middleware in one block, lets each feature install itself, and starts the server.
public final class Application: Sendable {
    public let configuration: AppConfiguration
    public let database: AppDatabase
    public let router = Router<AppContext>(secretParameters: ["token"]) // a `token` segment is a secret link's: logs name it, never give it
    public let server: Server
    /// Migrations applied when this application opened the database.
    public let appliedMigrations: [String]
    public let cities: CityIndex
    public let weather: WeatherService
    public let pages: Pages
    /// Versions of what pages show, following the change stream (this node's commits and others').
    public let pageVersions = PageVersions()
    public let metrics = SiteMetrics()
    let pageCache: PageCache, weatherParts: WeatherFragments
    let live: LiveBoards, boards: BoardCache, sharedReplies: SharedReplies, boardSnapshots: BoardSnapshots?
    let changeFeed: ChangeFeed?, otherWriters: OtherWriters?
    let health: HealthController, openID: OpenIDProviders, warnings: Warnings, photoProcessor: PhotoProcessor, janitor: Janitor
    let site: Site
    let logger: Logger
    private let boundPort = BoundPort() // once started (`--port 0` picks one): passkeys' origin without `--public-url`

    public init(configuration: AppConfiguration, logger: Logger? = nil) throws {
        var logger = logger ?? Logger(label: "weatherboard")
        logger.logLevel = configuration.logLevel
        (self.logger, self.configuration) = (logger, configuration)
        logger.notice("database: \(configuration.databaseDescription)")
        logger.notice("files: migrations \(configuration.migrationsDirectory), static \(configuration.publicDirectory), strings \(configuration.templatesDirectory)")
        (database, appliedMigrations) = try AppDatabase.open(
            configuration.database, migrationsDirectory: configuration.migrationsDirectory, connections: configuration.poolSize,
            timeouts: configuration.databaseTimeouts, replicas: (configuration.replicaURLs, configuration.replicaMaximumLag),
            metrics: metrics.factory, logger: logger)
        for name in appliedMigrations { logger.notice("applied migration \(name)") }
        let providers = try Application.makeProviders(configuration, logger: logger)
        pages = Pages(renderer: try Renderer(templatesDirectory: configuration.templatesDirectory), weatherSources: Set(providers.map(\.id)))
        try RegionNames.check(); try District.check(); try DistrictOutline.check(); try NamePolicy.check()
        if case let imported = try CityCatalog.importIfEmpty(into: database), imported > 0 { logger.notice("imported \(imported) cities") }
        let database = database, clock = configuration.clock, router = router
        cities = CityIndexCache.shared.index(of: try database.readStatement(City.all))
        weather = Application.makeWeather(configuration, providers: providers, database: database, metrics: metrics.factory, logger: logger)
        database.changes.subscribe { [pageVersions] change, _ in pageVersions.apply(change) }
        (changeFeed, otherWriters) = database.followOthers(logger: logger)
        pageCache = PageCache(versions: pageVersions, maximumAge: configuration.pageCacheMaximumAge, enabled: configuration.pageCaches,
                              clock: clock, metrics: metrics.factory)
        let site = Site(database: database, pages: pages, clock: clock, logger: logger, metrics: metrics.factory, router: router,
                        limits: configuration.limits, clientAddress: ClientAddress(trustedProxies: Set(configuration.trustedProxies)),
                        secureCookies: configuration.secureCookies, publicURL: configuration.publicURL, keepsPages: configuration.pageCaches)
        self.site = site

        // Middleware, outermost first: the time and status of everything below; the database's deadline
        // counted from arrival; headers on every response, error pages included.
        let errors = ErrorPages(pages: pages, logger: logger)
        router.use(metrics.middleware)
        router.use(Middleware.databaseDeadline)
        if let replicas = database.replicas { router.use(Middleware.readYourWrites(replicas: replicas, secure: configuration.secureCookies)) }
        let compression = ResponseCompression(); router.use(compression.middleware)
        router.use(Middleware.securityHeaders)
        router.use(Middleware.languageCookie(secure: configuration.secureCookies))
        router.use(errors.middleware)
        router.errorResponder = { _, context, error in errors.response(for: error, context) }
        router.use(Flash.middleware(secure: configuration.secureCookies))
        router.use(Middleware.pageAddress(nearestPage: { [unowned router] in router.nearestPage(above: $0) }))

        // Features, each installing its routes, workers and what it keeps; ports by name.
        let health = HealthController(database: database); self.health = health
        health.addRoutes(to: router)
        try InstallableFeature.install(site, publicDirectory: configuration.publicDirectory)
        let mail = MailFeature.install(site, settings: try Application.mailSettings(configuration), composers: [
            .verify: AccountMail(), .reset: AccountMail(), .addressChanged: AccountMail(), .notice: NoticeMail(),
            .digest: DigestMail(cities: cities, weather: weather)])
        let push = PushFeature.install(site, settings: Application.pushSettings(configuration)) { [notices = NoticePush(database: database, pages: pages)] in
            try notices.message(notification: $0, of: $1, in: $2)
        }
        let warnings = try WarningsFeature.install(site, cities: cities, providers: try Application.makeWarningProviders(configuration),
                                                   interval: configuration.warningsEvery); self.warnings = warnings
        let boardsFeature = BoardsFeature(site, versions: pageVersions, effects: BoardNotices())
        (live, boards, sharedReplies, boardSnapshots) = (boardsFeature.live, boardsFeature.cache, boardsFeature.sharedReplies, boardsFeature.snapshots)
        let bookmarks = CitiesFeature.install(site, cities: cities) { [surges = boardsFeature.surges, pages = site.pages] city, language in
            SurgeView(surges.surge(in: city), language) { pages.string($0, language, $1) }.map { ($0.count, $0.text) }
        }
        openID = OpenIDProviders(try Application.openIDProviders(configuration), logger: logger, clock: clock, fetch: OpenIDProviders.fetchDocument)
        AccountsFeature.install(site, bookmarks: bookmarks, mail: mail, pushEnabled: push != nil, openID: openID,
                                party: PasskeyParty(publicURL: configuration.publicURL, onLoopback: ["127.0.0.1", "::1", "localhost"].contains(configuration.host),
                                                    port: { [boundPort] in boundPort.port }),
                                passwordCost: configuration.passwordCost)
        let map = try MapFeature.install(site, cities: cities, weather: weather, surges: boardsFeature.surges, bookmarks: bookmarks, cache: pageCache)
        HomeController(pages: pages, index: cities, weather: weather, warnings: warnings, surges: boardsFeature.surges, bookmarks: bookmarks,
                       cache: pageCache, database: database, map: map, clock: clock).addRoutes(to: router)
        SearchFeature.install(site, cities: cities)
        WeatherFeature.install(site, weather: weather)
        let cityPage = CityPageFeature.install(site, cities: cities, weather: weather, warnings: warnings, boards: boardsFeature,
                                               bookmarks: bookmarks, guestPages: pageCache, forecastMissedReports: configuration.forecastMissedReports)
        weatherParts = cityPage.fragments
        let photos = PhotosFeature.install(site)
        photoProcessor = PhotoProcessor(limits: configuration.photoLimits)
        boardsFeature.install(site, cities: cities, photos: photoProcessor, inEventMode: { [warnings] in warnings.inEventMode(city: $0, now: clock()) },
                              cityPage: { city, context, composer, status in try cityPage.page(city, context, before: nil, composer: composer, status: status) })
        NotificationsFeature.install(site, board: boardsFeature.view, pushEnabled: push != nil, mailEnabled: mail != nil)
        ModerationFeature.install(site, cities: cities, forgetPhoto: { photos.forget($0) })
        DigestFeature.install(site, mail: mail, interval: configuration.scheduleInterval)
        RainAlertsFeature.install(site, cities: cities, weather: weather, interval: configuration.scheduleInterval)
        Application.holdCaches(site, pageCache: pageCache, weather: weather, forecastBytes: configuration.forecastsInMemory.bytes, compression: compression)
        janitor = Janitor(database: database, keeping: site.keeping, every: configuration.janitorInterval, clock: clock, logger: logger)
        site.run("janitor", janitor)

        let scrapes = MetricsController(metrics: metrics, allowed: Set(configuration.metricsAddresses), clientAddress: site.clientAddress)
        let serverConfiguration = Application.serverConfiguration(configuration)
        // Both answered on the event loop: they must answer while every worker is stuck.
        let immediate: ImmediateResponder = { [shared = boardsFeature.sharedReplies] in
            health.immediateResponse(to: $0) ?? scrapes.immediateResponse(to: $0) ?? shared.immediateResponse(to: $0, now: clock())
        }
        let lanes: (@Sendable (Request, LaneConditions) -> Lane)? = serverConfiguration.quickWorkerThreads == 0 ? nil : { @Sendable request, conditions in
            Application.lane(of: request, conditions, databaseStalled: database.isStalled)
        }
        server = Server(configuration: serverConfiguration, logger: logger, immediate: immediate, lane: lanes, responder: router.responder)
        health.lanes.withLock { [server] in $0 = { HealthController.lanes(main: server.workers, quick: server.quickWorkers) } }
        sampleGauges(providers: providers.map(\.id))
    }

    /// Starts serving, then every feature's background work; returns once the server accepts connections.
    public func start() throws {
        try server.start()
        boundPort.port = server.port
        for worker in site.workers { worker.work.start() }
    }

    /// Serves until SIGINT or SIGTERM, then shuts down gracefully.
    public func run() throws {
        try start()
        server.shutDownOnSignals()
        server.wait()
        close()
    }

    /// After the server stopped: stops the features' work, the last started first, stops
    /// listening to other nodes and closes the database.
    public func close() {
        for worker in site.workers.reversed() { worker.work.stop() }
        health.stop()
        changeFeed?.stop()
        otherWriters?.stop()
        do { try database.close() } catch { logger.error("closing the database: \(error)") }
    }
}
