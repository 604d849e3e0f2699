import Foundation
import HTTPServer
import Logging

/// The one place that knows every feature: opens the database, loads the templates, builds the
/// router and the server.
public final class Application: Sendable {
    public let configuration: AppConfiguration
    public let database: AppDatabase
    public let router: Router<AppContext>
    public let server: Server
    /// Migrations applied when this application opened the database.
    public let appliedMigrations: [String]

    public let cities: CityIndex
    public let weather: WeatherService
    /// Templates and string catalogs.
    public let pages: Pages
    /// Versions of what pages show; cached pages are checked against them. They follow the
    /// database's change stream: this node's commits and other nodes'.
    public let pageVersions = PageVersions()
    /// Guests' pages, kept while what they show is unchanged.
    let pageCache: PageCache
    /// On PostgreSQL, how this node hears other nodes' changes and tells them its own.
    let changeFeed: ChangeFeed?
    /// On SQLite, how this node hears what other processes wrote into its file.
    let otherWriters: OtherWriters?
    /// The boards' event streams, fed by the change stream.
    let live: LiveBoards
    /// City pages' weather parts, rendered (and deflated) once per forecast and language.
    let weatherParts: WeatherFragments
    /// Boards as rendered (and deflated), for the next reader they are the same for.
    let boards: BoardCache
    /// New replies as open pages fetch them, rendered once per what their render reads.
    let sharedReplies: SharedReplies
    /// Board pages as everyone sees them, kept while unchanged; only where every change reaches
    /// this process as it commits (SQLite; see `BoardSnapshots`).
    let boardSnapshots: BoardSnapshots?
    /// What the operator scrapes at `/metrics`.
    public let metrics = SiteMetrics()
    /// `/healthz`, answered on the event loop from a monitor's verdict while a balancer watches.
    let health: HealthController
    /// OpenID Connect providers to sign in with, their documents kept fresh.
    let openID: OpenIDProviders

    /// The configured providers with their client ids and secrets (from the environment or a
    /// file: never the command line).
    static func openIDProviders(_ configuration: AppConfiguration) throws -> [OpenIDProviders.Provider] {
        try configuration.oidcIssuers.sorted { $0.key < $1.key }.map { name, issuer in
            guard let clientID = configuration.oidcClientIDs[name] else { throw StartupError("--oidc-provider \(name) needs --oidc-client-id \(name)=…") }
            let file = try configuration.oidcSecretFiles[name].map { path in
                do { return try String(contentsOfFile: path, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines) } catch {
                    throw StartupError("--oidc-secret-file \(name): \(path) cannot be read")
                }
            }
            if name == "apple", let path = configuration.oidcAppleKeyFile {
                guard let keyID = configuration.oidcAppleKeyID, let teamID = configuration.oidcAppleTeamID else {
                    throw StartupError("--oidc-apple-key-file needs --oidc-apple-key-id and --oidc-apple-team-id")
                }
                let apple: AppleClientSecret
                do { apple = try AppleClientSecret(pem: try String(contentsOfFile: path, encoding: .utf8), keyID: keyID, teamID: teamID) } catch {
                    throw StartupError("--oidc-apple-key-file: \(path) is not a readable P-256 key (the .p8 file Apple gave)")
                }
                return OpenIDProviders.Provider(name: name, issuer: issuer, clientID: clientID, clientSecret: "", apple: apple)
            }
            guard let secret = configuration.oidcSecrets[name] ?? Environment.value("WEATHERBOARD_OIDC_SECRET_" + name.uppercased()) ?? file,
                  !secret.isEmpty else {
                throw StartupError("--oidc-provider \(name) needs its client secret: WEATHERBOARD_OIDC_SECRET_\(name.uppercased()) or --oidc-secret-file \(name)=PATH")
            }
            return OpenIDProviders.Provider(name: name, issuer: issuer, clientID: clientID, clientSecret: secret)
        }
    }
    /// The mail queue's sender, with a relay configured (`--smtp-url`).
    let mail: MailSender?
    /// The push queue's sender, with a contact configured (`--push-contact`).
    let push: PushSender?
    /// Rain alerts, set against forecasts on every node.
    let rainAlerts: RainAlerts
    /// The e-mail digest's schedule, with a relay configured.
    let digests: Digests?
    /// Official warnings, asked for on every node and kept for pages.
    let warnings: Warnings
    /// Photos' decoder (tests count its decodes).
    let photoProcessor: PhotoProcessor
    /// The port listened on, once started (`--port 0` picks one): passkeys' origin without `--public-url`.
    private let boundPort = BoundPort()
    let logger: Logger
    /// Purges what every feature keeps past its time.
    let janitor: Janitor

