import HTTPServer

/// `GET /healthz`: 200 only when the database answers.
struct HealthController {
    let database: AppDatabase

    func addRoutes(to router: Router<AppContext>) {
        router.get("/healthz") { _, _ in
            database.isHealthy() ? .text("ok") : .text("database unavailable\n", status: .serviceUnavailable)
        }
    }
}
