import Foundation
import HTTPServer
import Synchronization
import Testing
@testable import Weatherboard

/// A stub of a source that answers by path (MeteoAlarm's feeds and documents, KMA's gateway):
/// each path answers what the test set (recorded documents in `Fixtures`), anything else 404;
/// every request is kept.
final class FeedStub: Sendable {
    let server: Server
    private let answers = Mutex<[String: (Int, [UInt8])]>([:])
    private let asked = Mutex<[(path: String, query: String?)]>([])
    var url: String { "http://127.0.0.1:\(server.port)" }

    init() throws {
        var configuration = ServerConfiguration()
        configuration.port = 0
        configuration.eventLoops = 1
        let this = Mutex<FeedStub?>(nil)
        server = Server(configuration: configuration) { request in
            guard let stub = this.withLock({ $0 }) else { return .text("not ready", status: .serviceUnavailable) }
            stub.asked.withLock { $0.append((request.path, request.query)) }
            let (status, body) = stub.answers.withLock { $0[request.path] } ?? (404, Array("<error>not found</error>".utf8))
            return Response(status: HTTPStatus(code: status, reason: status == 200 ? "OK" : "Not Found"),
                            headers: HTTPHeaders([("Content-Type", "application/xml")]), body: body)
        }
        try server.start()
        this.withLock { $0 = self }
    }

    deinit {
        server.shutdown()
        server.wait()
    }

    static func fixture(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/\(name)")))
    }

    func answer(_ path: String, status: Int = 200, _ body: [UInt8]) { answers.withLock { $0[path] = (status, body) } }
    func answer(_ path: String, fixture name: String) throws { answer(path, try Self.fixture(name)) }
    func hits(_ path: String) -> Int { asked.withLock { $0.filter { $0.path == path }.count } }
    func queries(_ path: String) -> [String] { asked.withLock { $0.filter { $0.path == path }.compactMap(\.query) } }
}

/// MeteoAlarm's feeds, as `FeedStub` serves them.
enum MeteoAlarmStub {
    static let germany = "/feeds/meteoalarm-legacy-atom-germany"
    static let norway = "/feeds/meteoalarm-legacy-atom-norway"
    static func document(_ country: String, _ id: String) -> String { "/api/v1/warnings/feeds-\(country)/\(id)" }