    public init(configuration: AppConfiguration, logger: Logger? = nil) throws {
        var logger = logger ?? Logger(label: "weatherboard")
        logger.logLevel = configuration.logLevel
        self.logger = logger
        self.configuration = configuration
        logger.notice("database: \(configuration.databaseDescription)")
        logger.notice("files: migrations \(configuration.migrationsDirectory), static \(configuration.publicDirectory), strings \(configuration.templatesDirectory)")
        (database, appliedMigrations) = try AppDatabase.open(
            configuration.database, migrationsDirectory: configuration.migrationsDirectory,
            connections: configuration.poolSize, timeouts: configuration.databaseTimeouts,
            replicas: (configuration.replicaURLs, configuration.replicaMaximumLag), metrics: metrics.factory, logger: logger)
        for name in appliedMigrations { logger.notice("applied migration \(name)") }
        let providers = try Application.makeProviders(configuration, logger: logger)
        pages = Pages(renderer: try Renderer(templatesDirectory: configuration.templatesDirectory),
                      weatherSources: Set(providers.map(\.id)))
        try RegionNames.check()
        try NamePolicy.check()
        let database = database, pages = pages
        let push = configuration.pushContact.map { contact in
            PushSender(settings: .init(contact: contact, extraOrigins: configuration.pushExtraOrigins, pollInterval: configuration.pushPollInterval,
                                       retryBase: configuration.pushRetryBase, timeout: configuration.pushTimeout),
                       store: PushStore(database: database), pages: pages, wording: { [notices = NoticePush(database: database, pages: pages)] in try notices.message(notification: $0, of: $1, in: $2) },
                       clock: configuration.clock, logger: logger)
        }
        self.push = push
        if let push {
            // A notice told anywhere (any node) may have pushes waiting.
            database.changes.subscribe { change, _ in if case .notice = change { push.wake() } }
        }
        let imported = try CityCatalog.importIfEmpty(into: database)
        if imported > 0 { logger.notice("imported \(imported) cities") }
        cities = CityIndexCache.shared.index(of: try database.readStatement(City.all))
        weather = WeatherService(providers: providers, airQualityProviders: Application.makeAirQualityProviders(configuration),
                                 normalsProvider: Application.makeNormalsProvider(configuration), database: database,
                                 freshFor: configuration.weatherFreshFor, firstFetchBudget: configuration.weatherFirstFetchBudget,
                                 memoryLimit: configuration.forecastsInMemory,
                                 budget: configuration.weatherFetchBudget, logger: logger,
                                 clock: configuration.clock, metrics: metrics.factory)
        let mail = try Application.makeMail(configuration, database: database, pages: pages,
                                            digest: DigestMail(cities: cities, weather: weather), logger: logger)
        self.mail = mail
        digests = mail.map { Digests(database: database, mail: $0, interval: configuration.scheduleInterval, clock: configuration.clock, logger: logger) }
        if let mail {
            // A notice told anywhere (any node) may have an e-mail waiting.
            database.changes.subscribe { change, _ in if case .notice = change { mail.wake() } }
        }
        database.changes.subscribe { [pageVersions, weather] change, origin in
            pageVersions.apply(change)
            // This node's forecasts are in memory already; another node's are read from the database.
            guard origin == .elsewhere else { return }
            switch change {
            case .weather(let cityID): weather.forget(cityID: cityID)
            case .missed: weather.forgetAll() // after a reconnection: anything may have changed
            case .city, .post, .everything, .notice, .warning, .silenced: break
            }
        }
        photoProcessor = PhotoProcessor(limits: configuration.photoLimits)
        warnings = try Warnings(database: database, cities: cities, providers: try Application.makeWarningProviders(configuration),
                                interval: configuration.warningsEvery,
                                words: { [pages, clock = configuration.clock] warning, city in
                                    WarningView.threadOpening(warning, city: city, now: clock()) { pages.string($0, $1, $2) }
                                }, clock: configuration.clock, logger: logger)
        rainAlerts = RainAlerts(database: database, weather: weather, cities: cities, interval: configuration.scheduleInterval,
                                clock: configuration.clock, logger: logger)
        boardSnapshots = database.dialect == .sqlite && configuration.pageCaches ? BoardSnapshots(versions: pageVersions) : nil
        weatherParts = WeatherFragments(enabled: configuration.pageCaches)
        boards = BoardCache(enabled: configuration.pageCaches)
        sharedReplies = SharedReplies(enabled: configuration.pageCaches, versions: pageVersions)
        pageCache = PageCache(versions: pageVersions, maximumAge: configuration.pageCacheMaximumAge, enabled: configuration.pageCaches,
                              clock: configuration.clock, metrics: metrics.factory)
        let conversations = BoardStore(database: database, effects: BoardNotices())
        live = LiveBoards(node: database.changes.node, clock: configuration.clock,
                          conversation: { [logger] id in
                              do {
                                  return try conversations.conversationState(of: id)
                              } catch {
                                  // The event still goes out; only who may see it is unknown, so nobody's stream gets it.
                                  logger.error("live: could not read conversation \(id) to address its event: \(error)")
                                  return nil
                              }
                          },
                          silenced: { [logger, clock = configuration.clock] member in
                              do {
                                  return try conversations.silencedIDs(by: member, now: clock())
                              } catch {
                                  // The streams keep what they had; the member's next page reads it afresh.
                                  logger.error("live: could not read whom member \(member) silenced: \(error)")
                                  return nil
                              }
                          })
        database.changes.subscribe { [live] change, _ in live.consume(change) }
        live.startTicking()
        if let postgres = database.engine as? PostgresDatabase {
            changeFeed = ChangeFeed(database: postgres, node: database.changes.node, logger: logger,
                                    asksPosition: database.replicas != nil) { [database] in database.heard($0, at: $1) }
        } else {
            changeFeed = nil
        }
        let changes = database.changes
        otherWriters = (database.engine as? SQLiteDatabase).map { OtherWriters($0, changes: changes) }
        janitor = Janitor(database: database, keeping: [RateLimit.keeping, SessionStore.keeping, KnownDevices.keeping, EmailTokens.keeping,
                                                        UnstatedPosts.keeping, WebAuthnChallenge.keeping, DigestController.keeping, ForecastHistory.keeping]
                          + Notices.keeping + OpenIDController.keeping, every: configuration.janitorInterval, clock: configuration.clock, logger: logger)
        let health = HealthController(database: database)
        self.health = health
        openID = OpenIDProviders(try Self.openIDProviders(configuration), logger: logger, clock: configuration.clock) { url in
            let answer = try Curl.perform(url, headers: [("Accept", "application/json")], maximumBytes: OpenIDProviders.keySetBytes, timeout: 5)
            guard answer.status == 200 else { throw Curl.Failure(description: "\(url) answered \(answer.status)") }
            return answer.body
        }
        router = try Application.makeRouter(openID: openID, configuration: configuration, database: database, pages: pages,
                                        cities: cities, weather: weather, warnings: warnings, photoProcessor: photoProcessor, cache: pageCache, live: live, metrics: metrics,
                                        health: health, weatherParts: weatherParts, boards: boards, sharedReplies: sharedReplies, boardSnapshots: boardSnapshots,
                                        mail: mail, push: push, party: PasskeyParty(publicURL: configuration.publicURL,
                                                                        onLoopback: ["127.0.0.1", "::1", "localhost"].contains(configuration.host),
                                                                        port: { [boundPort] in boundPort.port }),
                                        logger: logger)
        var serverConfiguration = configuration.server
        serverConfiguration.host = configuration.host
        serverConfiguration.port = configuration.port
        serverConfiguration.serverName = "weatherboard"
        // Behind a proxy, every visitor arrives from it: its connections are not one client's.
        serverConfiguration.uncappedAddresses = Set(configuration.trustedProxies)
        serverConfiguration.limits.bodyLimit = PhotoUpload.bodyLimit(default: serverConfiguration.limits.maxBodyBytes,
                                                                      photoBytes: configuration.photoLimits.maxBytes)
        let scrapes = MetricsController(metrics: metrics, allowed: Set(configuration.metricsAddresses),
                                        clientAddress: ClientAddress(trustedProxies: Set(configuration.trustedProxies)))
        // Both answered on the event loop: they must answer while every worker is stuck.
        let lanes: (@Sendable (Request, LaneConditions) -> Lane)? = serverConfiguration.quickWorkerThreads == 0 ? nil : { @Sendable [database] request, conditions in
            Application.lane(of: request, conditions, databaseStalled: database.isStalled)
        }
        server = Server(configuration: serverConfiguration, logger: logger,
                        immediate: { [sharedReplies, clock = configuration.clock] in
                            health.immediateResponse(to: $0) ?? scrapes.immediateResponse(to: $0)
                                ?? sharedReplies.immediateResponse(to: $0, now: clock())
                        },
                        lane: lanes, responder: router.responder)
        health.lanes.withLock { [server] in $0 = { HealthController.lanes(main: server.workers, quick: server.quickWorkers) } }
        sampleGauges(providers: providers.map(\.id))
    }

