import Foundation
import HTTPTestSupport
import Testing
@testable import Weatherboard

/// Issue 46 #4: pages read from a PostgreSQL streaming replica (`--database-replica-url`), a
/// member reads their own writes whatever the replica has replayed, and a replica that lags past
/// the bound or stops is passed over. The replica is real: `pg_basebackup` of the tests' own
/// server, streaming on loopback.
@Suite(.serialized) struct ReplicaTests {
    /// A node on a fresh database of the tests' server, reading from the replica; nil where
    /// PostgreSQL is not available and not required.
    static func node(maximumLag: Double, sharedDatabase: String? = nil) throws -> (app: AppHarness, replica: TestReplica, url: String)? {
        guard TestEngine.enabled.contains(.postgres) else { return nil }
        let replica = try TestReplica.require()
        let url = try sharedDatabase ?? replica.primary.freshDatabase()
        let name = String(url.split(separator: "/").last!)
        let app = try AppHarness(sharedDatabase: url) { configuration in
            configuration.replicaURLs = [replica.url(name)]
            configuration.replicaMaximumLag = maximumLag
        }
        try replica.caughtUp(with: app)
        return (app, replica, url)
    }

    /// The post is on its author's next page at once though the replica has stopped replaying;
    /// another member's pages (read from the replica, cached under the versions) show it once
    /// replay resumes, not before.
    @Test func aPostIsOnItsAuthorsNextPageThoughTheReplicaIsPaused() throws {
        guard let (app, replica, url) = try Self.node(maximumLag: 60) else { return }
        defer { (try? TestReplica.require())?.primary.drop(url) }
        let author = app.browser(), reader = app.browser(), guest = app.browser()
        try author.signUp("author")
        try reader.signUp("reader")
        try author.get("/city/seoul")
        #expect(try reader.get("/city/seoul").1.nodes("//p[@class='post-body'][contains(., 'Fog on the river')]").isEmpty)
        #expect(try guest.get("/city/seoul").1.nodes("//p[@class='post-body'][contains(., 'Fog on the river')]").isEmpty)
        // What those first pages wrote (a forecast, a visit) is on the replica before it pauses.
        try replica.caughtUp(with: app)
        let readsOnReplica = app.application.database.readStatements.replica.load(ordering: .relaxed)
        #expect(try reader.get("/city/seoul").0.status == 200)
        #expect(app.application.database.readStatements.replica.load(ordering: .relaxed) > readsOnReplica,
                "the reader's page was read from the replica")

