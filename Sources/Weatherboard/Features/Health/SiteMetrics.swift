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
        factory = PrometheusMetricsFactory(registry: registry)
    }

    /// Outermost middleware: times each request through every other and records its final status.
    func middleware(_ request: Request, _ context: AppContext, _ next: Router<AppContext>.Handler) throws -> Response {
        let started = DispatchTime.now().uptimeNanoseconds
        do {
            let response = try next(request, context)
            record(request, status: response.status.code, started: started)
            return response
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

    /// The exposition, with the sampled gauges read now.
    public func exposition() -> [UInt8] {
        let gauges = sampled.withLock { $0 }
        for (gauge, read) in gauges { gauge.record(read()) }
        var bytes: [UInt8] = []
        registry.emit(into: &bytes)
        return bytes
    }
}

/// `GET /metrics`, for the configured addresses only (default: this machine). A request that
/// came through a proxy is judged by the client the proxy names, and one carrying
/// `X-Forwarded-For` from a proxy not trusted is refused: nginx on this machine connects from
/// loopback, and its visitors must not read the metrics through it. Refused requests get the
/// 404 any unknown address gets.
struct MetricsController {
    let metrics: SiteMetrics
    let allowed: Set<String>
    let clientAddress: ClientAddress

    func addRoutes(to router: Router<AppContext>) {
        router.get("/metrics") { request, _ in
            guard isAllowed(request) else { throw HTTPError(.notFound) }
            var response = Response(status: .ok, body: metrics.exposition())
            response.headers.set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
            response.headers.set("Cache-Control", "no-store")
            return response
        }
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