    /// What is open now, read when `/metrics` is scraped.
    private func sampleGauges(providers: [String]) {
        metrics.sample("weatherboard_db_up") { [health] in health.scrapedVerdict() }
        metrics.sample("weatherboard_open_connections") { [server] in Double(server.openConnections) }
        metrics.sample("weatherboard_open_streams") { [server] in Double(server.openStreams) }
        metrics.sample("weatherboard_buffered_bytes") { [server] in Double(server.heldBytes) }
        metrics.follow("weatherboard_refused_total", dimensions: [("cause", "memory")]) { [server] in Double(server.refusals.memory) }
        metrics.follow("weatherboard_refused_total", dimensions: [("cause", "streams")]) { [server] in Double(server.refusals.streams) }
        metrics.sample("weatherboard_workers") { [server] in Double(server.workers.threads) }
        metrics.sample("weatherboard_workers_busy") { [server] in Double(server.workers.busy) }
        metrics.sample("weatherboard_workers_queued") { [server] in Double(server.workers.queued) }
        metrics.follow("weatherboard_workers_waited_total") { [server] in Double(server.workers.waitedTotal) }
        metrics.sample("weatherboard_quick_workers") { [server] in Double(server.quickWorkers?.threads ?? 0) }
        metrics.sample("weatherboard_quick_workers_busy") { [server] in Double(server.quickWorkers?.busy ?? 0) }
        metrics.sample("weatherboard_quick_workers_queued") { [server] in Double(server.quickWorkers?.queued ?? 0) }
        let caches: [(String, @Sendable () -> Int)] = [
            ("pages", { [pageCache] in pageCache.keptBytes }), ("weather_parts", { [weatherParts] in weatherParts.keptBytes }),
            ("boards", { [boards] in boards.keptBytes }),
            ("shared_stretches", { [pages] in pages.renderer.sharedStretches.keptBytes }),
            ("shared_replies", { [sharedReplies] in sharedReplies.keptBytes }),
            ("board_snapshots", { [boardSnapshots] in boardSnapshots?.keptBytes ?? 0 }),
            ("forecasts", { [weather] in weather.forecastsInMemory.bytes }),
            ("sqlite", { SQLiteDatabase.memoryUsed }),
        ]
        for (name, read) in caches { metrics.sample("weatherboard_cache_bytes", dimensions: [("cache", name)]) { Double(read()) } }
        if let pool = database.engine as? PostgresDatabase {
            metrics.sample("weatherboard_db_connections_open") { Double(pool.openConnections) }
        }
        if let replicas = database.replicas {
            metrics.follow("weatherboard_db_read_statements_total", dimensions: [("server", "primary")]) { [database] in
                Double(database.readStatements.primary.load(ordering: .relaxed))
            }
            metrics.follow("weatherboard_db_read_statements_total", dimensions: [("server", "replica")]) { [database] in
                Double(database.readStatements.replica.load(ordering: .relaxed))
            }
            metrics.follow("weatherboard_replica_passed_over_total") { Double(replicas.fallbacks.load(ordering: .relaxed)) }
            for replica in replicas.replicas {
                metrics.sample("weatherboard_replica_usable", dimensions: [("replica", replica.name)]) {
                    replica.usable.load(ordering: .relaxed) ? 1 : 0
                }
                // -1 exactly while the standby does not answer (the documented sentinel; -1 ms read -0.001).
                metrics.sample("weatherboard_replica_lag_seconds", dimensions: [("replica", replica.name)]) {
                    let lag = replica.lagMilliseconds.load(ordering: .relaxed)
                    return lag < 0 ? -1 : Double(lag) / 1000
                }
            }
        }
        if let changeFeed {
            metrics.sample("weatherboard_change_feed_listening") { changeFeed.isListening ? 1 : 0 }
            metrics.sample("weatherboard_change_feed_silence_seconds") { changeFeed.silence }
        }
        for provider in providers {
            metrics.sample("weatherboard_weather_breaker_open", dimensions: [("provider", provider)]) { [weather] in
                weather.isBreakerOpen(provider) ? 1 : 0
            }
        }
    }

