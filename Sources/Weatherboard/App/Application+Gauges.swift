import Foundation
import HTTPServer

extension Application {
    /// The caches the application itself keeps, beside the features' own (`Site.holds`).
    static func holdCaches(_ site: Site, pageCache: PageCache, weather: WeatherService, forecastBytes: Int, compression: ResponseCompression) {
        let stretches = site.pages.renderer.sharedStretches, database = site.database
        site.holds("pages", upTo: pageCache.byteBound) { pageCache.keptBytes }
        site.holds("shared_stretches", upTo: stretches.byteBound) { stretches.keptBytes }
        site.holds("forecasts", upTo: forecastBytes) { weather.forecastsInMemory.bytes }
        site.holds("compressed_files", upTo: compression.byteBound) { compression.keptBytes }
        site.holds("sqlite", upTo: nil) { database.engineMemoryBytes } // SQLite's page caches: 2 MiB a connection
    }

    /// What is open now, read when `/metrics` is scraped.
    func sampleGauges(providers: [String]) {
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
        for cache in site.caches {
            metrics.sample("weatherboard_cache_bytes", dimensions: [("cache", cache.name)]) { Double(cache.held()) }
            if let bound = cache.bound { metrics.sample("weatherboard_cache_bytes_limit", dimensions: [("cache", cache.name)]) { Double(bound) } }
        }
        if database.openConnections != nil {
            metrics.sample("weatherboard_db_connections_open") { [database] in Double(database.openConnections ?? 0) }
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
}
