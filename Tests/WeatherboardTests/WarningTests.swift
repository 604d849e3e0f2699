import Foundation
import HTTPServer
import Synchronization
import Testing
@testable import Weatherboard

/// A stub of the US National Weather Service's API: `/alerts/active` answers what the test set,
/// `/zones/…` the zones' shapes; every request is counted.
final class NWSStub: Sendable {
    let server: Server
    private struct State {
        var alerts: (Int, [UInt8]) = (200, [])
        var zones: [String: [UInt8]] = [:]
        var hits: [String] = []
    }
    private let state = Mutex(State())
    var url: String { "http://127.0.0.1:\(server.port)" }

    init() throws {
        var configuration = ServerConfiguration()
        configuration.port = 0
        configuration.eventLoops = 1
        let this = Mutex<NWSStub?>(nil)
        server = Server(configuration: configuration) { request in
            guard let stub = this.withLock({ $0 }) else { return .text("not ready", status: .serviceUnavailable) }
            let path = request.path
            let (status, body): (Int, [UInt8]) = stub.state.withLock { state in
                state.hits.append(path)
                if path == "/alerts/active" { return state.alerts }
                return state.zones[path].map { (200, $0) } ?? (404, Array(#"{"status":404}"#.utf8))
            }
            return Response(status: HTTPStatus(code: status, reason: status == 200 ? "OK" : "Not Found"), headers: HTTPHeaders([("Content-Type", "application/geo+json")]), body: body)
        }
        try server.start()
        this.withLock { $0 = self }
    }

    deinit {
        server.shutdown()
        server.wait()
    }

    /// The active alerts, as a feature collection of `features`.
    func alerts(_ features: [[String: Any]]) throws {
        let body = try JSONSerialization.data(withJSONObject: ["type": "FeatureCollection", "features": features])
        state.withLock { $0.alerts = (200, [UInt8](body)) }
    }

    func answer(status: Int, _ body: String) { state.withLock { $0.alerts = (status, Array(body.utf8)) } }

    func zone(_ path: String, polygon: [[Double]]) throws {
        let body = try JSONSerialization.data(withJSONObject: ["type": "Feature", "geometry": ["type": "Polygon", "coordinates": [polygon]]])
        state.withLock { $0.zones[path] = [UInt8](body) }
    }

    var hits: [String] { state.withLock { $0.hits } }
}

/// Issue 43 #1: official warnings from a recorded NWS document (the real format: features with CAP
/// properties, polygons, multipolygons, zone-only alerts, updates, cancellations, test messages,
/// an expiry in 1970, a 10 MB description, an error document with status 200) reach the right
/// cities' pages and home rows, in both languages; an update replaces, a cancellation or the
/// feed's silence removes, an end passes by itself, and a broken answer changes nothing.
@Suite(.serialized, .onEveryEngine) struct WarningTests {
    /// A box around a point, as a GeoJSON ring (longitude first).
    static func box(around latitude: Double, _ longitude: Double, size: Double = 0.3) -> [[Double]] {
        [[longitude - size, latitude - size], [longitude + size, latitude - size], [longitude + size, latitude + size],
         [longitude - size, latitude + size], [longitude - size, latitude - size]]
    }

    static func alert(_ id: String, event: String, severity: String = "Severe", messageType: String = "Alert",
                      sent: String = "2026-11-21T21:30:00-08:00", ends: String? = "2026-11-22T01:00:00-08:00",
                      expires: String = "2026-11-21T23:00:00-08:00", status: String = "Actual",
                      geometry: Any = NSNull(), zones: [String] = [], references: [String] = [],
                      description: String = "Heavy rain will cause flooding of streets and streams.") -> [String: Any] {
        [
            "id": "https://api.weather.gov/alerts/\(id)", "type": "Feature", "geometry": geometry,
            "properties": [
                "id": id, "areaDesc": "Somewhere", "affectedZones": zones,
                "references": references.map { ["@id": "https://api.weather.gov/alerts/\($0)", "identifier": $0, "sender": "w-nws.webmaster@noaa.gov", "sent": sent] },
                "sent": sent, "effective": sent, "onset": sent, "expires": expires, "ends": ends ?? NSNull(), "status": status,
                "messageType": messageType, "category": "Met", "severity": severity, "certainty": "Likely", "urgency": "Expected",
                "event": event, "senderName": "NWS Somewhere", "headline": "\(event) issued by NWS", "description": description,
                "instruction": "Turn around, don't drown.",
            ] as [String: Any],
        ]
    }

    static var losAngeles: [String: Any] { ["type": "Polygon", "coordinates": [box(around: 34.05223, -118.24368, size: 0.1)]] }

    static func firstPoll(_ app: AppHarness) {
        let deadline = Date().addingTimeInterval(20)
        while app.application.warnings.polls.load(ordering: .acquiring) < 1 && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
    }

    static func warnings(_ page: MarkupDocument) -> [MarkupDocument.Node] { page.nodes("//section[@class='warnings']//*[@data-warning]") }

    /// Issue 61 #4: an answer of many small alerts is taken up to `NWSAlerts.alertsPerPoll`, the
    /// most severe first (wherever they are in the answer), and the rest said once in the log.
    @Test func manyAlertsAreTakenMostSevereFirstUpToTheLimit() throws {
        let stub = try NWSStub()
        let minor = (0..<(NWSAlerts.alertsPerPoll + 10)).map { Self.alert("urn:oid:minor-\($0)", event: "Frost Advisory", severity: "Minor", geometry: Self.losAngeles) }
        let extreme = (0..<20).map { Self.alert("urn:oid:extreme-\($0)", event: "Flash Flood Warning", severity: "Extreme", geometry: Self.losAngeles) }
        try stub.alerts(minor + extreme)
        let app = try AppHarness { $0.warningsNWSURL = stub.url; $0.warningsEvery = 3600 }
        Self.firstPoll(app)
        #expect(try app.count("SELECT count(*) FROM warnings WHERE source = 'nws'") == NWSAlerts.alertsPerPoll)
        #expect(try app.count("SELECT count(*) FROM warnings WHERE source = 'nws' AND severity = 'extreme'") == 20)
        #expect(app.log.lines.filter { $0.contains("alerts in one answer, the \(NWSAlerts.alertsPerPoll) most severe taken") }.count == 1)
    }

    @Test func warningsReachTheCitiesTheyCoverAndChangeWithTheFeed() throws {
        let stub = try NWSStub()
        try stub.zone("/zones/forecast/NYZ072", polygon: Self.box(around: 40.71427, -74.00597))
        try stub.alerts([
            Self.alert("urn:oid:flood-1", event: "Flash Flood Warning", geometry: Self.losAngeles),
            Self.alert("urn:oid:storm-1", event: "Winter Storm Warning", severity: "Moderate",
                       ends: "2026-11-23T06:00:00-05:00", zones: ["https://api.weather.gov/zones/forecast/NYZ072"]),
            // Chicago and Miami in one multipolygon; a description of 10 MB.
            Self.alert("urn:oid:wind-1", event: "High Wind Warning", severity: "Minor",
                       geometry: ["type": "MultiPolygon", "coordinates": [[Self.box(around: 41.85003, -87.65005)], [Self.box(around: 25.77427, -80.19366)]]],
                       description: String(repeating: "Wind. ", count: 1_750_000)),
            Self.alert("urn:oid:old-1", event: "Dense Fog Advisory", ends: "1970-01-01T00:00:00Z", expires: "1970-01-01T00:00:00Z",
                       geometry: Self.losAngeles),
            Self.alert("urn:oid:test-1", event: "Test Message", status: "Test", geometry: Self.losAngeles),
            // A zone the service has no shape for: shown nowhere, and said so.
            Self.alert("urn:oid:lost-1", event: "Lost Zone Warning", zones: ["https://api.weather.gov/zones/forecast/ZZZ999"]),
        ])
        let app = try AppHarness { $0.warningsNWSURL = stub.url; $0.warningsEvery = 3600 }
        Self.firstPoll(app)

        var (_, page) = try app.page("/city/los-angeles")
        var shown = Self.warnings(page)
        #expect(shown.count == 1, "only the flood warning: the ended one and the test message are not shown")
        #expect(shown.first?["data-event"] == "Flash Flood Warning")
        #expect(shown.first?["data-severity"] == "severe")
        #expect(shown.first?["data-expires"] == "2026-11-22T09:00:00Z")
        #expect(page.text("//*[@data-warning]//*[@class='warning-until']") == "until 01:00, 22 Nov", "the city's own time")
        #expect(page.text("//*[@data-warning]//*[@class='warning-source']") == "US National Weather Service · issued 21:30")
        (_, page) = try app.page("/city/new-york-city")
        #expect(Self.warnings(page).map { $0["data-event"] } == ["Winter Storm Warning"], "a zone-only alert, by its zone's shape")
        #expect(Self.warnings(page).first?["data-severity"] == "moderate")
        (_, page) = try app.page("/city/chicago")
        #expect(Self.warnings(page).map { $0["data-event"] } == ["High Wind Warning"])
        let description = page.text("//*[@data-warning]//details/p") ?? ""
        #expect(description.count <= Warning.maximumDescription && description.hasPrefix("Wind. Wind."), "cut to \(Warning.maximumDescription)")
        (_, page) = try app.page("/city/miami")
        #expect(Self.warnings(page).map { $0["data-event"] } == ["High Wind Warning"], "the multipolygon's other part")
        (_, page) = try app.page("/city/seoul")
        #expect(Self.warnings(page).isEmpty)
        (_, page) = try app.page("/city/los-angeles?lang=ko")
        #expect(page.text("//*[@data-warning]//*[@class='warning-until']") == "11월 22일 01:00까지")
        #expect(page.nodes("//*[@data-warning]//*[@class='warning-headline'][@lang='en']").count == 1, "English words marked so on a Korean page")
        // The home page's New York row.
        (_, page) = try app.page("/")
        #expect(page.nodes("//li[@data-slug='new-york-city']//*[@data-warning][@data-event='Winter Storm Warning'][@data-severity='moderate']").count == 1)
        #expect(page.nodes("//li[@data-slug='seoul']//*[@data-warning]").isEmpty)
        #expect(!app.log.lines.contains { $0.contains("Dense Fog Advisory") }, "a refusal names the warning's id, not its words")
        #expect(app.log.lines.contains { $0.contains("urn:oid:old-1") }, "the ended one was refused, and said so")
        #expect(app.log.lines.contains { $0.contains("zone /zones/forecast/ZZZ999: HTTP 404") })
        #expect(try app.count("SELECT count(*) FROM warning_cities WHERE warning_id = 'nws:urn:oid:lost-1'") == 0)

        // An update replaces the flood warning (now extreme); the storm is cancelled.
        try stub.alerts([
            Self.alert("urn:oid:flood-2", event: "Flash Flood Warning", severity: "Extreme", messageType: "Update",
                       sent: "2026-11-21T21:40:00-08:00", geometry: Self.losAngeles, references: ["urn:oid:flood-1"]),
            Self.alert("urn:oid:storm-2", event: "Winter Storm Warning", messageType: "Cancel", zones: ["https://api.weather.gov/zones/forecast/NYZ072"],
                       references: ["urn:oid:storm-1"]),
            Self.alert("urn:oid:wind-1", event: "High Wind Warning", severity: "Minor",
                       geometry: ["type": "MultiPolygon", "coordinates": [[Self.box(around: 41.85003, -87.65005)], [Self.box(around: 25.77427, -80.19366)]]]),
        ])
        app.application.warnings.poll()
        (_, page) = try app.page("/city/los-angeles")
        shown = Self.warnings(page)
        #expect(shown.map { $0["data-severity"] } == ["extreme"], "the update replaced the warning")
        #expect(shown.first?["data-warning-id"] == "nws:urn:oid:flood-2")
        (_, page) = try app.page("/city/new-york-city")
        #expect(Self.warnings(page).isEmpty, "cancelled")
        (_, page) = try app.page("/")
        #expect(page.nodes("//li[@data-slug='new-york-city']//*[@data-warning]").isEmpty, "the kept home page heard it too")
        #expect(stub.hits.filter { $0 == "/zones/forecast/NYZ072" }.count == 1, "a zone's shape is asked once")

        // A broken answer changes nothing kept (XML with status 200), and is logged in one line.
        stub.answer(status: 200, "<?xml version=\"1.0\"?><error><message>Service unavailable</message></error>")
        app.application.warnings.poll()
        (_, page) = try app.page("/city/los-angeles")
        #expect(Self.warnings(page).count == 1)
        #expect(app.log.lines.contains { $0.contains("warnings: nws failed: nws: the answer is not JSON") })

        // The feed no longer lists the wind warning: it has ended (after the breaker's pause).
        try stub.alerts([Self.alert("urn:oid:flood-2", event: "Flash Flood Warning", severity: "Extreme", sent: "2026-11-21T21:40:00-08:00",
                                    geometry: Self.losAngeles)])
        app.clock.advance(601)
        app.application.warnings.poll()
        (_, page) = try app.page("/city/chicago")
        #expect(Self.warnings(page).isEmpty)
        #expect(try app.count("SELECT count(*) FROM warnings") == 1)

        // Its end passes: gone from the page without a poll, and from the table at the next.
        app.clock.advance(4 * 3600)
        (_, page) = try app.page("/city/los-angeles")
        #expect(Self.warnings(page).isEmpty)
        stub.answer(status: 200, #"{"type":"FeatureCollection","features":[]}"#)
        app.application.warnings.poll()
        #expect(try app.count("SELECT count(*) FROM warnings") == 0)
        #expect(try app.count("SELECT count(*) FROM warning_cities") == 0)
    }

    /// Issue 43 #2, issue 65 #10: a warning opens one pinned thread, on its home board (the most
    /// populous city it covers),
    /// written by the site (labelled; not blocked, muted, reported, nor signed in to); polls that
    /// find it again open no other, an update carries it on, and its end unpins it.
    @Test func aWarningOpensOnePinnedThreadPerCityThatItsEndUnpins() throws {
        let stub = try NWSStub()
        try stub.alerts([Self.alert("urn:oid:flood-1", event: "Flash Flood Warning", geometry: Self.losAngeles)])
        let app = try AppHarness { $0.warningsNWSURL = stub.url; $0.warningsEvery = 3600 }
        Self.firstPoll(app)
        let covered = try app.count("SELECT count(*) FROM warning_cities WHERE warning_id = 'nws:urn:oid:flood-1'")
        #expect(covered >= 1)
        #expect(try app.count("SELECT count(*) FROM posts WHERE warning_id = 'nws:urn:oid:flood-1'") == 1, "one thread per warning")

        let member = app.browser()
        try member.signUp("rainwatcher")
        var (_, page) = try member.get("/city/los-angeles")
        var first = try #require(page.nodes("//section[@id='board']/article").first)
        #expect(first["data-pinned"] != nil && first["data-warning-id"] == "nws:urn:oid:flood-1", "the board's first post is the thread")
        #expect(page.text("//section[@id='board']/article[1]//p[@class='post-body']") == "🟧 Flash Flood Warning until 01:00, 22 Nov: what are you seeing where you are?")
        #expect(page.count("//section[@id='board']/article[1]//*[@data-site]") == 1, "labelled as the site")
        #expect(page.nodes("//section[@id='board']/article[1]//form[contains(@action, '/block') or contains(@action, '/report')]").isEmpty)
        let threadID = try #require(first["data-post-id"])
        // Its profile says it is the site's own account, not a member's level.
        let profile = try member.get("/users/weatherboard").1
        #expect(profile.count("//p[@class='standing'][@data-site]") == 1 && profile.count("//p[@class='standing'][@data-level]") == 0)
        #expect(profile.text("//p[@class='standing']")?.contains("site's own account") == true)
        // The site's account: not blocked, muted or reported through the forms' addresses either.
        #expect(try member.post("/users/weatherboard/block", []).0.status == 403)
        #expect(try member.post("/users/weatherboard/mute", [("duration", "day")]).0.status == 403)
        #expect(try member.post("/posts/\(threadID)/report", [("reason", "spam")]).0.status == 403)
        #expect(try app.count("SELECT count(*) FROM blocks") + app.count("SELECT count(*) FROM mutes") + app.count("SELECT count(*) FROM reports") == 0)
        // People answer under it.
        #expect(try member.post("/posts/\(threadID)/replies", [("body", "Water over the kerb on 5th Street")]).0.status == 303)
        // Nobody signs in as the site, whatever the password (and nothing fails on the way).
        let stranger = app.browser()
        _ = try stranger.get("/login")
        let (refused, _) = try stranger.post("/login", [("username", "weatherboard"), ("password", "correct horse battery")])
        #expect(refused.status == 401 || refused.status == 422 || refused.status == 400, "refused: \(refused.status)")
        #expect(refused.headers["Set-Cookie"]?.contains("session=") != true)

        // A Korean city's thread would be in Korean (the NWS warns only in the US: the words are
        // asked for directly).
        let busan = try #require(app.application.cities.city(slug: "busan"))
        let pages = app.application.pages
        let losAngeles = try #require(app.application.cities.city(slug: "los-angeles"))
        let flood = try #require(app.application.warnings.inForce(city: losAngeles.id, now: app.clock.read()).first)
        let words = WarningView.threadOpening(flood, city: busan, now: app.clock.read()) { pages.string($0, $1, $2) }
        #expect(words.hasPrefix("🟧 Flash Flood Warning ") && words.hasSuffix("지금 계신 곳은 어떤가요?"), "\(words)")

        // Polled again: no second thread. Updated: the same thread carries on under the new id.
        app.application.warnings.poll()
        #expect(try app.count("SELECT count(*) FROM posts WHERE warning_id IS NOT NULL AND parent_id IS NULL") == 1)
        try stub.alerts([
            Self.alert("urn:oid:flood-2", event: "Flash Flood Warning", severity: "Extreme", messageType: "Update",
                       sent: "2026-11-21T21:40:00-08:00", ends: "2026-11-22T03:00:00-08:00", geometry: Self.losAngeles,
                       references: ["urn:oid:flood-1"]),
        ])
        app.application.warnings.poll()
        (_, page) = try member.get("/city/los-angeles")
        first = try #require(page.nodes("//section[@id='board']/article").first)
        #expect(first["data-post-id"] == threadID && first["data-warning-id"] == "nws:urn:oid:flood-2" && first["data-pinned"] != nil)
        #expect(try app.count("SELECT count(*) FROM posts WHERE warning_id IS NOT NULL AND parent_id IS NULL") == 1)

        // Its end: unpinned, and still there with its replies.
        stub.answer(status: 200, #"{"type":"FeatureCollection","features":[]}"#)
        app.application.warnings.poll()
        (_, page) = try member.get("/city/los-angeles")
        let thread = try #require(page.nodes("//section[@id='board']/article[@data-post-id='\(threadID)']").first)
        #expect(thread["data-pinned"] == nil && thread["data-warning-id"] == "nws:urn:oid:flood-2")
    }

    /// Issue 65 #10: one warning over many cities (the Los Angeles basin) opens one thread, on the
    /// board of the largest; every other city under it links to that thread from the warning.
    @Test func oneWarningOverManyCitiesIsOneConversation() throws {
        let stub = try NWSStub()
        let basin = ["type": "Polygon", "coordinates": [Self.box(around: 34.05223, -118.24368, size: 0.3)]] as [String: Any]
        try stub.alerts([Self.alert("urn:oid:basin-1", event: "Flash Flood Warning", geometry: basin)])
        let app = try AppHarness { $0.warningsNWSURL = stub.url; $0.warningsEvery = 3600 }
        Self.firstPoll(app)
        let covered = try app.application.database.readStatement { try $0.all("SELECT c.slug FROM warning_cities w JOIN cities c ON c.id = w.city_id WHERE w.warning_id = 'nws:urn:oid:basin-1' ORDER BY c.population DESC", []) { $0.string(0) } }
        #expect(covered.count >= 10, "\(covered.count) cities under it")
        #expect(try app.count("SELECT count(*) FROM posts WHERE warning_id IS NOT NULL") == 1, "one thread for the warning")
        let threadID = try app.count("SELECT id FROM posts WHERE warning_id IS NOT NULL")
        #expect(try app.count("SELECT count(*) FROM posts p JOIN cities c ON c.id = p.city_id WHERE p.warning_id IS NOT NULL AND c.slug = 'los-angeles'") == 1,
                "on the largest city's board")
        for slug in covered.prefix(12) {
            let (_, page) = try app.page("/city/\(slug)")
            let link = try #require(page.nodes("//*[@data-warning]//a[@data-warning-thread]").first, "\(slug)")
            #expect(link["href"] == "/posts/\(threadID)")
            #expect(link.text == "Everyone under this warning talks in one place: on the Los Angeles board")
        }
        app.application.warnings.poll()
        #expect(try app.count("SELECT count(*) FROM posts WHERE warning_id IS NOT NULL") == 1, "polled again: still one")
    }

    /// Issue 43 #2: while a severe or extreme warning is in force, its cities' boards are in event
    /// mode: the page says so, and new members wait longer between posts there (not elsewhere).
    @Test func aSevereWarningPutsItsBoardsInEventMode() throws {
        let stub = try NWSStub()
        try stub.alerts([
            Self.alert("urn:oid:flood-1", event: "Flash Flood Warning", severity: "Severe", geometry: Self.losAngeles),
            Self.alert("urn:oid:wind-1", event: "Wind Advisory", severity: "Moderate",
                       geometry: ["type": "Polygon", "coordinates": [Self.box(around: 41.85003, -87.65005)]]),
        ])
        let app = try AppHarness { $0.warningsNWSURL = stub.url; $0.warningsEvery = 3600 }
        Self.firstPoll(app)
        let newcomer = app.browser()
        try newcomer.signUp("newcomer")
        #expect(try newcomer.get("/city/los-angeles").1.count("//*[@data-event-mode]") == 1)
        #expect(try newcomer.get("/city/chicago").1.count("//*[@data-event-mode]") == 0, "a moderate warning is not an event")
        let pause = app.application.configuration.limits.secondsBetweenPosts * 3 // a new member's (Standing)
        #expect(try newcomer.postOnBoard("los-angeles", "Streets flooding near the river").0.status == 303)
        app.clock.advance(Double(pause + 1))
        #expect(try newcomer.postOnBoard("chicago", "Gusty here but fine").0.status == 303, "elsewhere, the usual pause")
        app.clock.advance(Double(pause + 1))
        let (refused, page) = try newcomer.postOnBoard("los-angeles", "Now the underpass is closed")
        #expect(refused.status == 429)
        #expect(page?.text("//*[@id='post-body']") == "Now the underpass is closed", "the text is kept")
        app.clock.advance(Double(pause * PostingRules.eventPaceFactor))
        #expect(try newcomer.postOnBoard("los-angeles", "Now the underpass is closed").0.status == 303)
    }

    /// From a hostile probe: an alert drawn over the whole world covers no city (the service
    /// warns only where it does, and a warning covers at most `maximumCities`), bidi controls are
    /// dropped from the words, a description keeps its paragraphs, and three warnings in a city
    /// pin two threads and leave the third on the board.
    @Test func aFeedCannotFloodTheBoardsOrReorderThePage() throws {
        let stub = try NWSStub()
        let world = ["type": "Polygon", "coordinates": [[[-180, -89], [180, -89], [180, 89], [-180, 89], [-180, -89]]]] as [String: Any]
        try stub.alerts([
            Self.alert("urn:oid:world-1", event: "Everything Warning", geometry: world),
            Self.alert("urn:oid:a-1", event: "Flood Warning\u{202E}", severity: "Moderate", geometry: Self.losAngeles,
                       description: "* WHAT...Flooding.\n\n* WHERE...Los Angeles."),
            Self.alert("urn:oid:b-1", event: "Wind Advisory", severity: "Minor", geometry: Self.losAngeles),
            Self.alert("urn:oid:c-1", event: "Tornado Warning", severity: "Extreme", geometry: Self.losAngeles),
        ])
        let app = try AppHarness { $0.warningsNWSURL = stub.url; $0.warningsEvery = 3600 }
        Self.firstPoll(app)
        #expect(try app.count("SELECT count(*) FROM warnings WHERE id = 'nws:urn:oid:world-1'") == 0)
        #expect(app.log.lines.contains { $0.contains("nws:urn:oid:world-1: covers") })
        #expect(try app.count("SELECT count(*) FROM posts WHERE warning_id = 'nws:urn:oid:world-1'") == 0)
        #expect(Self.warnings(try app.page("/city/seoul").1).isEmpty)

        let (_, page) = try app.page("/city/los-angeles")
        let events = Self.warnings(page).map { $0["data-event"] ?? "" }
        #expect(events == ["Tornado Warning", "Flood Warning", "Wind Advisory"], "most severe first, no bidi control: \(events)")
        #expect(page.text("//*[@data-warning][@data-event='Flood Warning']//details[@class='warning-details']/p") == "* WHAT...Flooding.\n\n* WHERE...Los Angeles.\n\nTurn around, don't drown.",
                "paragraphs kept, the instruction one of them")
        #expect(page.nodes("//*[@data-warning]//*[@class='warning-severity']").map(\.text) == ["Extreme", "Moderate", "Minor"])
        // Two pinned (the most severe), the third on the board in its place.
        let pinned = page.nodes("//section[@id='board']/article[@data-pinned]").compactMap { $0["data-warning-id"] }
        #expect(pinned == ["nws:urn:oid:c-1", "nws:urn:oid:a-1"] || pinned == ["nws:urn:oid:a-1", "nws:urn:oid:c-1"], "\(pinned)")
        #expect(page.count("//section[@id='board']/article[@data-warning-id='nws:urn:oid:b-1'][not(@data-pinned)]") == 1)
        // A refusal is logged once, not at every poll.
        app.application.warnings.poll()
        #expect(app.log.lines.filter { $0.contains("nws:urn:oid:world-1: covers") }.count == 1)
    }

    /// An answer that is not a feature collection, or whose features are nonsense, never stops
    /// the node and keeps nothing.
    @Test("hostile answers are refused", arguments: [
        #"{"type":"FeatureCollection","features":[{"properties":{"id":"x","sent":"not a date","event":"E"}}]}"#,
        #"{"type":"FeatureCollection","features":[{"properties":{"id":"y","sent":"2026-11-22T05:00:00Z","ends":"2026-11-23T05:00:00Z","event":"E"},"geometry":{"type":"Polygon","coordinates":[[[1e400,2],["a",3],[null]]]}}]}"#,
        #"{"features":"none"}"#, "[]", "", "{\"type\":",
    ])
    func hostileAnswersAreRefused(_ body: String) throws {
        let stub = try NWSStub()
        stub.answer(status: 200, body)
        let app = try AppHarness { $0.warningsNWSURL = stub.url; $0.warningsEvery = 3600 }
        Self.firstPoll(app)
        #expect(try app.count("SELECT count(*) FROM warning_cities") == 0)
        #expect(try app.get("/city/seoul").status == 200)
    }

    /// Several warnings in one city: the most severe in full, each other one as its event line
    /// with the rest behind "More" (four of them filled a phone's screen before the weather).
    @Test func warningsAfterTheFirstKeepTheirRestBehindMore() throws {
        let stub = try NWSStub()
        try stub.alerts([
            Self.alert("urn:oid:wind-2", event: "Wind Advisory", severity: "Moderate", geometry: Self.losAngeles),
            Self.alert("urn:oid:flood-2", event: "Flash Flood Warning", severity: "Extreme", geometry: Self.losAngeles),
            Self.alert("urn:oid:fog-2", event: "Dense Fog Advisory", severity: "Minor", geometry: Self.losAngeles),
        ])
        let app = try AppHarness { $0.warningsNWSURL = stub.url; $0.warningsEvery = 3600 }
        Self.firstPoll(app)
        let (_, page) = try app.page("/city/los-angeles")
        let shown = Self.warnings(page)
        #expect(shown.map { $0["data-event"] } == ["Flash Flood Warning", "Wind Advisory", "Dense Fog Advisory"], "most severe first")
        #expect(page.count("//*[@data-warning][@data-event='Flash Flood Warning']//details[@class='warning-rest']") == 0)
        #expect(page.count("//*[@data-warning][@data-event='Flash Flood Warning']/p[@class='warning-headline']") == 1, "the first in full")
        for event in ["Wind Advisory", "Dense Fog Advisory"] {
            #expect(page.count("//*[@data-warning][@data-event='\(event)']/p[@class='warning-event']") == 1, "its event line shown")
            #expect(page.count("//*[@data-warning][@data-event='\(event)']/details[@class='warning-rest']/p[@class='warning-headline']") == 1)
            #expect(page.text("//*[@data-warning][@data-event='\(event)']/details[@class='warning-rest']/summary") == "More (\(event))")
        }
        let korean = try app.page("/city/los-angeles?lang=ko").1
        #expect(korean.text("//*[@data-warning][@data-event='Wind Advisory']/details/summary")?.hasPrefix("더 보기") == true)
    }

    /// A source's threads are kept from that source's warnings alone, read as such (not every
    /// warning in force, filtered afterwards): what `WarningThreads.keep` reads at each poll.
    @Test func warningsInForceAreReadForOneSource() throws {
        let app = try AppHarness()
        let seoul = try app.count("SELECT id FROM cities WHERE slug = 'seoul'"), now = app.clock.read().timeIntervalSince1970
        for (id, source) in [("nws:a", "nws"), ("kma:b", "kma"), ("nws:c", "nws")] {
            try app.execute("INSERT INTO warnings (id, source, event, severity, urgency, sent, onset, expires) VALUES (?, ?, 'Flood', 'severe', 'Expected', ?, ?, ?)",
                            [id, source, now, now, now + 3600])
            try app.execute("INSERT INTO warning_texts (warning_id, language, headline, description) VALUES (?, 'en', ?, '')", [id, "Headline \(id)"])
            try app.execute("INSERT INTO warning_cities (warning_id, city_id) VALUES (?, ?)", [id, seoul])
        }
        let database = app.application.database, at = app.clock.read()
        let nws = try database.read { try WarningStore.inForce(source: "nws", now: at, $0) }[Int64(seoul)] ?? []
        #expect(Set(nws.map(\.id)) == ["nws:a", "nws:c"])
        #expect(nws.allSatisfy { $0.texts.map(\.headline) == ["Headline \($0.id)"] })
        let seoulKMA = try database.read { try WarningStore.inForce(cityID: Int64(seoul), source: "kma", now: at, $0) }
        #expect(seoulKMA[Int64(seoul)]?.map(\.id) == ["kma:b"])
        #expect(try database.read { try WarningStore.inForce(now: at, $0) }[Int64(seoul)]?.count == 3)
    }
}