    static func makeProviders(_ configuration: AppConfiguration, logger: Logger? = nil) throws -> [WeatherProvider] {
        var names = configuration.weatherProviders
        if configuration.kmaKey != nil && !names.contains("kma") { names.insert("kma", at: 0) }
        return try names.map { name -> WeatherProvider in
            switch name {
            case "open-meteo": return OpenMeteoProvider(baseURL: configuration.openMeteoURL)
            case "demo": return DemoProvider()
            case "kma":
                guard let key = configuration.kmaKey else { throw StartupError("the kma provider needs WEATHERBOARD_KMA_KEY") }
                return KMAProvider(baseURL: configuration.kmaURL, serviceKey: key, logger: logger)
            default: throw StartupError("unknown weather provider '\(name)' (known: kma, open-meteo, demo)")
            }
        }
    }

    /// The air's sources follow the forecast's: Open-Meteo's air-quality service where Open-Meteo
    /// (or KMA, which has no air quality) is asked, the demo's figures where the demo is.
    static func makeAirQualityProviders(_ configuration: AppConfiguration) -> [AirQualityProvider] {
        var providers: [AirQualityProvider] = []
        let names = configuration.weatherProviders
        if names.contains("open-meteo") || configuration.kmaKey != nil {
            providers.append(OpenMeteoAirQuality(baseURL: configuration.airQualityURL))
        }
        if names.contains("demo") { providers.append(DemoAirQuality()) }
        return providers
    }

