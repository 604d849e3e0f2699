import Foundation
import HTTPServer
import Logging
import Metrics
import Synchronization

/// What a page shows: a forecast and where it came from.
public struct WeatherReport: Sendable {
    public var forecast: Forecast
    /// The provider, or `cache` when every provider failed and older data is shown.
    public var source: String
}

/// Gets forecasts through a chain of providers with a cache in SQLite:
/// - fresh cache (younger than `freshFor`) is served as is;
/// - stale cache is served at once while one background refresh runs (stale-while-revalidate);
/// - with no cache, concurrent requests for a city share one upstream fetch (single-flight), and
///   wait for it at most `firstFetchBudget`; the page says the weather is not there yet otherwise;
/// - every upstream fetch runs on the service's own bounded executor, never on a request worker,
///   so a hanging provider holds none of them;
/// - a provider that fails is skipped for `breakerOpenFor` (circuit breaker) and the next is used;
///   an unusable answer for one city fails that city only, and does not open the breaker;
/// - data from a fallback provider is fresh for `fallbackFreshFor` only (demo figures for
///   `demoFreshFor`), so the preferred provider is asked again soon after it recovers;
/// - demo figures never replace a real forecast that can still be shown: a city keeps its last
///   real one, with its age, up to `maximumStaleAge`;
/// - errors are never cached; when every provider fails, the last cached data is shown, up to
///   `maximumStaleAge`: older data is not shown at all (the page waits for a fetch, bounded, or
///   says it has no weather), and an answer that lacks the days a page needs is a failure.
///
/// Each concern is a part of its own: `SingleFlight`, `CircuitBreakers`, `UpstreamBudget`,
/// `ForecastMemory`, `RefreshLeases`; this type composes them.
public final class WeatherService: Sendable {
    public let providers: [WeatherProvider]
    /// Asked beside every forecast fetch, the first that answers wins.
    let airQualityProviders: [AirQualityProvider]
    /// Asked once per city for its normals (`normalsWanted`); none: real forecasts show none.
    let normalsProvider: NormalsProvider?
    /// The cache table and the leases, shared by every node.
    let store: ForecastStore
    let freshFor: TimeInterval
    let clock: @Sendable () -> Date
    let logger: Logger

    /// How long a page waits for a city that has nothing cached.
    let firstFetchBudget: TimeInterval
    /// How many decoded forecasts are kept in memory, and how many bytes they may hold there
    /// (`Forecast.residentBytes`: about 40 KB each with ten days of hours, so 112 MiB hold the
    /// 2,500 that their count allows).
    public struct MemoryLimit: Sendable {
        public var forecasts: Int
        public var bytes: Int
        public init(forecasts: Int = 2_500, bytes: Int = 112 << 20) {
            self.forecasts = forecasts
            self.bytes = bytes
        }
    }

    /// How fast upstream may be asked, in all and per client. Open-Meteo's free tier allows 600
    /// calls a minute, 5,000 an hour and 10,000 a day; one guest crawling cold cities once made
    /// 1,527 fetches in 24 s, after which the breaker sent every visitor to fallback data, and a
    /// hundred addresses each within a client's share could still spend the day's quota in half
    /// an hour.
    public struct FetchBudget: Sendable {
        /// Fetches a minute for the whole node (refreshes included); past it, a cold city's page
        /// says its weather is not there yet and stale data is served a little longer.
        public var perMinute: Int
        /// Fetches for cities with nothing cached that one client may cause in `clientWindow`;
        /// past it, that client sees "no data yet" for cold cities (cached ones as always).
        public var coldPerClient: Int
        public var clientWindow: TimeInterval
        /// Fetches for cities with nothing cached that the node may make in an hour, all clients
        /// together: what crawlers can take from the provider's hourly and daily quota, leaving
        /// the rest for refreshing the cities people read.
        public var coldPerHour: Int
        /// Cities whose normals (`ClimateNormals`) may be fetched in an hour. Each is thirty
        /// years of days, which Open-Meteo counts as many calls; each also takes one of the
        /// minute's fetches.
        public var normalsPerHour: Int
        public init(perMinute: Int = 300, coldPerClient: Int = 60, clientWindow: TimeInterval = 3600, coldPerHour: Int = 1_000,
                    normalsPerHour: Int = 2) {
            self.perMinute = perMinute
            self.coldPerClient = coldPerClient
            self.clientWindow = clientWindow
            self.coldPerHour = coldPerHour
            self.normalsPerHour = normalsPerHour
        }
    }

