import Foundation
import Testing
import HTTPServer
import Logging
@testable import Weatherboard

func fixture(_ name: String, _ ext: String) -> [UInt8] {
    [UInt8](try! Data(contentsOf: Bundle.module.url(forResource: name, withExtension: ext, subdirectory: "Fixtures")!))
}

@Suite(.onEveryEngine) struct KMAProviderTests {
    let seoul = CityIndexTests.index.city(slug: "seoul")!

    @Test("the run chosen by the published schedule", arguments: [
        ("2026-11-22T02:09:00+09:00", "20261121", "2300"),
        ("2026-11-22T02:10:00+09:00", "20261122", "0200"),
        ("2026-11-22T14:45:00+09:00", "20261122", "1400"),
        ("2026-11-22T23:59:00+09:00", "20261122", "2300"),
        ("2026-11-22T00:30:00+09:00", "20261121", "2300"),
    ])
    func schedule(time: String, date: String, run: String) throws {
        let now = try #require(ISO8601DateFormatter().date(from: time))
        let chosen = KMAProvider.latestRun(at: now)
        #expect(chosen.date == date && chosen.time == run)
    }

    @Test func readsTheRecordedAnswer() throws {
        let items = try KMAProvider.parse(fixture("kma-seoul", "xml"))
        #expect(items.contains(KMAProvider.Item(category: "TMX", date: "20261123", time: "1500", value: 8)))
        #expect(items.contains(KMAProvider.Item(category: "REH", date: "20261122", time: "1200", value: nil))) // -999 is missing
        let forecast = KMAProvider.forecast(from: items, now: AppHarness.fixedNow, city: seoul)
        #expect(forecast.day("2026-11-23")?.high == 8)
        #expect(forecast.day("2026-11-23")?.low == -3)
        #expect(forecast.day("2026-11-23")?.weatherCode == 71) // snow in the early hours
        #expect(forecast.day("2026-11-22")?.high == 11)
        #expect(forecast.current?.temperature == 11) // 14:00 KST
    }

    @Test func gatewayAndServiceErrorsAreErrors() {
        #expect(throws: UpstreamError.self) { try KMAProvider.parse(fixture("kma-key-error", "xml")) }
        do {
            _ = try KMAProvider.parse(fixture("kma-key-error", "xml"))
        } catch {
            #expect("\(error)".contains("SERVICE_KEY_IS_NOT_REGISTERED_ERROR"))
        }
        #expect(throws: UpstreamError.self) { try KMAProvider.parse(fixture("kma-no-data", "xml")) }
        #expect(throws: UpstreamError.self) { try KMAProvider.parse(Array("{\"not\": \"xml\"}".utf8)) }
    }

    @Test func onlyKoreanCitiesAreCovered() {
        let provider = KMAProvider(serviceKey: "k")
        #expect(provider.covers(seoul))
        #expect(!provider.covers(CityIndexTests.index.city(slug: "tokyo")!))
    }

    /// Issue 39 #5: yesterday's run missing (NO_DATA) is no failure and says nothing; yesterday's
    /// request failing otherwise leaves the forecast without it and is logged, never swallowed.
    @Test(arguments: [("kma-no-data", false), ("kma-key-error", true)])
    func yesterdayFailingIsLoggedUnlessItIsOnlyGone(_ answer: String, logged: Bool) throws {
        var configuration = ServerConfiguration()
        configuration.port = 0
        configuration.eventLoops = 1
        let stub = Server(configuration: configuration) { request in
            let yesterday = (request.query ?? "").contains("base_time=0200")
            return Response(headers: HTTPHeaders([("Content-Type", "application/xml")]),
                            body: fixture(yesterday ? answer : "kma-seoul", "xml"))
        }
        try stub.start()
        defer { stub.shutdown(); stub.wait() }
        let log = CapturedLog()
        let provider = KMAProvider(baseURL: "http://127.0.0.1:\(stub.port)", serviceKey: "SECRET-KEY", timeout: 2,
                                   logger: Logger(label: "test") { _ in CapturedLog.Handler(log: log) })
        let forecast = try provider.forecast(for: seoul, now: AppHarness.fixedNow)
        #expect(forecast.day("2026-11-23")?.high == 8, "today onwards is there either way")
        #expect(log.lines.contains { $0.contains("kma: yesterday's run for seoul not read") } == logged, "\(log.lines)")
        #expect(!log.lines.contains { $0.contains("SECRET-KEY") })
    }

    @Test func fetchesTheScheduledRunsOverHTTPAndKeepsTheKeyOutOfErrors() throws {
        var configuration = ServerConfiguration()
        configuration.port = 0
        configuration.eventLoops = 1
        nonisolated(unsafe) var queries: [String] = []
        let lock = NSLock()
        let stub = Server(configuration: configuration) { request in
            lock.withLock { queries.append(request.query ?? "") }
            return Response(headers: HTTPHeaders([("Content-Type", "application/xml")]), body: fixture("kma-seoul", "xml"))
        }
        try stub.start()
        defer { stub.shutdown(); stub.wait() }
        let provider = KMAProvider(baseURL: "http://127.0.0.1:\(stub.port)", serviceKey: "SECRET-KEY", timeout: 2)
        let forecast = try provider.forecast(for: seoul, now: AppHarness.fixedNow)
        #expect(forecast.source == "kma")
        #expect(forecast.day("2026-11-23")?.high == 8)
        let seen = lock.withLock { queries }
        #expect(seen.contains { $0.contains("base_date=20261122") && $0.contains("base_time=1400") && $0.contains("nx=60") && $0.contains("ny=127") })
        #expect(seen.contains { $0.contains("base_date=20261121") && $0.contains("base_time=0200") })
        let unreachable = KMAProvider(baseURL: "http://127.0.0.1:1", serviceKey: "SECRET-KEY", timeout: 1)
        do {
            _ = try unreachable.forecast(for: seoul, now: AppHarness.fixedNow)
            Issue.record("expected a failure")
        } catch {
            #expect(!"\(error)".contains("SECRET-KEY"), "\(error)")
        }
    }
}