    /// Normals come from Open-Meteo's archive wherever real forecasts are asked (the demo's
    /// figures bring their own); an empty `--archive-url` asks for none.
    static func makeNormalsProvider(_ configuration: AppConfiguration) -> NormalsProvider? {
        guard !configuration.archiveURL.isEmpty, configuration.weatherProviders.contains("open-meteo") || configuration.kmaKey != nil
        else { return nil }
        return OpenMeteoArchive(baseURL: configuration.archiveURL)
    }

    /// Warnings come wherever real forecasts are asked (the demo has none) or a source's URL is
    /// given; an empty URL asks that source for none.
    static func makeWarningProviders(_ configuration: AppConfiguration) throws -> [WarningProvider] {
        let real = configuration.weatherProviders.contains("open-meteo") || configuration.kmaKey != nil
        var providers: [WarningProvider] = []
        if let url = configuration.warningsNWSURL ?? (real ? AppConfiguration.nwsURL : nil), !url.isEmpty {
            providers.append(NWSAlerts(baseURL: url))
        }
        if let url = configuration.warningsMeteoAlarmURL ?? (real ? AppConfiguration.meteoAlarmURL : nil), !url.isEmpty {
            let geocodes = try configuration.warningsMeteoAlarmGeocodes.map(WarningGeocodes.init(file:)) ?? WarningGeocodes()
            providers.append(MeteoAlarm(baseURL: url, geocodes: geocodes))
        }
        if let key = configuration.kmaKey, let url = configuration.warningsKMAURL ?? Optional(configuration.kmaURL), !url.isEmpty {
            providers.append(KMAWarnings(baseURL: url, serviceKey: key))
        }
        return providers
    }

