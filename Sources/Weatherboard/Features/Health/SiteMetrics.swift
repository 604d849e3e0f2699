import CSystem
import Foundation
import HTTPServer
import Metrics
import Prometheus
import Synchronization

/// The operator's numbers, in Prometheus's text format at `/metrics`: requests by route and
/// status with their handling time, page-cache outcomes, the database pool's waits and
/// timeouts, upstream weather fetches by outcome, and what is open now (connections, streams,
/// buffered bytes, pooled connections, open breakers).
///
/// Features record through swift-metrics' API with this application's factory (never the
/// process-wide `MetricsSystem`, which can be bootstrapped once: tests run many applications in
/// one process); swift-prometheus keeps the values and writes the exposition.
public final class SiteMetrics: Sendable {
    private let registry = PrometheusCollectorRegistry()
    /// What features make their counters and timers with.
    public let factory: any MetricsFactory
    /// Counters whose totals are kept elsewhere (the kernel's CPU time, the server's refusals),
    /// moved on by what they gained since the last scrape.
    private let followed = Mutex<[(counter: Metrics.FloatingPointCounter, read: @Sendable () -> Double, last: Double)]>([])

    /// Every metric's `# HELP`, by name: one place, so that a metric without one is seen (a test
    /// reads the exposition) rather than scraped unexplained.
    static let help: [String: String] = [
        "weatherboard_http_request_duration_seconds": "Time to answer a request, by method, route (as registered) and status.",
        "weatherboard_page_cache_total": "Guests' pages: served from the cache (hit), rendered (miss), or waited for another request's render.",
        "weatherboard_weather_fetches_total": "Upstream weather fetches by provider and outcome (answered, unusable answer, failed).",
        "weatherboard_weather_breaker_open": "1 while a weather provider is skipped after failures (its circuit breaker is open).",
        "weatherboard_db_up": "1 while the database answers this node's check (every second while watched, as /healthz says), 0 while it does not.",
        "weatherboard_db_errors_total": "Database troubles that reached a request, by kind: connection, unavailable (busy, locked, timed out), full.",
        "weatherboard_db_pool_waits_total": "PostgreSQL: requests that waited for a free pooled connection.",
        "weatherboard_db_pool_timeouts_total": "PostgreSQL: requests that gave up waiting for a pooled connection (answered 503).",
        "weatherboard_db_connections_open": "PostgreSQL: connections the node's pool holds open now.",
        "weatherboard_db_statement_duration_seconds": "Time of each SQL statement, from the call to its last row read, by engine.",
        "weatherboard_change_feed_listening": "PostgreSQL: 1 while this node hears other nodes' changes (LISTEN); 0 means its cached pages may be stale.",
        "weatherboard_change_feed_silence_seconds": "PostgreSQL: seconds since the listening connection last answered (a notice or its 5-second keepalive).",
        "weatherboard_open_connections": "Client connections open now.",
        "weatherboard_open_streams": "Live event streams (a board's or a post's page) open now.",
        "weatherboard_buffered_bytes": "Bytes all connections' buffers hold now (unfinished requests, unread answers).",
        "weatherboard_refused_total": "Requests the server answered 503 itself, by cause: memory (buffers over --max-buffered-bytes), streams (past --max-streams or its per-client cap).",
        "weatherboard_workers": "Request worker threads.",
        "weatherboard_workers_busy": "Request workers running a handler now.",
        "weatherboard_workers_queued": "Requests waiting for a free worker now.",
        "weatherboard_quick_workers": "Threads of the quick lane (static files, guests' pages), beside the request workers.",
        "weatherboard_quick_workers_busy": "Quick-lane threads running a request now.",
        "weatherboard_quick_workers_queued": "Quick-lane requests waiting for a thread.",
        "weatherboard_workers_waited_total": "Requests that found every worker busy and waited in the queue.",
        "weatherboard_cache_bytes": "Bytes each in-memory cache holds now.",
        "weatherboard_cache_bytes_limit": "Bytes each in-memory cache may hold at most (its bound; docs/operations.md lists them).",
        "weatherboard_build_info": "Always 1; the labels say which build runs: version (the package's, or checkout), Swift, the newest migration it carries.",
        "process_cpu_seconds_total": "CPU time the process has used, user and system, in seconds.",
        "process_resident_memory_bytes": "Resident memory of the process, in bytes.",
        "weatherboard_heap_bytes": "The malloc heap: bytes in use (every cache's among them) and bytes held free, not yet given back.",
        "process_open_fds": "Open file descriptors.",
        "process_max_fds": "The most file descriptors the process may open (RLIMIT_NOFILE).",
        "process_start_time_seconds": "When the process started, in seconds since the Unix epoch.",
    ]
    /// One timer per method, route and status seen: a bounded set (routes are as registered,
    /// methods outside the few served are "other"), looked up once per request.
    private let requestTimers = Mutex<[RequestKey: Metrics.Timer]>([:])
    /// Values read when scraped (how many are open now), each with its gauge.
    private let sampled = Mutex<[(gauge: Metrics.Gauge, read: @Sendable () -> Double)]>([])

