import Foundation
import HTTPServer
import Synchronization

/// `GET /healthz`: 200 only when the database answers, and an answer within about a second and a
/// half whatever the database does.
///
/// A balancer asks every few seconds. While it does, a monitor thread checks the database every
/// second and `/healthz` is answered from its latest verdict on the event loop, so the answer
/// never queues behind request workers that are all waiting on a frozen database. When nobody has
/// asked for a minute the monitor stops (an unwatched node sends the database nothing), and the
/// first question after that is answered by a check of its own on a worker.
final class HealthController: Sendable {
    let database: AppDatabase
    private struct State {
        var healthy = false
        /// When the verdict was reached (DispatchTime nanoseconds); 0: never.
        var checkedAt: UInt64 = 0
        var askedAt: UInt64 = 0
        var monitoring = false
        var stopped = false
    }
    private let state = Mutex(State())
    /// A verdict older than this is not given on the event loop.
    static let verdictLifetime: UInt64 = 3_000_000_000
    /// The monitor stops after this long without a question.
    static let monitorIdle: UInt64 = 60_000_000_000

    init(database: AppDatabase) {
        self.database = database
    }

    func addRoutes(to router: Router<AppContext>) {
        router.get("/healthz") { [self] _, _ in response(healthy: check()) }
    }

    /// For the server's immediate responder: the answer from a recent verdict, or nil (the route
    /// above then checks on a worker).
    func immediateResponse(to request: Request) -> Response? {
        guard request.path == "/healthz", request.method == "GET" || request.method == "HEAD" else { return nil }
        return recentVerdict().map(response(healthy:))
    }

    /// `weatherboard_db_up`: 1 or 0 by the latest verdict. A scrape asks as a balancer does (the
    /// monitor runs while someone watches); before its first verdict, whether the database has
    /// stopped answering requests (`AppDatabase.isStalled`).
    func scrapedVerdict() -> Double {
        (recentVerdict() ?? !database.isStalled) ? 1 : 0
    }

    /// The latest verdict if recent, the monitor started if nobody had asked for a while.
    private func recentVerdict() -> Bool? {
        let now = DispatchTime.now().uptimeNanoseconds
        let (verdict, startMonitor) = state.withLock { state -> (Bool?, Bool) in
            state.askedAt = now
            let start = !state.monitoring && !state.stopped
            if start { state.monitoring = true }
            let fresh = state.checkedAt != 0 && now &- state.checkedAt < Self.verdictLifetime
            return (fresh ? state.healthy : nil, start)
        }
        if startMonitor {
            let thread = Thread { [self] in monitor() }
            thread.name = "health-monitor"
            thread.start()
        }
        return verdict
    }

    /// Stops the monitor (when the application closes).
    func stop() {
        state.withLock { $0.stopped = true }
    }

    private func check() -> Bool {
        let healthy = database.isHealthy()
        state.withLock {
            $0.healthy = healthy
            $0.checkedAt = DispatchTime.now().uptimeNanoseconds
        }
        return healthy
    }

    private func monitor() {
        while true {
            let keepGoing = state.withLock { state -> Bool in
                let asked = DispatchTime.now().uptimeNanoseconds &- state.askedAt < Self.monitorIdle
                if !asked || state.stopped { state.monitoring = false }
                return state.monitoring
            }
            guard keepGoing else { return }
            _ = check()
            Thread.sleep(forTimeInterval: 1)
        }
    }

    private func response(healthy: Bool) -> Response {
        var response = healthy ? Response.text("ok") : Response.text("database unavailable\n", status: .serviceUnavailable)
        response.headers.set("Cache-Control", "no-store")
        if let lanes = lanes.withLock({ $0 }) { response.headers.set("Lanes", lanes()) }
        return response
    }

    /// Each lane's state for the `Lanes` header ("main=degraded quick=ok"), once the server runs.
    let lanes = Mutex<(@Sendable () -> String)?>(nil)

    /// A lane is degraded when every one of its workers is busy and requests wait.
    static func lanes(main: (threads: Int, busy: Int, queued: Int, waitedTotal: Int),
                      quick: (threads: Int, busy: Int, queued: Int, waitedTotal: Int)?) -> String {
        let state = { (lane: (threads: Int, busy: Int, queued: Int, waitedTotal: Int)) in
            lane.busy >= lane.threads && lane.queued > 0 ? "degraded" : "ok"
        }
        return "main=\(state(main))" + (quick.map { " quick=\(state($0))" } ?? "")
    }
}