        try replica.pauseReplay()
        defer { try? replica.resumeReplay() }
        let (posted, _) = try author.postOnBoard("seoul", "Fog on the river this morning")
        #expect(posted.status == 303)
        #expect(author.cookies[RequestReads.cookieName] != nil, "the write's position goes with the author")
        #expect(try author.get("/city/seoul").1.nodes("//p[@class='post-body'][contains(., 'Fog on the river')]").count == 1)
        #expect(try reader.get("/city/seoul").1.nodes("//p[@class='post-body'][contains(., 'Fog on the river')]").isEmpty,
                "the reader's page comes from the paused replica")
        #expect(try guest.get("/city/seoul").1.nodes("//p[@class='post-body'][contains(., 'Fog on the river')]").isEmpty,
                "the guest's kept page stands until the replica has the post")

        try replica.resumeReplay()
        try waitUntil("the reader sees the post once the replica replays it", timeout: 20) {
            try !reader.get("/city/seoul").1.nodes("//p[@class='post-body'][contains(., 'Fog on the river')]").isEmpty
        }
        try waitUntil("so does the guest", timeout: 20) {
            try !guest.get("/city/seoul").1.nodes("//p[@class='post-body'][contains(., 'Fog on the river')]").isEmpty
        }
        #expect(app.application.database.readStatements.replica.load(ordering: .relaxed) > readsOnReplica)
    }

    /// A member who posts through one node reads it on the other's next page: the position of
    /// their write travels in a cookie, and the other node reads the primary until its replica
    /// has it.
    @Test func aPostThroughOneNodeIsOnTheAuthorsNextPageOnTheOther() throws {
        guard let (a, replica, url) = try Self.node(maximumLag: 60) else { return }
        defer { (try? TestReplica.require())?.primary.drop(url) }
        guard let (b, _, _) = try Self.node(maximumLag: 60, sharedDatabase: url) else { return }
        try waitUntil("both nodes listen for each other's changes", timeout: 20) {
            a.application.changeFeed?.isListening == true && b.application.changeFeed?.isListening == true
        }
        let author = a.browser()
        try author.signUp("author")
        try replica.caughtUp(with: a)
        try replica.pauseReplay()
        defer { try? replica.resumeReplay() }
        try author.postOnBoard("seoul", "Hail on the bridge")
        let onB = b.browser()
        onB.cookies = author.cookies
        #expect(try onB.get("/city/seoul").1.nodes("//p[@class='post-body'][contains(., 'Hail on the bridge')]").count == 1)
        let other = b.browser()
        #expect(try other.get("/city/seoul").1.nodes("//p[@class='post-body'][contains(., 'Hail on the bridge')]").isEmpty)
        try replica.resumeReplay()
        try waitUntil("the other reader sees it once replayed", timeout: 20) {
            try !other.get("/city/seoul").1.nodes("//p[@class='post-body'][contains(., 'Hail on the bridge')]").isEmpty
        }
    }

    /// A replica further behind than `--database-replica-max-lag` serves nothing: pages and the
    /// change held for it go on without it, and it serves again once it has caught up.
    @Test func aReplicaThatLagsPastTheBoundIsPassedOver() throws {
        guard let (app, replica, url) = try Self.node(maximumLag: 0.5) else { return }
        defer { (try? TestReplica.require())?.primary.drop(url) }
        let author = app.browser(), reader = app.browser()
        try author.signUp("author")
        try reader.signUp("reader")
        try replica.caughtUp(with: app)
        try replica.pauseReplay()
        defer { try? replica.resumeReplay() }
        try author.postOnBoard("seoul", "Thunder over the harbour")
        let state = try #require(app.application.database.replicas?.replicas.first)
        try waitUntil("the paused replica is passed over", timeout: 20) { !state.usable.load(ordering: .relaxed) }
        #expect(try reader.get("/city/seoul").1.nodes("//p[@class='post-body'][contains(., 'Thunder over the harbour')]").count == 1)
        // Issue 62 #4: the lag exported is the real one, past the bound (it stayed at 0.5 s).
        try waitUntil("the lag grows past the bound", timeout: 20) {
            let line = try app.get("/metrics").text.split(separator: "\n").first { $0.hasPrefix("weatherboard_replica_lag_seconds{") }
            return (line?.split(separator: " ").last.flatMap { Double($0) } ?? 0) >= 2
        }
        try replica.resumeReplay()
        try waitUntil("the replica serves again once caught up", timeout: 20) { state.usable.load(ordering: .relaxed) }
    }

    /// A stopped replica: the read that meets it goes to the primary (the page is whole, no
    /// 503), the replica is passed over within `ReplicaSet.silenceAllowed`, and serves again
    /// once it is back.
    @Test func aStoppedReplicaSendsReadsToThePrimary() throws {
        guard let (app, replica, url) = try Self.node(maximumLag: 60) else { return }
        defer { (try? TestReplica.require())?.primary.drop(url) }
        let reader = app.browser()
        try reader.signUp("reader")
        try reader.postOnBoard("seoul", "Clear skies at last")
        try replica.caughtUp(with: app)
        let counts = app.application.database.readStatements
        try replica.stop()
        defer { try? replica.start() }
        let (page, document) = try reader.get("/city/seoul")
        #expect(page.status == 200)
        #expect(document.nodes("//p[@class='post-body'][contains(., 'Clear skies at last')]").count == 1)
        let state = try #require(app.application.database.replicas?.replicas.first)
        try waitUntil("the stopped replica is passed over", timeout: 20) { !state.usable.load(ordering: .relaxed) }
        // Issue 62 #4: the lag says -1 while the standby does not answer (it read -0.001).
        try waitUntil("the lag reads -1", timeout: 20) {
            try app.get("/metrics").text.split(separator: "\n").contains { line in
                line.hasPrefix("weatherboard_replica_lag_seconds{") && (line.hasSuffix(" -1") || line.hasSuffix(" -1.0"))
            }
        }
        let before = (counts.primary.load(ordering: .relaxed), counts.replica.load(ordering: .relaxed))
        #expect(try reader.get("/city/seoul").0.status == 200)
        #expect(counts.primary.load(ordering: .relaxed) > before.0)
        #expect(counts.replica.load(ordering: .relaxed) == before.1)

        try replica.start()
        try waitUntil("the replica serves again", timeout: 30) { state.usable.load(ordering: .relaxed) }
        try replica.caughtUp(with: app)
        let again = counts.replica.load(ordering: .relaxed)
        #expect(try reader.get("/city/seoul").0.status == 200)
        #expect(counts.replica.load(ordering: .relaxed) > again)
    }

    /// Replicas are PostgreSQL's: a SQLite site that names one is refused at start.
    @Test func aReplicaBesideSQLiteIsRefused() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("wb-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        #expect(throws: MigrationError.self) {
            try AppDatabase.open(.sqlite(path: folder + "/site.sqlite"), migrationsDirectory: AppConfiguration.repositoryFolder("Migrations"),
                                 replicas: (["postgresql://replica.internal/weatherboard"], 1))
        }
    }

    @Test func walPositionsReadAsPostgreSQLPrintsThem() {
        #expect(WALPosition.parse("0/3000060") == 0x300_0060)
        #expect(WALPosition.parse("16/B374D848") == 0x16_B374_D848)
        #expect(WALPosition.parse("16") == nil)
        #expect(WALPosition.parse("1FFFFFFFF/0") == nil)
    }
}

