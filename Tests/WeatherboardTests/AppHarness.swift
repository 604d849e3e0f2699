import Foundation
import HTTPServer
import HTTPTestSupport
import Logging
import Testing
@testable import Weatherboard

/// The real application on an ephemeral port with a fresh database in a temporary folder.
final class AppHarness: Sendable {
    let application: Application
    let folder: String
    /// The engine this test runs on; a PostgreSQL test has a database of its own.
    let engine = TestEngine.current
    /// The PostgreSQL database this harness made (and drops); nil on SQLite or a shared database.
    private let postgresURL: String?
    /// The application's clock; tests move it.
    let clock = TestClock(AppHarness.fixedNow)
    /// What the application logged (also written to standard error, as before).
    let log = CapturedLog()
    var port: Int { application.server.port }

    /// The database, as the application was given it (a SQLite file, or a PostgreSQL URL).
    let databasePath: String
    let databaseURL: String?
    /// The harness whose database this one opens too: kept alive while this one lives (its end
    /// removes the file, or drops the database).
    private let sharing: AppHarness?

    /// - Parameters:
    ///   - sharedDatabase: a PostgreSQL URL other nodes use too (the caller drops it).
    ///   - other: a harness whose database this one opens too, on either engine (a second node,
    ///     or the same site after a restart); `other` keeps and drops it.
    init(sharedDatabase: String? = nil, sharing other: AppHarness? = nil, configure: (inout AppConfiguration) -> Void = { _ in }) throws {
        sharing = other
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("wb-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        var configuration = AppConfiguration()
        configuration.port = 0
        configuration.databasePath = other?.databasePath ?? folder + "/test.sqlite"
        switch engine {
        case _ where sharedDatabase != nil || other?.databaseURL != nil:
            configuration.databaseURL = sharedDatabase ?? other?.databaseURL
            postgresURL = nil
        case .sqlite where other != nil:
            postgresURL = nil
        case .sqlite:
            try FileManager.default.copyItem(atPath: AppHarness.templateDatabase, toPath: configuration.databasePath)
            postgresURL = nil
        case .postgres:
            let url = try TestPostgres.require().freshDatabase()
            configuration.databaseURL = url
            postgresURL = url
        }
        configuration.logLevel = .warning
        configuration.server.eventLoops = 1
        configuration.weatherProviders = ["demo"]
        // Pages wait for a stub provider however busy the machine is; tests of the budget set their own.
        configuration.weatherFirstFetchBudget = 10
        let clock = self.clock
        configuration.clock = { clock.read() }
        configuration.passwordCost = 1 << 10 // fast hashes in tests; production uses 2^15
        configure(&configuration)
        databasePath = configuration.databasePath
        databaseURL = configuration.databaseURL
        // A test that stubs Open-Meteo stubs its air-quality service too (the stub answers both
        // paths): no test asks the real one.
        if configuration.airQualityURL == AppConfiguration().airQualityURL { configuration.airQualityURL = configuration.openMeteoURL }
        // Normals only where a test asks for them (their fetch is one more upstream call).
        if configuration.archiveURL == AppConfiguration().archiveURL { configuration.archiveURL = "" }
        // Warnings likewise: no test asks the real weather services.
        if configuration.warningsNWSURL == nil { configuration.warningsNWSURL = "" }
        if configuration.warningsMeteoAlarmURL == nil { configuration.warningsMeteoAlarmURL = "" }
        if configuration.warningsKMAURL == nil { configuration.warningsKMAURL = "" }
        let log = self.log
        application = try Application(configuration: configuration,
                                      logger: Logger(label: "weatherboard") { _ in CapturedLog.Handler(log: log) })
        try application.start()
    }

    /// 2026-11-22 05:45 UTC: 14:45 in Seoul, 18:45 in Auckland, and still the 21st in Honolulu.
    static let fixedNow = Date(timeIntervalSince1970: 1_795_326_300)

    /// A migrated database with the city catalog imported, made once and copied for each test
    /// (the import is the slow part of start-up).
    static let templateDatabase: String = {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("wb-template-\(UUID().uuidString).sqlite").path
        do {
            let (database, _) = try AppDatabase.open(.sqlite(path: path), migrationsDirectory: AppConfiguration.repositoryFolder("Migrations"))
            try CityCatalog.importIfEmpty(into: database)
            try database.close()
        } catch {
            fatalError("cannot prepare the template database: \(error)")
        }
        return path
    }()

    deinit {
        application.server.shutdown()
        application.server.wait()
        application.close()
        if let postgresURL { (try? TestPostgres.require())?.drop(postgresURL) }
        // Every page the test showed asked only for strings the catalogs have.
        let missing = application.pages.renderer.localization.missingKeys
        #expect(missing.isEmpty, "catalog keys asked for but missing: \(missing.sorted())")
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// The command-line settings that name this harness's database (for the `weatherboard` commands).
    var databaseArguments: [String] {
        if let url = application.configuration.databaseURL { return ["--database-url", url] }
        return ["--db", application.configuration.databasePath]
    }

    /// A browser with its own cookie jar. Its requests go through `Server.exchange` in this
    /// process unless `overSocket`: a test of what the server does with connections, threads
    /// and time asks for the socket.
    /// `sendsFetchMetadata`: false for an old browser or a script (no `Sec-Fetch-Site`).
    func browser(overSocket: Bool = false, sendsFetchMetadata: Bool = true) -> Browser {
        let browser = overSocket ? Browser(port: port) : Browser(server: application.server)
        if !sendsFetchMetadata { browser.fetchSite = nil }
        return browser
    }

    /// Makes a signed-up person an admin (Given steps).
    func promoteToAdmin(_ username: String) throws {
        try execute("UPDATE users SET role = 'admin' WHERE username = ?", [username])
    }

    /// Given members in good standing (`Standing` level 1, as a moderator sets it): what a test
    /// about something else needs of people who post quickly or report.
    func inGoodStanding(_ usernames: String...) throws {
        for username in usernames { try execute("UPDATE users SET level = 1, level_set = 1 WHERE username = ?", [username]) }
    }

    /// Given an admin ("chief"), an author ("author") with one post on Seoul's board saying
    /// `text`, and a reader ("reporter") who reported it as spam.
    func reportedPost(_ text: String) throws -> (admin: Browser, author: Browser, reporter: Browser, postID: Int64) {
        let admin = browser()
        try admin.signUp("chief")
        try promoteToAdmin("chief")
        let author = browser()
        try author.signUp("author")
        try author.postOnBoard("seoul", text)
        let postID = Int64(try count("SELECT id FROM posts"))
        let reporter = browser()
        try reporter.signUp("reporter")
        try reporter.get("/city/seoul")
        try reporter.post("/posts/\(postID)/report", [("reason", "spam")])
        return (admin, author, reporter, postID)
    }

    /// Runs SQL against the application's database (Then checks): the first column of the first row.
    func count(_ sql: String, _ arguments: [any SQLArgument] = []) throws -> Int {
        try application.database.readStatement { try $0.one(sql, arguments) { $0.int(0) } ?? 0 }
    }

    /// Changes the application's database behind its back (Given steps), and says that anything
    /// may have changed, as the stores announce their own writes: kept pages and boards are read
    /// again (an operator's SQL would show when they expire).
    func execute(_ sql: String, _ arguments: [any SQLArgument] = []) throws {
        try application.database.write(.cluster) { db, changes in
            try db.execute(sql, arguments.map { $0.sqlValue })
            try changes.emit(.everything)
        }
    }

    /// Waits until the background work `name` ("mail", "push", "digest", "rain alerts", …) has
    /// finished `rounds` more rounds (the first may have begun before the caller's change): what it
    /// would do, it has done, so a test that then finds nothing sent proves something.
    func waitForRounds(of name: String, _ rounds: Int = 2) throws {
        guard let work = application.site.worker(name) else { throw CocoaError(.featureUnsupported) }
        let target = work.rounds + rounds
        try waitUntil("\(name) ran \(rounds) rounds", timeout: 20) { work.rounds >= target }
    }

    /// A GET through `Server.exchange`, or over a socket when `overSocket`.
    /// A GET as a browser sends it (`Sec-Fetch-Site`, unless `fetchMetadata` is false: an old
    /// browser or a script).
    func get(_ target: String, headers: [(String, String)] = [], overSocket: Bool = false, fetchMetadata: Bool = true) throws -> WireResponse {
        let headers = fetchMetadata && !headers.contains(where: { $0.0 == "Sec-Fetch-Site" }) ? headers + [("Sec-Fetch-Site", "none")] : headers
        return overSocket ? try TestClient.request(port: port, "GET", target, headers: headers)
            : try TestClient.exchange(with: application.server, "GET", target, headers: headers)
    }

    /// GETs an HTML page and parses it.
    func page(_ target: String, headers: [(String, String)] = [], overSocket: Bool = false) throws -> (WireResponse, MarkupDocument) {
        let response = try get(target, headers: headers, overSocket: overSocket)
        return (response, try MarkupDocument(response.body))
    }
}

/// A cookie-keeping client that submits forms as a browser does, with the `Sec-Fetch-Site` a
/// current browser sends (or none: an old browser, which confirms on the page it is shown).
final class Browser {
    let port: Int
    /// The server requests go to in this process (`Server.exchange`); nil: over a socket to `port`.
    let server: Server?
    var cookies: [String: String] = [:]
    var lastPage: MarkupDocument?
    var acceptLanguage: String?
    /// The client address this browser connects from (another loopback address acts as another person's network).
    var source: String?
    /// What a proxy in front would say about the client (`X-Forwarded-For`).
    var forwardedFor: String?
    /// The `Sec-Fetch-Site` every request sends, as every current browser does for its own
    /// pages and forms; nil: an old browser or a script, whose state changes are confirmed first.
    var fetchSite: String? = "same-origin"

    /// A browser talking to `port` over sockets (a server in another process, or a test of connections).
    init(port: Int) {
        self.port = port
        server = nil
    }

    /// A browser whose requests `server` answers in this process, with no socket.
    init(server: Server) {
        port = server.port
        self.server = server
    }

    /// A script's request with a JSON body (`fetch` from the page), cookies and Fetch Metadata as a browser sends them.
    @discardableResult
    func json(_ method: String, _ target: String, _ body: String) throws -> WireResponse {
        let response = try send(method, target, headers: headers + [("Content-Type", "application/json")], body: Array(body.utf8))
        keepCookies(response)
        return response
    }

    private func send(_ method: String, _ target: String, headers: [(String, String)], body: [UInt8] = []) throws -> WireResponse {
        if let server { return try TestClient.exchange(with: server, method, target, headers: headers, body: body, source: source) }
        return try TestClient.request(port: port, method, target, headers: headers, body: body, source: source)
    }

    private var headers: [(String, String)] {
        var headers: [(String, String)] = []
        if !cookies.isEmpty { headers.append(("Cookie", cookies.map { "\($0.key)=\($0.value)" }.joined(separator: "; "))) }
        if let acceptLanguage { headers.append(("Accept-Language", acceptLanguage)) }
        if let forwardedFor { headers.append(("X-Forwarded-For", forwardedFor)) }
        if let fetchSite { headers.append(("Sec-Fetch-Site", fetchSite)) }
        return headers
    }

    private func keepCookies(_ response: WireResponse) {
        for value in response.headers.values("Set-Cookie") {
            let pair = value.split(separator: ";")[0].split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(pair[0]), cookieValue = pair.count > 1 ? String(pair[1]) : ""
            if value.contains("Max-Age=0") { cookies[name] = nil } else { cookies[name] = cookieValue }
        }
    }

    @discardableResult
    func get(_ target: String) throws -> (WireResponse, MarkupDocument) {
        // Like a browser, never send the fragment.
        let target = target.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? target
        let response = try send("GET", target, headers: headers)
        keepCookies(response)
        let page = try MarkupDocument(response.body.isEmpty ? Array("<html></html>".utf8) : response.body)
        if response.headers["Content-Type"]?.hasPrefix("text/html") == true { lastPage = page }
        return (response, page)
    }

    /// Posts a form.
    @discardableResult
    func post(_ target: String, _ fields: [(String, String)]) throws -> (WireResponse, MarkupDocument?) {
        let body = fields.map { "\(percentEncode($0.0))=\(percentEncode($0.1))" }.joined(separator: "&")
        var headers = self.headers
        headers.append(("Content-Type", "application/x-www-form-urlencoded"))
        return try answer(to: send("POST", target, headers: headers, body: Array(body.utf8)))
    }

    /// A form's answer as the browser takes it: its cookies kept, a page it shows parsed.
    private func answer(to response: WireResponse) throws -> (WireResponse, MarkupDocument?) {
        keepCookies(response)
        var page: MarkupDocument?
        if response.headers["Content-Type"]?.hasPrefix("text/html") == true, !response.body.isEmpty {
            page = try MarkupDocument(response.body)
            lastPage = page
        }
        return (response, page)
    }

    /// A file in a multipart form.
    struct Upload {
        var name = "photo"
        var filename: String
        var contentType: String
        var bytes: [UInt8]
    }

    /// Submits the confirmation the last page asks for (an old browser's state change: `UnstatedPosts`),
    /// its kept fields as they are, with what the person types or chooses again.
    @discardableResult
    func confirm(typing typed: [(String, String)] = [], files: [Upload] = []) throws -> (WireResponse, MarkupDocument?) {
        let form = try #require(lastPage?.nodes("//form[contains(@class,'confirm-form')]").first)
        let kept = (lastPage?.nodes("//form[contains(@class,'confirm-form')]//input[@type='hidden']") ?? []).map { ($0["name"] ?? "", $0["value"] ?? "") }
        let action = try #require(form["action"])
        return form["enctype"] == "multipart/form-data" ? try postMultipart(action, kept + typed, files: files) : try post(action, kept + typed)
    }

    /// Posts a `multipart/form-data` form as a browser sends one with a file input.
    @discardableResult
    func postMultipart(_ target: String, _ fields: [(String, String)], files: [Upload]) throws -> (WireResponse, MarkupDocument?) {
        let all = fields
        let boundary = "----WeatherboardTestBoundary\(UUID().uuidString.prefix(8))"
        var body: [UInt8] = []
        for (name, value) in all {
            body += Array("--\(boundary)\r\nContent-Disposition: form-data; name=\"\(name)\"\r\n\r\n\(value)\r\n".utf8)
        }
        for file in files {
            body += Array("--\(boundary)\r\nContent-Disposition: form-data; name=\"\(file.name)\"; filename=\"\(file.filename)\"\r\nContent-Type: \(file.contentType)\r\n\r\n".utf8)
            body += file.bytes
            body += Array("\r\n".utf8)
        }
        body += Array("--\(boundary)--\r\n".utf8)
        var headers = self.headers
        headers.append(("Content-Type", "multipart/form-data; boundary=\(boundary)"))
        return try answer(to: send("POST", target, headers: headers, body: body))
    }

    /// Signs up through the form and stays signed in.
    @discardableResult
    func signUp(_ username: String, displayName: String? = nil, password: String = "correct horse battery") throws -> WireResponse {
        try get("/signup")
        let (response, _) = try post("/signup", [("username", username), ("display_name", displayName ?? username.capitalized),
                                                 ("password", password)])
        // An old browser is asked first (`UnstatedPosts`), and types the password again.
        if fetchSite == nil && response.status == 200 { return try confirm(typing: [("password", password)]).0 }
        return response
    }

    /// Posts on a city board from its page.
    @discardableResult
    func postOnBoard(_ slug: String, _ text: String) throws -> (WireResponse, MarkupDocument?) {
        try get("/city/\(slug)")
        return try post("/city/\(slug)/posts", [("body", text)])
    }
}

/// Log lines kept for a test to read, each also written to standard error.
final class CapturedLog: Sendable {
    private let kept = Locked<[String]>([])
    var lines: [String] { kept.value }

    struct Handler: LogHandler {
        let log: CapturedLog
        var logLevel: Logger.Level = .info
        var metadata: Logger.Metadata = [:]
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            // The metadata too (the access log's `path`): what a collector would keep.
            let fields = metadata.merging(event.metadata ?? [:]) { $1 }
            let line = "\(event.level) \(event.message)" + (fields.isEmpty ? "" : " " + fields.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " "))
            log.kept.update { $0.append(line) }
            FileHandle.standardError.write(Data((line + "\n").utf8))
        }
    }
}