    static func makeRouter(openID: OpenIDProviders, configuration: AppConfiguration, database: AppDatabase, pages: Pages,
                           cities: CityIndex, weather: WeatherService, warnings: Warnings, photoProcessor: PhotoProcessor, cache: PageCache, live: LiveBoards,
                           metrics: SiteMetrics, health: HealthController, weatherParts: WeatherFragments,
                           boards: BoardCache, sharedReplies: SharedReplies, boardSnapshots: BoardSnapshots?, mail: MailSender?, push: PushSender?, party: PasskeyParty,
                           logger: Logger) throws -> Router<AppContext> {
        // A path segment named `token` is a secret link's (reset, verification, unsubscribe): logs name it, never give it.
        let router = Router<AppContext>(secretParameters: ["token"])
        let errors = ErrorPages(pages: pages, logger: logger)
        // Outermost first: the time and status of everything below; headers go on every response,
        // error pages included.
        router.use(metrics.middleware)
        // Every request's database work has a deadline (a 503 past it), counted from its arrival:
        // a request that waited its time out in the workers' queue (behind others waiting on a
        // frozen database) is answered 503 at once rather than given 2 s more.
        router.use { request, context, next in
            let left = DatabaseDeadline.allowed - Double(request.millisecondsSinceArrival) / 1000
            guard left > 0 else { throw HTTPError(.serviceUnavailable, headers: HTTPHeaders([("Retry-After", "5")])) }
            return try DatabaseDeadline.$current.withValue(Date().addingTimeInterval(left)) { try next(request, context) }
        }
        if let replicas = database.replicas {
            router.use(Middleware.readYourWrites(replicas: replicas, secure: configuration.secureCookies))
        }
        router.use(ResponseCompression().middleware)
        router.use(Middleware.securityHeaders)
        router.use(Middleware.languageCookie(secure: configuration.secureCookies))
        router.use(errors.middleware)
        router.errorResponder = { _, context, error in errors.response(for: error, context) }

        let files = StaticFiles(root: configuration.publicDirectory)
        router.get("/static/{path...}") { request, _ in try files.response(for: request.parameters["path"] ?? "", request: request) }
        // Browsers ask for /favicon.ico whatever the page links; the icon is an SVG.
        router.get("/favicon.ico") { _, _ in .redirect(to: "/static/favicon.svg", status: .movedPermanently) }
        health.addRoutes(to: router)
        try InstallController(pages: pages, publicDirectory: configuration.publicDirectory).addRoutes(to: router)
        let clientAddress = ClientAddress(trustedProxies: Set(configuration.trustedProxies))
        let clock = configuration.clock
        let sessions = SessionStore(database: database)
        let identity = Identity(sessions: sessions, unstated: UnstatedPosts(database: database, pages: pages, clock: clock),
                                secureCookies: configuration.secureCookies, clock: clock,
                                routeExists: { [unowned router] in router.hasRoute(for: $0) })
        router.use(Flash.middleware(secure: configuration.secureCookies))
        router.use(Middleware.pageAddress(nearestPage: { [unowned router] in router.nearestPage(above: $0) }))
        router.use(identity.middleware)
        let board = BoardView(database: database, pages: pages, clock: clock, snapshots: boardSnapshots,
                              livePosition: { [live] in live.position(of: $0) })
        let bookmarks = Bookmarks(store: BookmarkStore(database: database), index: cities, clock: clock, secureCookies: configuration.secureCookies)
        bookmarks.addRoutes(to: router)
        let surges = Surges(database: database, clock: clock, logger: logger, changed: { [live] in live.surgeChanged($0) })
        HomeController(pages: pages, index: cities, weather: weather, warnings: warnings, surges: surges, bookmarks: bookmarks, cache: cache, clock: clock).addRoutes(to: router)
        CitiesController(pages: pages, index: cities, surgeLine: { city, language in
            SurgeView(surges.surge(in: city), language) { pages.string($0, language, $1) }.map { ($0.count, $0.text) }
        }).addRoutes(to: router)
        PostSearchController(pages: pages, database: database, index: cities, clientAddress: clientAddress,
                             searches: ClientLimit(limit: configuration.limits.searchesPerMinute, window: 60), clock: clock).addRoutes(to: router)
        PaletteController().addRoutes(to: router)
        let cityPage = CityPageController(pages: pages, index: cities, weather: weather, warnings: warnings, surges: surges, board: board, bookmarks: bookmarks,
                                          cache: cache, clientAddress: clientAddress, clock: clock, fragments: weatherParts,
                                          boards: boards, forecastMissedReports: configuration.forecastMissedReports)
        cityPage.addRoutes(to: router)
        ForecastCheckController(pages: pages, index: cities, database: database, clock: clock).addRoutes(to: router)
        ObservationDataController(database: database, index: cities, clock: clock).addRoutes(to: router)
        let photos = PhotosController(database: database, clock: clock)
        photos.addRoutes(to: router)
        let postingRules = PostingRules(secondsBetweenPosts: configuration.limits.secondsBetweenPosts,
                                        postsPerDay: configuration.limits.postsPerDay,
                                        inEventMode: { [clock] in warnings.inEventMode(city: $0, now: clock()) },
                                        photoLimits: configuration.limits.photos)
        BoardController(pages: pages, store: BoardStore(database: database, effects: BoardNotices()), index: cities, rules: postingRules,
                        photos: photoProcessor, clock: clock, publicURL: configuration.publicURL, logger: logger,
                        cityPageWithComposer: { city, context, composer, status in
                            try cityPage.page(city, context, before: nil, composer: composer, status: status)
                        }).addRoutes(to: router)
        ConversationController(pages: pages, store: BoardStore(database: database, effects: BoardNotices()), board: board, rules: postingRules,
                               reactionLimit: RateLimit(limit: configuration.limits.reactionsPerHour, window: 3600),
                               clock: clock, logger: logger,
                               sharedReplies: sharedReplies).addRoutes(to: router)
        LiveController(live: live, store: BoardStore(database: database, effects: BoardNotices()), index: cities, clientAddress: clientAddress,
                       clock: configuration.clock).addRoutes(to: router)
        NotificationsController(pages: pages, store: NotificationStore(database: database), board: board, clock: clock).addRoutes(to: router)
        SafetyController(pages: pages, store: BoardStore(database: database, effects: BoardNotices()), database: database, board: board, limits: configuration.limits,
                         clock: clock).addRoutes(to: router)
        AdminArea(pages: pages, store: ModerationStore(database: database), database: database, clock: clock,
                  forgetPhoto: { photos.forget($0) }).addRoutes(to: router)
        TransparencyController(pages: pages, store: ModerationStore(database: database), index: cities).addRoutes(to: router)
        let accounts = AccountStore(database: database), hasher = PasswordHasher(cost: configuration.passwordCost)
        let accountsController = AccountsController(pages: pages, store: accounts, identity: identity, hasher: hasher,
                           bookmarks: bookmarks, limits: configuration.limits, clientAddress: clientAddress,
                           mail: mail, party: party, pushEnabled: push != nil, openID: openID, clock: clock)
        accountsController.addRoutes(to: router)
        OpenIDController(pages: pages, store: accounts, identity: identity, accounts: accountsController, providers: openID,
                         limits: configuration.limits, clientAddress: clientAddress, publicURL: configuration.publicURL, logger: logger,
                         clock: clock) { url, fields in
            let body = Array(fields.map { "\(percentEncode($0))=\(percentEncode($1))" }.joined(separator: "&").utf8)
            let answer = try Curl.perform(url, method: "POST", headers: [("Content-Type", "application/x-www-form-urlencoded"), ("Accept", "application/json")],
                                          body: body, maximumBytes: 65_536, timeout: 10)
            return (answer.status, answer.body)
        }.addRoutes(to: router)
        PasskeysController(pages: pages, store: accounts, identity: identity, accounts: accountsController, party: party,
                           limits: configuration.limits, clientAddress: clientAddress, logger: logger, clock: clock).addRoutes(to: router)
        NotificationSettingsController(pages: pages, database: database, pushEnabled: push != nil, mailEnabled: mail != nil,
                                       clock: clock).addRoutes(to: router)
        DigestController(pages: pages, database: database, clock: clock).addRoutes(to: router)
        RainAlertsController(pages: pages, database: database, cities: cities, clock: clock).addRoutes(to: router)
        if let push {
            PushController(pages: pages, store: PushStore(database: database), sender: push, clock: clock).addRoutes(to: router)
        }
        if let mail {
            EmailController(pages: pages, store: accounts, hasher: hasher, mail: mail, limits: configuration.limits,
                            clientAddress: clientAddress, clock: clock).addRoutes(to: router)
            PasswordResetController(pages: pages, store: accounts, identity: identity, hasher: hasher, mail: mail,
                                    clientAddress: clientAddress, clock: clock).addRoutes(to: router)
        }
        RecoveryController(pages: pages, store: accounts, identity: identity, hasher: hasher, limits: configuration.limits,
                           clientAddress: clientAddress, party: party, clock: clock).addRoutes(to: router)
        return router
    }