/// A hot standby (`pg_basebackup -R`) of a PostgreSQL server of its own, made once per test
/// process on free ports, stopped with it. Not the other tests' server: a copy of the template
/// per test is a whole database in the log, and replay, one process, fell seconds behind the
/// suite (CI at 22b2642: 30 s waits for it timed out).
final class TestReplica: Sendable {
    let primary: TestPostgres
    let folder: String
    let port: Int
    private let bin: String
    private let options: String

    static let shared: Result<TestReplica, TestPostgresUnavailable> = {
        do { return .success(try TestReplica()) } catch let error as TestPostgresUnavailable { return .failure(error) } catch {
            return .failure(TestPostgresUnavailable(description: "\(error)"))
        }
    }()

    static func require() throws -> TestReplica { try shared.get() }

    private init() throws {
        let primary = try TestPostgres()
        self.primary = primary
        guard let bin = TestPostgres.binaries() else { throw TestPostgresUnavailable(description: "PostgreSQL is not installed") }
        self.bin = bin
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("wb-replica-\(UUID().uuidString)").path
        port = try freeLoopbackPort()
        // A standby needs at least the primary's max_connections.
        options = "-p \(port) -k \(folder) -c listen_addresses=127.0.0.1 -c max_connections=400 -c fsync=off -c shared_buffers=32MB"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try shell("\(bin)/pg_basebackup -h 127.0.0.1 -p \(primary.port) -U postgres -D \(folder)/data -X stream -R -c fast")
        try start()
        // Stopped and removed when this process is gone, however it ends.
        let watchdog = "while [ -d /proc/\(getpid()) ]; do sleep 1; done; \(bin)/pg_ctl -D \(folder)/data stop -m immediate; rm -rf \(folder)"
        _ = try ChildProcess(shell: getuid() == 0 ? "exec su postgres -s /bin/sh -c '\(watchdog)' >/dev/null 2>&1" : "(\(watchdog)) >/dev/null 2>&1")
    }

    func url(_ database: String) -> String { "postgresql://postgres@127.0.0.1:\(port)/\(database)" }

    func start() throws {
        try shell("\(bin)/pg_ctl -D \(folder)/data -l \(folder)/log -w -o \"\(options)\" start")
    }

    func stop() throws {
        try shell("\(bin)/pg_ctl -D \(folder)/data -w -m fast stop")
    }

    func pauseReplay() throws {
        try admin { try $0.simple("SELECT pg_wal_replay_pause()") }
        try waitUntil("replay is paused", timeout: 10) {
            try admin { try $0.simpleValue("SELECT pg_get_wal_replay_pause_state()") } == "paused"
        }
    }

    func resumeReplay() throws {
        try admin { try $0.simple("SELECT pg_wal_replay_resume()") }
    }

    /// Waits until the replica has replayed everything the primary holds now, and the node uses it.
    func caughtUp(with app: AppHarness) throws {
        let now = try Self.asking(primary.url("postgres")) {
            try $0.simpleValue("SELECT \(WALPosition.insertQuery)").flatMap(WALPosition.parse) ?? 0
        }
        let state = try #require(app.application.database.replicas?.replicas.first)
        try waitUntil("the replica has replayed the primary's writes and serves reads", timeout: 30) {
            state.usable.load(ordering: .relaxed) && state.replayed.load(ordering: .relaxed) >= now
        }
    }

    private func admin<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        try Self.asking(url("postgres"), body)
    }

    private static func asking<T>(_ url: String, _ body: (PostgresConnection) throws -> T) throws -> T {
        let database = try PostgresDatabase(url: url, maximumConnections: 1)
        defer { try? database.close() }
        return try database.withConnection(body)
    }

    /// As the `postgres` user when the tests run as root (PostgreSQL refuses root).
    private func shell(_ command: String) throws {
        let logged = "\(command) >>\(folder)/setup.log 2>&1"
        let status = try ChildProcess(shell: getuid() == 0 ? "chown -R postgres \(folder) && su postgres -s /bin/sh -c '\(logged)'" : logged).wait()
        guard status == 0 else {
            let text = (try? String(contentsOfFile: folder + "/setup.log", encoding: .utf8)) ?? ""
            throw TestPostgresUnavailable(description: "`\(command)` failed: \(text.suffix(2000))")
        }
    }
}