    private struct RequestKey: Hashable {
        let method: String
        let route: String
        let status: Int
    }

    public init() {
        factory = HelpfulFactory(registry: registry)
        sampleProcess()
    }

    /// Outermost middleware: times each request through every other and records its final status.
    func middleware(_ request: Request, _ context: AppContext, _ next: Router<AppContext>.Handler) throws -> Response {
        let started = DispatchTime.now().uptimeNanoseconds
        do {
            let response = try next(request, context)
            record(request, status: response.status.code, started: started)
            return response
        } catch let moved as Lane.Moved {
            throw moved // counted once, when the main lane answers
        } catch {
            record(request, status: (error as? HTTPError)?.status.code ?? 500, started: started)
            throw error
        }
    }

    private func record(_ request: Request, status: Int, started: UInt64) {
        let method = ["GET", "HEAD", "POST"].contains(request.method) ? request.method : "other"
        let key = RequestKey(method: method, route: request.route ?? "unmatched", status: status)
        let timer = requestTimers.withLock { timers in
            if let timer = timers[key] { return timer }
            let timer = Metrics.Timer(label: "weatherboard_http_request_duration_seconds",
                                      dimensions: [("method", key.method), ("route", key.route), ("status", String(key.status))],
                                      factory: factory)
            timers[key] = timer
            return timer
        }
        let elapsed = DispatchTime.now().uptimeNanoseconds &- started
        timer.recordNanoseconds(Int64(clamping: elapsed))
    }

    /// A gauge whose value is read when the metrics are scraped (cheaper than keeping it current).
    func sample(_ label: String, dimensions: [(String, String)] = [], _ read: @escaping @Sendable () -> Double) {
        let gauge = Metrics.Gauge(label: label, dimensions: dimensions, factory: factory)
        sampled.withLock { $0.append((gauge, read)) }
    }

    /// A counter whose total is kept elsewhere: at each scrape it gains what `read` gained.
    func follow(_ label: String, dimensions: [(String, String)] = [], _ read: @escaping @Sendable () -> Double) {
        let counter = Metrics.FloatingPointCounter(label: label, dimensions: dimensions, factory: factory)
        followed.withLock { $0.append((counter, read, 0)) }
    }

    /// The exposition, with the sampled gauges read now.
    public func exposition() -> [UInt8] {
        let gauges = sampled.withLock { $0 }
        for (gauge, read) in gauges { gauge.record(read()) }
        followed.withLock { counters in
            for index in counters.indices {
                let now = counters[index].read()
                if now > counters[index].last { counters[index].counter.increment(by: now - counters[index].last) }
                counters[index].last = max(now, counters[index].last)
            }
        }
        var bytes: [UInt8] = []
        registry.emit(into: &bytes)
        return bytes
    }
}