    /// The quick lane: static files and the other addresses that never read the database
    /// (`Identity.anonymousPrefixes`); and, while the database has stopped answering
    /// (`AppDatabase.isStalled`) or the main lane is stalled (every worker held), a guest's pages that may be kept (`PageCache`: no
    /// session, no message, whatever headers the client sends), one that is not moving back to
    /// the main lane before it reads anything (`Lane.Moved`). Otherwise guests' pages keep the
    /// main lane's order: tried on the quick lane they slowed real traffic (docs/performance.md).
    static func lane(of request: Request, _ conditions: LaneConditions, databaseStalled: @autoclosure () -> Bool) -> Lane {
        if Identity.anonymousPrefixes.contains(where: { request.path.hasPrefix($0) }) { return .quick }
        let mayBeKept = (request.method == "GET" || request.method == "HEAD") && (request.path == "/" || request.path.hasPrefix("/city/"))
            && request.cookie(SessionStore.cookieName) == nil && request.cookie(Flash.cookieName) == nil
        return mayBeKept && (databaseStalled() || conditions.mainLaneStalled) ? .quick : .main
    }

    /// Starts serving; returns once the server accepts connections.
    public func start() throws {
        try server.start()
        boundPort.port = server.port
        mail?.start()
        push?.start()
        rainAlerts.start()
        warnings.start()
        openID.start()
        digests?.start()
        janitor.start()
    }