    /// Threads fetching from providers, off the request path.
    public static let fetchThreads = 4
    /// Upstream fetches one request may start (the home page's list, a long bookmark cookie).
    static let fetchesPerRequest = 5
    private let fetches: ThreadPool
    private let flights = SingleFlight<Int64, Forecast>()
    private let breakers: CircuitBreakers
    private let unusableAnswers = UnusableAnswers()
    let budget: UpstreamBudget
    private let memory: ForecastMemory
    private let leases: RefreshLeases
    /// Cities whose last refresh found every provider failing (their stale data says "cache").
    private let lastRefreshFailed = Mutex<Set<Int64>>([])
    /// Upstream fetches by provider and outcome, for the operator: a usable answer, an answer
    /// refused as implausible (that city only), a failure (the breaker opens).
    private struct FetchOutcomes { let answered, unusable, failed: Counter }
    private let fetchOutcomes: [String: FetchOutcomes]

    public init(providers: [WeatherProvider], airQualityProviders: [AirQualityProvider] = [], normalsProvider: NormalsProvider? = nil,
                database: AppDatabase, freshFor: TimeInterval = 1800,
                breakerOpenFor: TimeInterval = 60, firstFetchBudget: TimeInterval = 0.3, fetchThreads: Int = WeatherService.fetchThreads,
                memoryLimit: MemoryLimit = MemoryLimit(), budget: FetchBudget = FetchBudget(),
                logger: Logger = Logger(label: "weather"), clock: @escaping @Sendable () -> Date = { Date() },
                metrics: any MetricsFactory = NOOPMetricsHandler.instance) {
        self.providers = providers
        self.airQualityProviders = airQualityProviders
        self.normalsProvider = normalsProvider
        // The air's providers count under `air-quality/<id>`, beside the forecasts'; normals under theirs.
        let counted = providers.map(\.id) + airQualityProviders.map { Self.airKey($0.id) } + (normalsProvider.map { [$0.id] } ?? [])
        fetchOutcomes = Dictionary(counted.map { id in
            let outcome = { Counter(label: "weatherboard_weather_fetches_total", dimensions: [("provider", id), ("outcome", $0)],
                                    factory: metrics) }
            return (id, FetchOutcomes(answered: outcome("answered"), unusable: outcome("unusable"), failed: outcome("failed")))
        }, uniquingKeysWith: { first, _ in first })
        self.budget = UpstreamBudget(budget, now: clock())
        memory = ForecastMemory(memoryLimit)
        breakers = CircuitBreakers(openFor: breakerOpenFor, logger: logger)
        self.firstFetchBudget = firstFetchBudget
        fetches = ThreadPool(name: "weather-fetch", threads: fetchThreads, stackSize: 512 * 1024, queueLimit: 256)
        store = ForecastStore(database: database)
        leases = RefreshLeases(store: store, logger: logger)
        self.freshFor = freshFor
        self.logger = logger
        self.clock = clock
    }

    /// Whether `provider` is being skipped after a failure now (its circuit breaker is open).
    func isBreakerOpen(_ provider: String) -> Bool {
        breakers.isOpen(provider, at: clock())
    }

    /// How long data from a fallback provider (demo, when Open-Meteo failed) is served before the
    /// preferred provider is asked again.
    public static let fallbackFreshFor: TimeInterval = 5 * 60
    /// How long demo figures are served before the real providers are asked again: about one
    /// breaker's window, so that a recovered upstream replaces them within a minute or so of the
    /// next visit. While the real ones still fail, demo figures made within `fallbackFreshFor`
    /// are kept rather than made and stored again.
    public static let demoFreshFor: TimeInterval = 60