extension SiteMetrics {
    /// The process's own numbers, under the names Prometheus's client libraries use, read from
    /// the kernel at each scrape; and which build this is.
    private func sampleProcess() {
        follow("process_cpu_seconds_total") {
            var usage = rusage()
            getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
            let seconds = { (time: timeval) in Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
            return seconds(usage.ru_utime) + seconds(usage.ru_stime)
        }
        sample("process_resident_memory_bytes") {
            guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
            let pages = statm.split(separator: " ").dropFirst().first.flatMap { Double($0) } ?? 0
            return pages * Double(sysconf(Int32(_SC_PAGESIZE)))
        }
        sample("weatherboard_heap_bytes", dimensions: [("state", "in_use")]) { Double(Self.heapBytes().inUse) }
        sample("weatherboard_heap_bytes", dimensions: [("state", "free")]) { Double(Self.heapBytes().free) }
        sample("process_open_fds") { Double((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? 0) }
        sample("process_max_fds") {
            var limit = rlimit()
            getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
            return Double(limit.rlim_cur)
        }
        // The machine's boot, plus the process's start after it (now, if the kernel does not say).
        let boot = Date().timeIntervalSince1970 - ProcessInfo.processInfo.systemUptime
        let started = boot + (Self.startedAfterBoot() ?? ProcessInfo.processInfo.systemUptime)
        sample("process_start_time_seconds") { started }
        sample("weatherboard_build_info", dimensions: [("version", Self.version), ("swift", Self.swiftVersion),
                                                       ("migrations", Self.newestMigration)]) { 1 }
    }

    /// The malloc heap's bytes in use and held free (mallinfo2).
    static func heapBytes() -> (inUse: Int, free: Int) {
        var inUse = 0, free = 0
        csystem_heap_bytes(&inUse, &free)
        return (inUse, free)
    }

    /// Seconds from the machine's boot to this process's start (`/proc/self/stat`'s 22nd field).
    private static func startedAfterBoot() -> Double? {
        guard let stat = try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 19, let ticks = Double(fields[19]) else { return nil }
        return ticks / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// The package's version (`share/weatherboard/VERSION`, written by `scripts/package-deb.sh`),
    /// or "checkout".
    static let version: String = InstalledFiles.share
        .flatMap { try? String(contentsOfFile: $0 + "/VERSION", encoding: .utf8) }
        .map { $0.trimmingCharacters(in: .whitespacesAndNewlines) } ?? "checkout"

    static let swiftVersion: String = {
        #if compiler(>=6.3)
        "6.3"
        #elseif compiler(>=6.2)
        "6.2"
        #else
        "older"
        #endif
    }()

    static let newestMigration: String = (try? Migrations.files(in: InstalledFiles.folder("Migrations") + "/sqlite").last)
        .flatMap { $0.map(Migrations.identifier) } ?? "unknown"
}

/// swift-metrics' factory over swift-prometheus' registry, giving each metric its `# HELP` from
/// `SiteMetrics.help` (the registry's own factory writes none).
private struct HelpfulFactory: MetricsFactory {
    let registry: PrometheusCollectorRegistry
    private let plain: PrometheusMetricsFactory

    init(registry: PrometheusCollectorRegistry) {
        self.registry = registry
        plain = PrometheusMetricsFactory(registry: registry)
    }

    private func descriptor(_ label: String) -> MetricNameDescriptor {
        MetricNameDescriptor(metricName: label, unitName: "", helpText: SiteMetrics.help[label] ?? "")
    }

    func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler {
        registry.makeCounter(descriptor: descriptor(label), labels: dimensions)
    }

    func makeFloatingPointCounter(label: String, dimensions: [(String, String)]) -> any FloatingPointCounterHandler {
        registry.makeCounter(descriptor: descriptor(label), labels: dimensions)
    }

    func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        guard aggregate else { return registry.makeGauge(descriptor: descriptor(label), labels: dimensions) }
        return registry.makeValueHistogram(descriptor: descriptor(label), labels: dimensions, buckets: plain.defaultValueHistogramBuckets)
    }

    func makeMeter(label: String, dimensions: [(String, String)]) -> any MeterHandler {
        registry.makeGauge(descriptor: descriptor(label), labels: dimensions)
    }

    func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler {
        // Past the library's 10 s: a frozen database's statements and the requests behind them
        // (issue 62 #2) land in buckets of their own, not only in +Inf.
        registry.makeDurationHistogram(descriptor: descriptor(label), labels: dimensions,
                                       buckets: plain.defaultDurationHistogramBuckets + [.seconds(30), .seconds(60)])
    }

    func destroyCounter(_ handler: any CounterHandler) { plain.destroyCounter(handler) }
    func destroyFloatingPointCounter(_ handler: any FloatingPointCounterHandler) { plain.destroyFloatingPointCounter(handler) }
    func destroyRecorder(_ handler: any RecorderHandler) { plain.destroyRecorder(handler) }
    func destroyMeter(_ handler: any MeterHandler) { plain.destroyMeter(handler) }
    func destroyTimer(_ handler: any TimerHandler) { plain.destroyTimer(handler) }
}

/// `GET /metrics`, for the configured addresses only (default: this machine), answered on the
/// event loop (the server's immediate responder), so that a scrape reads the workers' saturation
/// while every worker is stuck. A request that came through a proxy is judged by the client the
/// proxy names, and one carrying `X-Forwarded-For` from a proxy not trusted is refused: nginx on
/// this machine connects from loopback, and its visitors must not read the metrics through it.
/// Refused requests go on to the router, and get the 404 any unknown address gets.
struct MetricsController {
    let metrics: SiteMetrics
    let allowed: Set<String>
    let clientAddress: ClientAddress

    func immediateResponse(to request: Request) -> Response? {
        guard request.path == "/metrics", request.method == "GET" || request.method == "HEAD", isAllowed(request) else { return nil }
        var response = Response(status: .ok, body: metrics.exposition())
        response.headers.set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
        response.headers.set("Cache-Control", "no-store")
        return response
    }

    func isAllowed(_ request: Request) -> Bool {
        let forwarded = request.headers["X-Forwarded-For"]
        let client: Substring
        if let forwarded {
            guard clientAddress.trustedProxies.contains(request.remoteAddress),
                  let last = forwarded.split(separator: ",").last else { return false }
            client = last
        } else {
            client = Substring(request.remoteAddress)
        }
        let address = client.trimmingCharacters(in: .whitespaces)
        // An IPv4 client on a dual-stack socket arrives as ::ffff:a.b.c.d.
        return allowed.contains(address.hasPrefix("::ffff:") ? String(address.dropFirst(7)) : address)
    }
}
