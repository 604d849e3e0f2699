import Foundation
import HTTPServer
import HTTPTestSupport
import Testing
@testable import Weatherboard

/// Issue 27 #7: `/metrics` in Prometheus's text format, for the configured addresses only.
@Suite(.serialized, .onEveryEngine) struct MetricsTests {
    /// The value of one sample line (`name{labels} value`), nil when absent.
    private func value(_ exposition: String, _ sample: String) -> Double? {
        for line in exposition.split(separator: "\n") where line.hasPrefix(sample + " ") {
            return Double(line.dropFirst(sample.count + 1))
        }
        return nil
    }

    @Test func requestsCacheAndWhatIsOpenAreCountedForTheOperator() throws {
        let app = try AppHarness()
        let before = try app.get("/metrics")
        #expect(before.status == 200)
        #expect(before.headers["Content-Type"]?.hasPrefix("text/plain; version=0.0.4") == true)
        let route = #"weatherboard_http_request_duration_seconds_count{method="GET",route="/city/{slug}",status="200"}"#
        let counted = value(before.text, route) ?? 0
        for _ in 0..<3 { #expect(try app.get("/city/seoul").status == 200) }
        #expect(try app.get("/no/such/page").status == 404)
        let after = try app.get("/metrics", overSocket: true).text // a scrape with a connection of its own
        #expect(value(after, route) == counted + 3, "three city pages counted under their route")
        #expect(value(after, #"weatherboard_http_request_duration_seconds_count{method="GET",route="unmatched",status="404"}"#) ?? 0 >= 1)
        // The first render may be without its forecast, which then replaces it: at least one kept page served.
        let hits = value(after, #"weatherboard_page_cache_total{outcome="hit"}"#) ?? 0
        let misses = value(after, #"weatherboard_page_cache_total{outcome="miss"}"#) ?? 0
        #expect(hits >= 1 && misses >= 1 && hits + misses >= 3)
        #expect(value(after, "weatherboard_open_connections") ?? 0 >= 1, "the scrape's own connection")
        #expect(value(after, "weatherboard_open_streams") == 0)
        #expect(value(after, #"weatherboard_weather_breaker_open{provider="demo"}"#) == 0)
        #expect(value(after, #"weatherboard_weather_fetches_total{provider="demo",outcome="answered"}"#) ?? 0 >= 1)
        if app.engine == .postgres {
            #expect(value(after, "weatherboard_db_connections_open") ?? 0 >= 1)
            #expect(value(after, "weatherboard_db_pool_timeouts_total") == 0)
        }
    }

    /// Issue 37 #4: every metric says what it is (`# HELP`), and Prometheus's own checker accepts
    /// the exposition; the operator's new numbers are there: workers, caches, the process, the build.
    @Test func everyMetricIsExplainedAndPromtoolAcceptsThem() throws {
        let app = try AppHarness()
        let writer = app.browser()
        try writer.signUp("writer")
        try writer.postOnBoard("seoul", "Drizzle")
        for _ in 0..<2 { _ = try app.get("/city/seoul") }
        let text = try app.get("/metrics", overSocket: true).text
        let typed = text.split(separator: "\n").filter { $0.hasPrefix("# TYPE ") }.map { String($0.split(separator: " ")[2]) }
        let explained = Set(text.split(separator: "\n").filter { $0.hasPrefix("# HELP ") }.map { String($0.split(separator: " ")[2]) })
        #expect(!typed.isEmpty)
        for name in typed { #expect(explained.contains(name), "\(name) has no # HELP") }
        for name in ["weatherboard_workers", "weatherboard_workers_busy", "weatherboard_workers_queued", "weatherboard_workers_waited_total",
                     "weatherboard_db_statement_duration_seconds", "weatherboard_cache_bytes", "weatherboard_refused_total",
                     "process_cpu_seconds_total", "process_resident_memory_bytes", "process_open_fds", "process_max_fds",
                     "process_start_time_seconds", "weatherboard_build_info"] + (app.engine == .postgres ? ["weatherboard_change_feed_listening"] : []) {
            #expect(typed.contains(name), "\(name) is exposed")
        }
        #expect(value(text, #"weatherboard_workers"#) == Double(app.application.configuration.server.workerThreads))
        #expect((value(text, "process_resident_memory_bytes") ?? 0) > 1_000_000)
        #expect((value(text, #"weatherboard_cache_bytes{cache="pages"}"#) ?? 0) > 0, "the guest's page is kept")
        // Issue 62 #2: durations have buckets past 10 s (a frozen database's statements).
        let bounds = text.split(separator: "\n").filter { $0.hasPrefix("weatherboard_db_statement_duration_seconds_bucket") }
            .compactMap { line in line.firstMatch(of: /le="([0-9.e+]+)"/).flatMap { Double($0.output.1) } }
        #expect(bounds.contains { $0 >= 30 } && bounds.contains(60), "statement buckets: \(Set(bounds).sorted())")
        if app.engine == .postgres {
            try waitUntil("the change feed listens") {
                value(try app.get("/metrics", overSocket: true).text, "weatherboard_change_feed_listening") == 1
            }
        }

        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/promtool") else {
            #expect(ProcessInfo.processInfo.environment["WEATHERBOARD_REQUIRE_PROMTOOL"] != "1", "promtool is required (apt-get install prometheus)")
            return
        }
        let file = app.folder + "/exposition.txt"
        try Data(text.utf8).write(to: URL(fileURLWithPath: file))
        let status = try ChildProcess(shell: "/usr/bin/promtool check metrics < '\(file)' > '\(file).out' 2>&1").wait()
        #expect(status == 0, "promtool check metrics: \((try? String(contentsOfFile: file + ".out", encoding: .utf8)) ?? "")")

        // The alert rules in docs/operations.md load, and name only metrics that exist.
        let guide = try String(contentsOfFile: AppConfiguration.repositoryFolder("docs/operations.md"), encoding: .utf8)
        let start = try #require(guide.range(of: "```yaml\ngroups:"))
        let end = try #require(guide.range(of: "```", range: start.upperBound..<guide.endIndex))
        let rules = String(guide[guide.index(start.lowerBound, offsetBy: 8)..<end.lowerBound])
        try Data(rules.utf8).write(to: URL(fileURLWithPath: app.folder + "/rules.yml"))
        let checked = try ChildProcess(shell: "/usr/bin/promtool check rules '\(app.folder)/rules.yml' > '\(app.folder)/rules.out' 2>&1").wait()
        #expect(checked == 0, "promtool check rules: \((try? String(contentsOfFile: app.folder + "/rules.out", encoding: .utf8)) ?? "")")
        let named = Set(rules.matches(of: /weatherboard_[a-z_]+/).map { String($0.output) })
        for name in named { #expect(typed.contains(name) || name.hasPrefix("weatherboard_change_feed"), "the rules name \(name)") }
        #expect(value(text, "weatherboard_db_up") == 1)

        // Issue 62 #3: driven through a 45 s freeze and a full disk by Prometheus's own rule
        // evaluation, each alert fires within a minute of its fault and is gone two minutes after.
        let faults = try String(contentsOfFile: AppConfiguration.repositoryFolder("Tests/WeatherboardTests/Fixtures/alerts.test.yml"), encoding: .utf8)
        try Data(faults.utf8).write(to: URL(fileURLWithPath: app.folder + "/alerts.test.yml"))
        let tested = try ChildProcess(shell: "cd '\(app.folder)' && /usr/bin/promtool test rules alerts.test.yml > alerts.out 2>&1").wait()
        #expect(tested == 0, "promtool test rules: \((try? String(contentsOfFile: app.folder + "/alerts.out", encoding: .utf8)) ?? "")")
    }

    @Test func onlyTheConfiguredAddressesReadThemNotVisitorsThroughAProxy() throws {
        let app = try AppHarness { $0.trustedProxies = ["127.0.0.1"] }
        #expect(try app.get("/metrics").status == 200, "this machine, directly")
        #expect(try app.get("/metrics", headers: [("X-Forwarded-For", "203.0.113.9")]).status == 404,
                "a visitor nginx forwards from this machine is not this machine")
        #expect(try app.get("/metrics", headers: [("X-Forwarded-For", "127.0.0.1")]).status == 200,
                "the proxy names a client on this machine")

        let untrusted = try AppHarness()
        #expect(try untrusted.get("/metrics", headers: [("X-Forwarded-For", "127.0.0.1")]).status == 404,
                "a forwarded request from a proxy not trusted: nobody can say who asked")

        let off = try AppHarness { $0.metricsAddresses = [] }
        #expect(try off.get("/metrics").status == 404)
        let elsewhere = try AppHarness { $0.metricsAddresses = ["10.0.0.9"] }
        #expect(try elsewhere.get("/metrics").status == 404)
    }

    @Test func databaseTroubleIsCountedByKind() throws {
        let app = try AppHarness()
        // A write the engine refuses as temporary trouble, through the application's database.
        #expect(throws: SQLError.self) {
            try app.application.database.write(.cluster) { _ in throw SQLError(.unavailable, "a lock wait passed its limit") }
        }
        let exposition = try app.get("/metrics").text
        #expect(value(exposition, #"weatherboard_db_errors_total{kind="unavailable"}"#) == 1)
        #expect(value(exposition, #"weatherboard_db_errors_total{kind="full"}"#) == 0)
    }
}