    /// Cached data older than this is not shown, however the providers are doing.
    public static let maximumStaleAge: TimeInterval = 24 * 3600

    /// The forecast to show for `city`, or nil when nothing is cached and no provider answered
    /// within the budget (the fetch goes on in the background and fills the cache), or `client`
    /// (a `ClientKey`) has caused its share of cold fetches, or the node its fetches a minute.
    public func report(for city: City, client: String? = nil) -> WeatherReport? {
        if let cached = cachedReport(for: city) { return cached }
        if let client, !admitColdFetch(by: client, city: city) { return nil }
        let flight = startFetch(city)
        return flight?.wait(until: Date().addingTimeInterval(firstFetchBudget)).map { WeatherReport(forecast: $0, source: $0.source) }
    }

    /// The forecast kept for `city`, if any and not too old to show; never asks upstream (a page
    /// of many cities, such as the map, shows no number rather than fetch per city).
    public func kept(for city: City) -> Forecast? {
        guard let cached = cachedForecast(city), clock().timeIntervalSince(cached.fetchedAt) <= Self.maximumStaleAge else { return nil }
        return cached
    }

    /// Whether a fetch for `city` is under way: a forecast is stored before its fetch lands, and
    /// a request in between joins that fetch rather than starting another (tests that move their
    /// clock wait for the landing).
    func isFetching(_ city: City) -> Bool { flights.isInFlight(city.id) }

    /// What the cache can answer at once: fresh data, or stale data while a refresh starts.
    private func cachedReport(for city: City) -> WeatherReport? {
        guard let cached = cachedForecast(city) else { return nil }
        if clock().timeIntervalSince(cached.fetchedAt) > Self.maximumStaleAge { return nil }
        if isFresh(cached, for: city) { return WeatherReport(forecast: cached, source: cached.source) }
        startFetch(city)
        let failed = lastRefreshFailed.withLock { $0.contains(city.id) }
        return WeatherReport(forecast: cached, source: failed ? "cache" : cached.source)
    }

    /// Served without asking upstream: the preferred provider's data for `freshFor`, a fallback's
    /// for `fallbackFreshFor`.
    private func isFresh(_ forecast: Forecast, for city: City) -> Bool {
        let preferred = providers.first { $0.covers(city) }?.id
        let freshness = forecast.source == preferred ? freshFor : isDemo(forecast) ? Self.demoFreshFor : Self.fallbackFreshFor
        return clock().timeIntervalSince(forecast.fetchedAt) < freshness
    }

    private func isDemo(_ forecast: Forecast) -> Bool {
        providers.first { $0.id == forecast.source }?.isDemo ?? false
    }

    /// Reports for several cities: cached ones at once; for the others at most
    /// `fetchesPerRequest` fetches start, and the answer waits for them together at most
    /// `firstFetchBudget`.
    public func reports(for cities: [City]) -> [WeatherReport?] {
        var results = cities.map(cachedReport(for:))
        let missing = results.indices.filter { results[$0] == nil }.prefix(Self.fetchesPerRequest)
        let flights = missing.map { ($0, startFetch(cities[$0])) }
        let deadline = Date().addingTimeInterval(firstFetchBudget)
        for (index, flight) in flights {
            results[index] = flight?.wait(until: deadline).map { WeatherReport(forecast: $0, source: $0.source) }
        }
        return results
    }

    // MARK: - Budgets

    /// Counts a cold fetch against `client`'s share; false past it. Joining a fetch already in
    /// flight costs nothing.
    private func admitColdFetch(by client: String, city: City) -> Bool {
        flights.isInFlight(city.id) || budget.admitColdFetch(by: client, at: clock())
    }

    // MARK: - Upstream

    /// Joins the fetch in progress for the city, or queues one on the fetch executor; nil when
    /// the executor's queue is full.
    @discardableResult
    private func startFetch(_ city: City) -> Pending<Forecast>? {
        let now = clock()
        guard let (flight, isLeader) = flights.join(city.id, admit: { budget.takeFetch(at: now) }) else {
            logger.debug("weather fetches for this minute spent; \(city.slug) not fetched")
            return nil
        }
        guard isLeader else { return flight }
        let queued = fetches.submit {
            self.flights.land(city.id, with: self.fetchThroughChain(city))
        }
        if !queued {
            flights.land(city.id, with: nil)
            logger.warning("weather fetch queue full; \(city.slug) not fetched")
            return nil
        }
        return flight
    }

