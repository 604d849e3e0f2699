import Foundation
import Testing
import HTTPServer
import HTTPTestSupport
@testable import Weatherboard

/// A stand-in for Open-Meteo on a local port, serving the recorded answer or a failure.
final class UpstreamStub: @unchecked Sendable {
    /// `answer`: the recorded answer with some of its values replaced (a test's own numbers).
    enum Mode { case ok, answer([UInt8]), refusal([UInt8]), tooManyRequests, unavailable, malformed, slow(TimeInterval), redirect(String) }
    private let lock = NSLock()
    private var _mode = Mode.ok
    private var _hits = 0
    private var _delay: TimeInterval = 0
    private var _airQuality = UpstreamStub.seoulAir
    private var _airQualityHits = 0
    /// The air-quality service's answer (`/v1/air-quality`), served in every mode but the failing ones.
    var airQuality: [UInt8] {
        get { lock.withLock { _airQuality } }
        set { lock.withLock { _airQuality = newValue } }
    }
    var airQualityHits: Int { lock.withLock { _airQualityHits } }
    private var _archive: [UInt8]?
    private var _archiveHits = 0
    /// The historical archive's answer (`/v1/archive`, normals); nil: 404.
    var archive: [UInt8]? {
        get { lock.withLock { _archive } }
        set { lock.withLock { _archive = newValue } }
    }
    var archiveHits: Int { lock.withLock { _archiveHits } }
    static let seoulAir = Array(#"{"utc_offset_seconds":32400,"current":{"time":"2026-11-22T14:00","interval":3600,"pm10":42.4,"pm2_5":18.1}}"#.utf8)
    let server: Server
    var url: String { "http://127.0.0.1:\(server.port)" }
    static let recorded: [UInt8] = {
        let url = Bundle.module.url(forResource: "open-meteo-seoul", withExtension: "json", subdirectory: "Fixtures")!
        return [UInt8](try! Data(contentsOf: url))
    }()

    var mode: Mode {
        get { lock.withLock { _mode } }
        set { lock.withLock { _mode = newValue } }
    }
    var hits: Int { lock.withLock { _hits } }

    /// The recorded answer with `change` applied to its JSON object.
    static func recorded(changing change: (inout [String: Any]) -> Void) throws -> [UInt8] {
        var object = try #require(try JSONSerialization.jsonObject(with: Data(recorded)) as? [String: Any])
        change(&object)
        return [UInt8](try JSONSerialization.data(withJSONObject: object))
    }
    /// Extra time before every answer (to make concurrent requests overlap).
    var delay: TimeInterval {
        get { lock.withLock { _delay } }
        set { lock.withLock { _delay = newValue } }
    }

    init() throws {
        var configuration = ServerConfiguration()
        configuration.port = 0
        configuration.eventLoops = 1
        configuration.workerThreads = 8
        // The handler is made before the stub it reports to exists: it finds the stub here.
        let this = Locked<UpstreamStub?>(nil)
        server = Server(configuration: configuration) { request in
            guard let stub = this.value else { return .text("not ready", status: .serviceUnavailable) }
            let json = HTTPHeaders([("Content-Type", "application/json")])
            // Hits count forecasts: the air is asked beside each, and counted apart.
            let isAir = request.path == "/v1/air-quality"
            if request.path == "/v1/archive" {
                let archive = stub.lock.withLock { () -> [UInt8]? in
                    stub._archiveHits += 1
                    return stub._archive
                }
                return archive.map { Response(headers: json, body: $0) }
                    ?? Response(status: .notFound, headers: json, body: Array(#"{"error":true,"reason":"no archive here"}"#.utf8))
            }
            let (mode, delay, air) = stub.lock.withLock { () -> (Mode, TimeInterval, [UInt8]) in
                if isAir { stub._airQualityHits += 1 } else { stub._hits += 1 }
                return (stub._mode, stub._delay, stub._airQuality)
            }
            if delay > 0 { Thread.sleep(forTimeInterval: delay) }
            switch mode {
            case .ok where isAir, .answer where isAir:
                return Response(headers: json, body: air)
            case .ok:
                guard request.path == "/v1/forecast", (try? request.queryItems()["past_days"]) == "1" else {
                    return Response(status: .badRequest, headers: json, body: Array(#"{"error":true,"reason":"bad query"}"#.utf8))
                }
                return Response(headers: json, body: UpstreamStub.recorded)
            case .answer(let body):
                return Response(headers: json, body: body)
            case .refusal(let body):
                return Response(status: .badRequest, headers: json, body: body)
            case .tooManyRequests:
                return Response(status: .tooManyRequests, headers: json, body: Array(#"{"error":true,"reason":"Too many concurrent requests"}"#.utf8))
            case .unavailable:
                return Response(status: .serviceUnavailable, headers: json, body: Array(#"{"error":true,"reason":"Service unavailable"}"#.utf8))
            case .malformed:
                return Response(headers: json, body: Array(#"{"latitude":37.5,"hourly":{"time":[1,2]"#.utf8))
            case .redirect(let location):
                // Where a same-origin redirect leads, the recorded answer.
                if request.path == "/moved" { return Response(headers: json, body: UpstreamStub.recorded) }
                return Response(status: .found, headers: HTTPHeaders([("Location", location)]), body: [])
            case .slow(let seconds):
                Thread.sleep(forTimeInterval: seconds)
                return Response(headers: json, body: UpstreamStub.recorded)
            }
        }
        this.update { $0 = self }
        try server.start()
    }

    deinit {
        server.shutdown()
        server.wait()
    }
}

/// A clock tests move by hand.
final class TestClock: @unchecked Sendable {
    private let lock = NSLock()
    private var now: Date
    init(_ start: Date) { now = start }
    func read() -> Date { lock.withLock { now } }
    func advance(_ seconds: TimeInterval) { lock.withLock { now += seconds } }
}

@Suite(.serialized, .onEveryEngine) struct OpenMeteoTests {
    let seoul = CityIndexTests.index.city(slug: "seoul")!

    @Test func decodesTheRecordedAnswerMatchingDaysByDate() throws {
        let stub = try UpstreamStub()
        let forecast = try OpenMeteoProvider(baseURL: stub.url).forecast(for: seoul, now: AppHarness.fixedNow)
        #expect(forecast.source == "open-meteo")
        #expect(forecast.day("2026-11-22")?.high == 12.5)
        #expect(forecast.day("2026-11-21")?.low == -1.0)
        #expect(forecast.day("2026-11-21")?.precipitationProbability == nil) // null in the answer
        #expect(forecast.current?.temperature == 11.9)
        #expect(forecast.hours(on: "2026-11-22").count == 24)
        #expect(forecast.hours(on: "2026-11-22")[6].temperature == nil) // null hour
        #expect(stub.hits == 1)
    }

    @Test("upstream failures are errors", arguments: [
        (UpstreamStub.Mode.tooManyRequests, "Too many concurrent requests"),
        (.unavailable, "Service unavailable"),
        (.malformed, "did not decode"),
        (.slow(2), "timed out"),
    ])
    func failures(mode: UpstreamStub.Mode, message: String) throws {
        let stub = try UpstreamStub()
        stub.mode = mode
        let provider = OpenMeteoProvider(baseURL: stub.url, timeout: 0.5)
        do {
            _ = try provider.forecast(for: seoul, now: AppHarness.fixedNow)
            Issue.record("expected a failure")
        } catch let error as UpstreamError {
            #expect(error.description.contains(message), "\(error)")
        }
    }
}

@Suite(.serialized, .onEveryEngine) struct WeatherServiceTests {
    let seoul = CityIndexTests.index.city(slug: "seoul")!
    let busan = CityIndexTests.index.city(slug: "busan")!

    func service(_ stub: UpstreamStub, fallback: Bool = true, clock: TestClock, breaker: TimeInterval = 60) throws -> WeatherService {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ws-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let location: AppDatabase.Location
        switch TestEngine.current {
        case .sqlite:
            try FileManager.default.copyItem(atPath: AppHarness.templateDatabase, toPath: folder + "/db.sqlite")
            location = .sqlite(path: folder + "/db.sqlite")
        case .postgres:
            location = .postgres(url: try TestPostgres.require().freshDatabase())
        }
        let (database, _) = try AppDatabase.open(location, migrationsDirectory: AppConfiguration.repositoryFolder("Migrations"))
        var providers: [WeatherProvider] = [OpenMeteoProvider(baseURL: stub.url, timeout: 2)]
        if fallback { providers.append(DemoProvider()) }
        return WeatherService(providers: providers, database: database, freshFor: 1800, breakerOpenFor: breaker,
                              firstFetchBudget: 10, clock: { clock.read() })
    }

    @Test func fallsBackToDemoAndTheBreakerSkipsAFailingProvider() throws {
        let stub = try UpstreamStub()
        stub.mode = .unavailable
        let clock = TestClock(AppHarness.fixedNow)
        let weather = try service(stub, clock: clock)
        #expect(weather.report(for: seoul)?.source == "demo")
        #expect(stub.hits == 1)
        // within the breaker's window the failing provider is not asked again
        #expect(weather.report(for: busan)?.source == "demo")
        #expect(stub.hits == 1)
        // after it, it is
        clock.advance(61)
        stub.mode = .ok
        let other = CityIndexTests.index.city(slug: "incheon")!
        #expect(weather.report(for: other)?.source == "open-meteo")
        #expect(stub.hits == 2)
    }

    @Test func concurrentRequestsForOneCityShareOneUpstreamCall() throws {
        let stub = try UpstreamStub()
        stub.delay = 0.3
        let weather = try service(stub, clock: TestClock(AppHarness.fixedNow))
        let group = DispatchGroup()
        let seen = Locked<[String]>([])
        for _ in 0..<8 {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                let source = weather.report(for: seoul)?.source ?? "none"
                seen.update { $0.append(source) }
            }
        }
        group.wait()
        #expect(stub.hits == 1)
        #expect(seen.value == Array(repeating: "open-meteo", count: 8))
    }

    @Test func staleDataIsServedWhileOneRefreshRuns() throws {
        let stub = try UpstreamStub()
        let clock = TestClock(AppHarness.fixedNow)
        let weather = try service(stub, clock: clock)
        let first = try #require(weather.report(for: seoul))
        #expect(stub.hits == 1)
        #expect(weather.report(for: seoul)?.forecast == first.forecast) // fresh: no upstream call
        #expect(stub.hits == 1)
        clock.advance(1801)
        stub.delay = 0.3
        let stale = try #require(weather.report(for: seoul))
        #expect(stale.forecast.fetchedAt == first.forecast.fetchedAt) // answered at once with the old data
        try waitUntil("the refresh is stored") { weather.report(for: seoul)?.forecast.fetchedAt == clock.read() }
        #expect(stub.hits == 2)
    }

    /// A refresh checks that nobody stored a newer forecast meanwhile; when the newest stored is
    /// the one in memory it is not read and decoded again (with forecasts refreshed every minute
    /// that was a quarter of a busy node's time). A newer one stored elsewhere is still read.
    @Test func aRefreshDoesNotDecodeAgainTheForecastItHasInMemory() throws {
        let stub = try UpstreamStub()
        let clock = TestClock(AppHarness.fixedNow)
        let weather = try service(stub, clock: clock)
        _ = try #require(weather.report(for: seoul))
        let decoded = weather.decodedFromStore.load(ordering: .relaxed)
        for round in 1...3 {
            clock.advance(1801)
            _ = weather.report(for: seoul) // stale: a refresh starts
            try waitUntil("refresh \(round) stored") { weather.report(for: seoul)?.forecast.fetchedAt == clock.read() }
            // Landed too: a refresh still finishing when the clock moves on would be joined by the
            // next one instead of starting it (seen once in CI under load).
            try waitUntil("refresh \(round) landed") { !weather.isFetching(seoul) }
        }
        #expect(stub.hits == 4)
        #expect(weather.decodedFromStore.load(ordering: .relaxed) == decoded, "nothing read back while memory held the newest")
        // Another node's newer forecast (this node not told): the refresh reads it instead of asking upstream.
        let newer = try #require(weather.report(for: seoul)).forecast
        clock.advance(1801)
        var stored = newer
        stored.fetchedAt = clock.read()
        try weather.store.save(stored, for: seoul, payload: String(decoding: try WeatherService.encoder.encode(stored), as: UTF8.self))
        _ = weather.report(for: seoul)
        try waitUntil("the other node's forecast is read") { weather.report(for: seoul)?.forecast.fetchedAt == clock.read() }
        #expect(stub.hits == 4, "not asked upstream")
        #expect(weather.decodedFromStore.load(ordering: .relaxed) == decoded + 1)
    }

    @Test func errorsAreNotCachedAndOldDataIsShownWhenEveryProviderFails() throws {
        let stub = try UpstreamStub()
        stub.mode = .unavailable
        let clock = TestClock(AppHarness.fixedNow)
        let weather = try service(stub, fallback: false, clock: clock, breaker: 0)
        #expect(weather.report(for: seoul) == nil)
        stub.mode = .ok
        #expect(weather.report(for: seoul)?.source == "open-meteo") // the failure was not remembered
        clock.advance(1801)
        stub.mode = .unavailable
        _ = weather.report(for: seoul) // stale, refresh starts and fails
        try waitUntil("the failed refresh is known") { weather.report(for: seoul)?.source == "cache" }
        let report = try #require(weather.report(for: seoul))
        #expect(report.source == "cache")
        #expect(report.forecast.source == "open-meteo")
    }
}