    /// The mail sender for `--smtp-url`, or nil without one; a relay without a sender address or
    /// the site's public address is refused at start (its links would point nowhere).
    static func makeMail(_ configuration: AppConfiguration, database: AppDatabase, pages: Pages, digest: DigestMail,
                         logger: Logger) throws -> MailSender? {
        guard let url = configuration.smtpURL else { return nil }
        guard let from = configuration.mailFrom.flatMap(MailAddress.init) else {
            throw Setting.Problem(description: "--smtp-url needs --mail-from (the address the site's mail comes from)")
        }
        guard let publicURL = configuration.publicURL else {
            throw Setting.Problem(description: "--smtp-url needs --public-url (the site's address, for the links in its mail)")
        }
        let relay = try SMTPRelay(parsing: url)
        logger.notice("mail: relay \(relay), from \(from.text), links to \(publicURL)")
        return MailSender(settings: .init(relay: relay, from: from, publicURL: publicURL, pollInterval: configuration.mailPollInterval,
                                          retryBase: configuration.mailRetryBase),
                          database: database, pages: pages,
                          composers: [.verify: AccountMail(), .reset: AccountMail(), .addressChanged: AccountMail(), .notice: NoticeMail(), .digest: digest],
                          clock: configuration.clock, logger: logger)
    }

    /// Serves until SIGINT or SIGTERM, then shuts down gracefully.
    public func run() throws {
        try start()
        server.shutDownOnSignals()
        server.wait()
        close()
    }

    /// After the server stopped: stops listening to other nodes and closes the database.
    public func close() {
        mail?.stop()
        push?.stop()
        rainAlerts.stop()
        warnings.stop()
        openID.stop()
        digests?.stop()
        janitor.stop()
        health.stop()
        live.stopTicking()
        changeFeed?.stop()
        otherWriters?.stop()
        do {
            try database.close()
        } catch {
            logger.error("closing the database: \(error)")
        }
    }
}