    private func fetchThroughChain(_ city: City) -> Forecast? {
        // Nodes share the cache table: another node may have refreshed the city meanwhile, or be
        // refreshing it now (then its answer is awaited rather than asked for again).
        let stored = newestStoredForecast(city)
        if let stored, isFresh(stored, for: city) { return stored }
        guard leases.claim(city, now: clock()) else {
            return leases.awaitHolder(city, newerThan: stored?.fetchedAt) { storedForecast(city) }
        }
        defer { leases.release(city) }
        // The air is asked at the same time as the forecast, from its own service, and only when
        // the values stored are an hour old: particulates are modelled hourly, and a forecast may
        // be refreshed far more often (every minute, on a busy site told so).
        let air = Pending<Forecast.AirQuality>()
        let airAsked = clock()
        if let recent = stored?.airQuality, airAsked.timeIntervalSince(recent.fetchedAt) < Self.airQualityRefreshEvery {
            air.finish(recent)
        } else if airQualityProviders.isEmpty {
            air.finish(nil)
        } else {
            // A thread of its own, asleep in the kernel while the air's service answers.
            Thread { air.finish(self.fetchAirQuality(city, now: airAsked)) }.start()
        }
        for provider in providers where provider.covers(city) {
            let now = clock()
            if breakers.isOpen(provider.id, at: now) { continue }
            if unusableAnswers.backedOff(provider.id, city: city.id, at: now) != nil { continue }
            if provider.isDemo, let stored {
                let age = now.timeIntervalSince(stored.fetchedAt)
                // Real figures, stale but within the limit, before made-up ones.
                if !isDemo(stored) && age <= Self.maximumStaleAge { break }
                if isDemo(stored) && age < Self.fallbackFreshFor {
                    lastRefreshFailed.withLock { _ = $0.remove(city.id) }
                    return stored
                }
            }
            do {
                let asked = Date()
                var forecast = try provider.forecast(for: city, now: now).checked()
                let took = Date().timeIntervalSince(asked)
                if let problem = forecast.problem(for: city, now: now) { throw UpstreamError.answer("\(provider.id): \(problem)") }
                // A failed air-quality fetch keeps the last values for a while; they show their age.
                forecast.airQuality = air.wait(until: Date().addingTimeInterval(Self.airQualityWait))
                    ?? stored?.airQuality.flatMap { now.timeIntervalSince($0.fetchedAt) < Self.airQualityKeptFor ? $0 : nil }
                store(forecast, for: city)
                fetchOutcomes[provider.id]?.answered.increment()
                unusableAnswers.usable(provider.id, city: city.id)
                if took > Self.slowAnswer {
                    // Used, but the next pages do not wait on a provider this slow for a while.
                    logger.warning("weather provider \(provider.id) took \(WeatherNumbers.oneDecimal(took)) s for \(city.slug): skipped for a while")
                    breakers.trip(provider.id, at: clock())
                } else {
                    breakers.reset(provider.id)
                }
                lastRefreshFailed.withLock { _ = $0.remove(city.id) }
                return forecast
            } catch {
                // One place's bad answer says nothing about the others: only a failing provider
                // is skipped for a while, and only that city is not asked of it for a while.
                let aboutTheAnswer = (error as? UpstreamError)?.isAboutTheAnswer == true
                (aboutTheAnswer ? fetchOutcomes[provider.id]?.unusable : fetchOutcomes[provider.id]?.failed)?.increment()
                if aboutTheAnswer {
                    let until = unusableAnswers.unusable(provider.id, city: city.id, at: clock())
                    logger.warning("weather provider \(provider.id) failed for \(city.slug), its answer unusable (\(LogText.oneLine(error))); asked again at \(DateFormatting.iso8601(until))")
                } else {
                    logger.warning("weather provider \(provider.id) failed for \(city.slug): \(LogText.oneLine(error))")
                    breakers.trip(provider.id, at: clock())
                }
            }
        }
        lastRefreshFailed.withLock { _ = $0.insert(city.id) }
        return nil
    }