    /// The first poll's world: Germany's and Norway's feeds and every document they link.
    static func recordedDocuments(_ stub: FeedStub) throws {
        // Every other member country has nothing in force: an empty feed.
        for country in MeteoAlarm.feeds.values where country != "germany" && country != "norway" {
            stub.answer("/feeds/meteoalarm-legacy-atom-\(country)", Array(#"<?xml version="1.0" encoding="UTF-8"?><feed xmlns="http://www.w3.org/2005/Atom"><title>\#(country)</title></feed>"#.utf8))
        }
        try stub.answer(Self.germany, fixture: "meteoalarm/feed-germany.xml")
        try stub.answer(Self.norway, fixture: "meteoalarm/feed-norway.xml")
        try stub.answer(Self.document("germany", "5d2a4c1e-0b1f-4a7e-9c35-berlin00001"), fixture: "meteoalarm/cap-berlin-alert.xml")
        try stub.answer(Self.document("germany", "5d2a4c1e-0b1f-4a7e-9c35-berlin00002"), fixture: "meteoalarm/cap-berlin-update.xml")
        try stub.answer(Self.document("germany", "5d2a4c1e-0b1f-4a7e-9c35-berlin00003"), fixture: "meteoalarm/cap-berlin-cancel.xml")
        try stub.answer(Self.document("germany", "8c0e7f52-3d4b-4f0e-a1c2-munich00001"), fixture: "meteoalarm/cap-munich.xml")
        try stub.answer(Self.document("germany", "00000000-exercise-1"), fixture: "meteoalarm/cap-exercise.xml")
        try stub.answer(Self.document("germany", "19700101-ended"), fixture: "meteoalarm/cap-ended.xml")
        try stub.answer(Self.document("germany", "error-with-200"), fixture: "meteoalarm/error-with-200.xml")
        try stub.answer(Self.document("germany", "laughs"), fixture: "meteoalarm/cap-laughs.xml")
        try stub.answer(Self.document("germany", "entities"), fixture: "meteoalarm/cap-entities.xml")
        try stub.answer(Self.document("germany", "unknown-geocode"), fixture: "meteoalarm/cap-unknown-geocode.xml")
        // A description of 10 MB: larger than a CAP document may be.
        var huge = try FeedStub.fixture("meteoalarm/cap-munich.xml")
        let at = try #require(huge.firstRange(of: Array("<description>".utf8))).upperBound
        huge.insert(contentsOf: Array(repeating: UInt8(ascii: "x"), count: 10 << 20), at: at)
        stub.answer(Self.document("germany", "ten-megabytes"), huge)
        try stub.answer(Self.norway, fixture: "meteoalarm/feed-norway.xml")
        try stub.answer(Self.document("norway", "9f1e2d3c-gale-0001"), fixture: "meteoalarm/cap-norway-gale.xml")
    }
}

/// Issue 43 #1, MeteoAlarm: recorded Atom feeds and CAP documents in MeteoAlarm's formats (an
/// entry per language and area, geocodes and polygons, several languages, an update, a
/// cancellation, an exercise, an end in 1970, an error document with status 200, a 10 MB
/// description, an entity bomb, a link to elsewhere) reach the right cities' pages in the words
/// the source gave; an update replaces, a cancellation removes, and nothing hostile costs more
/// than its refusal.
@Suite(.serialized, .onEveryEngine) struct MeteoAlarmTests {
    static var geocodes: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/meteoalarm/geocodes.json").path
    }

    static func warnings(_ page: MarkupDocument) -> [MarkupDocument.Node] { page.nodes("//section[@class='warnings']//*[@data-warning]") }

    @Test func warningsReachTheCitiesTheirAreasCoverAndFollowUpdatesAndCancellations() throws {
        let stub = try FeedStub()
        try MeteoAlarmStub.recordedDocuments(stub)
        let app = try AppHarness {
            $0.warningsMeteoAlarmURL = stub.url
            $0.warningsMeteoAlarmGeocodes = Self.geocodes
            $0.warningsEvery = 3600
        }
        WarningTests.firstPoll(app)

        // Berlin, by its EMMA_ID's shape: the English words on an English page.
        var (_, page) = try app.page("/city/berlin")
        var shown = Self.warnings(page)
        #expect(shown.count == 1, "the storm gusts only: the exercise is not shown")
        #expect(shown.first?["data-event"] == "storm gusts", "the event in English, where the source gave English")
        #expect(shown.first?["data-severity"] == "severe")
        #expect(shown.first?["data-expires"] == "2026-11-22T17:00:00Z")
        #expect(shown.first?["data-warning-id"] == "meteoalarm:2.49.0.0.276.0.DWD.PVW.1795324800000.berlin-1.MUL")
        #expect(page.text("//*[@data-warning]//*[@class='warning-headline']") == "Official WARNING of STORM GUSTS")
        #expect(page.text("//*[@data-warning]//*[@class='warning-until']") == "until 18:00", "Berlin's own time")
        #expect(page.text("//*[@data-warning]//*[@class='warning-source']") == "MeteoAlarm (EUMETNET) · issued 06:20")
        // Munich: German words only, marked as German.
        (_, page) = try app.page("/city/munich")
        #expect(Self.warnings(page).map { $0["data-event"] } == ["Glätte"])
        #expect(page.text("//*[@data-warning]//*[@class='warning-headline'][@lang='de']") == "Amtliche WARNUNG vor GLÄTTE")
        // Norway draws its area: two polygons, Tromsø's coast and Bergen's; Oslo is in neither.
        (_, page) = try app.page("/city/troms")
        #expect(Self.warnings(page).map { $0["data-event"] } == ["Gale"])
        (_, page) = try app.page("/city/bergen")
        #expect(Self.warnings(page).map { $0["data-event"] } == ["Gale"])
        (_, page) = try app.page("/city/oslo")
        #expect(Self.warnings(page).isEmpty)
        (_, page) = try app.page("/city/hamburg")
        #expect(Self.warnings(page).isEmpty)
        (_, page) = try app.page("/city/berlin?lang=ko")
        #expect(page.nodes("//*[@data-warning]//*[@class='warning-headline'][@lang='en']").count == 1, "English words marked so on a Korean page")
        #expect(page.text("//*[@data-warning]//*[@class='warning-source']") == "MeteoAlarm(유럽 기상청 연합) · 06:20 발표")
        // The home page's row of the city read last.
        let reader = app.browser()
        try reader.get("/city/berlin")
        #expect(try reader.get("/").1.nodes("//li[@data-slug='berlin']//*[@data-warning][@data-severity='severe']").count == 1)

        // Each refusal is said once, by the warning's id or path, never its words; none ended the process.
        let log = app.log.lines.joined(separator: "\n")
        #expect(log.contains("ended-1970.DEU"), "the end in 1970 was refused")
        #expect(log.contains("error-with-200") && log.contains("not a CAP alert"))
        #expect(log.contains("ten-megabytes") && log.contains("larger than"))
        #expect(log.contains("laughs") && !log.contains("lollol"), "the entity bomb was refused unread")
        #expect(log.contains("/entities: meteoalarm: not a CAP alert"), "so is any document that declares entities")
        #expect(log.contains("no shape for EMMA_ID:DE999"))
        #expect(!log.contains("Alter Frost"))
        #expect(stub.hits("/steal") == 0 && !log.contains("elsewhere.example"), "a link to another host is not followed")
        #expect(try app.count("SELECT count(*) FROM warnings WHERE source = 'meteoalarm'") == 3, "Berlin's, Munich's, Norway's gale")

        // The update: extreme now, until 21:00, and Hamburg too; the first message is gone.
        try stub.answer(MeteoAlarmStub.germany, fixture: "meteoalarm/feed-germany-update.xml")
        app.application.warnings.poll()
        (_, page) = try app.page("/city/berlin")
        shown = Self.warnings(page)
        #expect(shown.map { $0["data-severity"] } == ["extreme"], "the update replaced the warning")
        #expect(shown.first?["data-warning-id"] == "meteoalarm:2.49.0.0.276.0.DWD.PVW.1795324800000.berlin-2.MUL")
        #expect(page.text("//*[@data-warning]//*[@class='warning-until']") == "until 21:00")
        (_, page) = try app.page("/city/hamburg")
        #expect(Self.warnings(page).map { $0["data-severity"] } == ["extreme"], "the update's new area")
        #expect(try app.count("SELECT count(*) FROM warnings WHERE id LIKE '%berlin-1.MUL'") == 0)

        // The cancellation: gone from Berlin and Hamburg; Munich's stays.
        try stub.answer(MeteoAlarmStub.germany, fixture: "meteoalarm/feed-germany-cancel.xml")
        app.application.warnings.poll()
        (_, page) = try app.page("/city/berlin")
        #expect(Self.warnings(page).isEmpty, "cancelled")
        (_, page) = try app.page("/city/hamburg")
        #expect(Self.warnings(page).isEmpty)
        (_, page) = try app.page("/city/munich")
        #expect(Self.warnings(page).count == 1)

        // A CAP message never changes: each document was asked once, the refused ones too.
        #expect(stub.hits(MeteoAlarmStub.document("germany", "8c0e7f52-3d4b-4f0e-a1c2-munich00001")) == 1)
        #expect(stub.hits(MeteoAlarmStub.document("germany", "error-with-200")) == 1)
        #expect(stub.hits(MeteoAlarmStub.document("germany", "ten-megabytes")) == 1)
        #expect(stub.hits(MeteoAlarmStub.germany) == 3)

        // A country's feed that fails (an error document with status 200) changes nothing kept
        // of it; another country's that no longer lists a warning ends it all the same.
        stub.answer(MeteoAlarmStub.germany, Array("<?xml version=\"1.0\"?><error>Service unavailable</error>".utf8))
        stub.answer(MeteoAlarmStub.norway, Array("<?xml version=\"1.0\"?><feed xmlns=\"http://www.w3.org/2005/Atom\"><title>Norway</title></feed>".utf8))
        app.application.warnings.poll()
        (_, page) = try app.page("/city/munich")
        #expect(Self.warnings(page).count == 1)
        #expect(app.log.lines.contains { $0.contains("germany: not an Atom feed") })
        (_, page) = try app.page("/city/troms")
        #expect(Self.warnings(page).isEmpty, "Norway's feed lists it no more")
    }

    /// Without the geocodes file only drawn areas find their cities; the rest are refused and
    /// the log says what is missing.
    @Test func withoutTheGeocodesFileOnlyDrawnAreasArePlaced() throws {
        let stub = try FeedStub()
        try MeteoAlarmStub.recordedDocuments(stub)
        let app = try AppHarness { $0.warningsMeteoAlarmURL = stub.url; $0.warningsEvery = 3600 }
        WarningTests.firstPoll(app)
        #expect(Self.warnings(try app.page("/city/troms").1).count == 1)
        #expect(Self.warnings(try app.page("/city/berlin").1).isEmpty)
        #expect(app.log.lines.contains { $0.contains("no shape for EMMA_ID:DE300 (no --warnings-meteoalarm-geocodes)") })
    }

    /// A geocodes file that is not one stops the start with a clear message.
    @Test func aGeocodesFileThatIsNotOneIsRefusedAtStart() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("wb-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("geocodes.json")
        try Data("{\"type\":\"FeatureCollection\",\"features\":[{\"type\":\"Feature\",\"properties\":{},\"geometry\":null}]}".utf8).write(to: file)
        var configuration = AppConfiguration()
        configuration.warningsMeteoAlarmURL = "http://127.0.0.1:9"
        configuration.warningsMeteoAlarmGeocodes = file.path
        #expect(throws: StartupError.self) { try Application.makeWarningProviders(configuration) }
        configuration.warningsMeteoAlarmGeocodes = folder.appendingPathComponent("missing.json").path
        #expect(throws: StartupError.self) { try Application.makeWarningProviders(configuration) }
    }

    /// Only a feeds' document path is asked, on our own base URL.
    @Test func documentLinksAreFollowedOnlyToTheFeedsOwnPaths() {
        #expect(MeteoAlarm.documentPath("https://feeds.meteoalarm.org/api/v1/warnings/feeds-germany/5d2a4c1e-0b1f") == "/api/v1/warnings/feeds-germany/5d2a4c1e-0b1f")
        #expect(MeteoAlarm.documentPath("https://x.example/api/v1/warnings/feeds-germany/../../admin") == nil)
        #expect(MeteoAlarm.documentPath("https://x.example/api/v1/warnings/feeds-germany/a/b") == nil)
        #expect(MeteoAlarm.documentPath("https://x.example/api/v1/warnings/feeds-germany/a?b=c") == nil)
        #expect(MeteoAlarm.documentPath("https://x.example/other") == nil)
    }
}