    /// An answer slower than this is used, and opens the provider's breaker as a failure would.
    static let slowAnswer: TimeInterval = 2

    // MARK: - Air quality

    /// How long a forecast that has arrived waits for the air's values (their fetch started with it).
    static let airQualityWait: TimeInterval = 4
    /// Air-quality values younger than this are kept with a refreshed forecast, not asked again.
    static let airQualityRefreshEvery: TimeInterval = 3600
    /// How long the last air-quality values are shown when their service stops answering.
    static let airQualityKeptFor: TimeInterval = 6 * 3600

    static func airKey(_ id: String) -> String { "air-quality/" + id }

    /// The first usable answer of the air-quality providers whose breakers are closed, or nil.
    private func fetchAirQuality(_ city: City, now: Date) -> Forecast.AirQuality? {
        for provider in airQualityProviders {
            let key = Self.airKey(provider.id)
            if breakers.isOpen(key, at: clock()) { continue }
            do {
                let values = try provider.airQuality(for: city, now: now)
                fetchOutcomes[key]?.answered.increment()
                breakers.reset(key)
                return values
            } catch {
                logger.warning("air-quality provider \(provider.id) failed for \(city.slug): \(LogText.oneLine(error))")
                let aboutTheAnswer = (error as? UpstreamError)?.isAboutTheAnswer == true
                (aboutTheAnswer ? fetchOutcomes[key]?.unusable : fetchOutcomes[key]?.failed)?.increment()
                if !aboutTheAnswer { breakers.trip(key, at: clock()) }
            }
        }
        return nil
    }

    // MARK: - Normals

    /// Cities whose normals are being fetched, and when each city's last fetch failed.
    private struct NormalsState {
        var fetching: Set<Int64> = []
        var failedAt = LRUCache<Int64, Date>(maximumCount: 10_000, maximumCost: 10_000)
    }
    private let normalsState = Mutex(NormalsState())
    /// A city whose normals could not be fetched is asked again after this.
    static let normalsRetryAfter: TimeInterval = 6 * 3600

    /// The normal of `date` for a city shown with `report`: the demo's own beside demo figures;
    /// otherwise the kept one, read by the caller (`kept`). When none is kept, one fetch for the
    /// city starts in the background (one at a time on the node, within the budget), and the
    /// page says nothing of the normal until it lands.
    func normal(of date: String, for city: City, report: WeatherReport, kept: ClimateNormals.Day?) -> ClimateNormals.Day? {
        if let demo = providers.first(where: { $0.id == report.forecast.source && $0.isDemo }) as? DemoProvider {
            return demo.normal(city, date: date, now: clock())
        }
        if kept == nil { normalsWanted(city) }
        return kept
    }

    /// Starts fetching the city's normals unless a fetch runs, it failed lately, or the hour's
    /// or the minute's budget is spent.
    func normalsWanted(_ city: City) {
        guard let provider = normalsProvider else { return }
        let now = clock()
        let admitted = normalsState.withLock { state -> Bool in
            guard state.fetching.isEmpty else { return false }
            if let failed = state.failedAt.value(for: city.id), now.timeIntervalSince(failed) < Self.normalsRetryAfter { return false }
            guard !breakers.isOpen(provider.id, at: now), budget.takeNormals(at: now) else { return false }
            state.fetching.insert(city.id)
            return true
        }
        guard admitted else { return }
        let queued = fetches.submit { self.fetchNormals(city, from: provider) }
        if !queued { normalsState.withLock { _ = $0.fetching.remove(city.id) } }
    }

    /// Whether a fetch of normals is under way (tests wait for it to land).
    var isFetchingNormals: Bool { normalsState.withLock { !$0.fetching.isEmpty } }

    private func fetchNormals(_ city: City, from provider: NormalsProvider) {
        var failed = false
        defer {
            let now = clock()
            normalsState.withLock { state in
                state.fetching.remove(city.id)
                if failed { state.failedAt.set(now, for: city.id, cost: 1) }
            }
        }
        do {
            // Another node may have kept them meanwhile.
            if try store.database.readStatement({ try ClimateNormals.isKept(cityID: city.id, $0) }) { return }
            let normals = try provider.normals(for: city, now: clock())
            try store.database.write(.cluster) { try ClimateNormals.store(normals, cityID: city.id, $0) }  // a city's normals, once
            fetchOutcomes[provider.id]?.answered.increment()
            breakers.reset(provider.id)
        } catch {
            failed = true
            logger.warning("normals provider \(provider.id) failed for \(city.slug): \(LogText.oneLine(error))")
            let aboutTheAnswer = (error as? UpstreamError)?.isAboutTheAnswer == true
            (aboutTheAnswer ? fetchOutcomes[provider.id]?.unusable : fetchOutcomes[provider.id]?.failed)?.increment()
            if !aboutTheAnswer && !(error is SQLError) { breakers.trip(provider.id, at: clock()) }
        }
    }

    // MARK: - Cache

    private func cachedForecast(_ city: City) -> Forecast? {
        if let forecast = memory.forecast(cityID: city.id) { return forecast }
        return storedForecast(city)
    }

    /// Forecasts read back from the database and decoded (tests count them).
    let decodedFromStore = Atomic<Int>(0)

    /// The newest forecast in the database: the one in memory when it is that one (decoding a
    /// forecast's JSON again at every refresh was a quarter of a busy node's time when forecasts
    /// refresh every minute), read and decoded otherwise.
    private func newestStoredForecast(_ city: City) -> Forecast? {
        if let kept = memory.forecast(cityID: city.id),
           let newest = try? store.newestStamp(cityID: city.id),
           newest.provider == kept.source, abs(newest.fetchedAt.timeIntervalSince(kept.fetchedAt)) < 0.001 {
            return kept
        }
        return storedForecast(city)
    }

    /// The newest forecast in the database (kept in memory from then on). A row that does not
    /// decode or holds implausible values (`Forecast.checked`) is deleted, never shown: the city
    /// is then fetched as if nothing were cached.
    private func storedForecast(_ city: City) -> Forecast? {
        let stored: (provider: String, payload: String)?
        do {
            stored = try store.newest(cityID: city.id)
        } catch {
            // Said, not swallowed: the city is fetched again as if nothing were cached.
            logger.error("could not read the cached forecast for \(city.slug): \(error)")
            return nil
        }
        guard let row = stored else { return nil }
        do {
            decodedFromStore.add(1, ordering: .relaxed)
            let forecast = try Self.decoder.decode(Forecast.self, from: Data(row.payload.utf8)).checked()
            memory.remember(forecast, cityID: city.id)
            return forecast
        } catch {
            logger.warning("cached forecast for \(city.slug) from \(row.provider) discarded: \(LogText.oneLine(error))")
            do {
                try store.discard(cityID: city.id, provider: row.provider)
            } catch {
                logger.error("could not discard the unreadable forecast for \(city.slug): \(error)")
            }
            return nil
        }
    }

    /// Drops the city's decoded forecast: another node stored a newer one.
    func forget(cityID: Int64) { memory.forget(cityID: cityID) }

    /// Drops every decoded forecast (the database has the newest).
    func forgetAll() { memory.forgetAll() }

    /// Decoded forecasts held in memory now (tests read it).
    var forecastsInMemory: (count: Int, bytes: Int) { memory.usage }

    private func store(_ forecast: Forecast, for city: City) {
        let data: Data
        do {
            data = try Self.encoder.encode(forecast)
        } catch {
            logger.error("could not encode the forecast for \(city.slug); it is not kept: \(error)")
            return
        }
        memory.remember(forecast, cityID: city.id)
        do {
            try store.save(forecast, for: city, payload: String(decoding: data, as: UTF8.self))
        } catch {
            // Pages show it from memory once their cached copies age out; other nodes fetch their own.
            logger.error("could not cache the forecast for \(city.slug): \(error)")
        }
    }

    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        return encoder
    }()
    private static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        return decoder
    }()
}
