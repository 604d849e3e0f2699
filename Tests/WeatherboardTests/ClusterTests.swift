import Foundation
import HTTPTestSupport
import Testing
@testable import Weatherboard

/// Two nodes on one PostgreSQL database, as behind a load balancer: they share nothing but the
/// database, yet a visitor may land on either for any request.
@Suite(.serialized) struct ClusterTests {
    /// A shared database and two nodes on it; nil (with the reason printed) where PostgreSQL is
    /// not available and not required.
    static func twoNodes(configure: @escaping (inout AppConfiguration) -> Void = { _ in })
        throws -> (a: AppHarness, b: AppHarness, drop: () -> Void)? {
        guard TestEngine.enabled.contains(.postgres) else { return nil }
        let postgres = try TestPostgres.require()
        let url = try postgres.freshDatabase()
        let a = try AppHarness(sharedDatabase: url, configure: configure)
        let b = try AppHarness(sharedDatabase: url, configure: configure)
        // A node starts listening for the other's changes on a thread of its own, a moment after
        // it starts: a test that writes through one node at once could beat the other's LISTEN
        // (under a busy CI machine it did, once in a few full runs).
        try waitUntil("both nodes listen for each other's changes", timeout: 20) {
            a.application.changeFeed?.isListening == true && b.application.changeFeed?.isListening == true
        }
        return (a, b, { postgres.drop(url) })
    }

    /// Issue 44: a photo posted through one node is on the other's board and served by it, the same bytes.
    @Test func aPhotoPostedThroughOneNodeIsServedByTheOther() throws {
        guard let (a, b, drop) = try Self.twoNodes(configure: { $0.limits.secondsBetweenPosts = 0 }) else { return }
        defer { drop() }
        let poster = a.browser()
        try poster.signUp("photographer")
        try a.inGoodStanding("photographer")
        #expect(try PhotoTests.post(poster, "A halo around the sun", photo: "photo.webp", alt: "A halo").0.status == 303)
        let image = try #require(try PhotoTests.images(b.browser()).first)
        #expect(image["alt"] == "A halo")
        let hash = try #require(image["data-photo"])
        for variant in ["webp", "480.webp", "jpg"] {
            let there = try b.get("/photos/\(hash).\(variant)"), here = try a.get("/photos/\(hash).\(variant)")
            #expect(there.status == 200 && !there.body.isEmpty && there.body == here.body, "\(variant)")
        }
    }

    /// Issue 43 #2: two nodes taking the same warnings at once open one thread per warning and
    /// city, not two.
    @Test func twoNodesOpenOneThreadPerWarningAndCity() throws {
        let stub = try NWSStub()
        try stub.alerts([WarningTests.alert("urn:oid:flood-1", event: "Flash Flood Warning", geometry: WarningTests.losAngeles)])
        guard let (a, b, drop) = try Self.twoNodes(configure: { $0.warningsNWSURL = stub.url; $0.warningsEvery = 3600 }) else { return }
        defer { drop() }
        WarningTests.firstPoll(a)
        WarningTests.firstPoll(b)
        let polls = [a, b].map { node in Thread { node.application.warnings.poll() } }
        polls.forEach { $0.start() }
        try waitUntil("both polls ended", timeout: 20) { a.application.warnings.polls.load(ordering: .acquiring) >= 2 && b.application.warnings.polls.load(ordering: .acquiring) >= 2 }
        let covered = try a.count("SELECT count(*) FROM warning_cities")
        #expect(covered >= 1)
        #expect(try a.count("SELECT count(*) FROM posts WHERE warning_id IS NOT NULL") == 1, "one thread for the warning")
        #expect(try a.count("SELECT count(*) FROM users WHERE is_system = 1") == 1)
        #expect(String(decoding: try b.get("/city/los-angeles").body, as: UTF8.self).contains(#"data-warning-id="nws:urn:oid:flood-1""#))
    }

    /// Issue 27 #4: a listening connection whose backend froze delivers nothing and reports
    /// nothing; the node asks it to answer after a few silent seconds, reconnects when it does
    /// not, and drops its cached pages (guest pages are kept 10 minutes here, so only that can
    /// bring node B's post to node A's page within the wait).
    @Test func aFrozenListenerIsNoticedAndCachedPagesGiveWay() throws {
        guard let (a, b, drop) = try Self.twoNodes(configure: { $0.pageCacheMaximumAge = 600 }) else { return }
        defer { drop() }
        let guest = a.browser()
        // Twice: the first view fetched Seoul's forecast, which made that page's copy stale at once.
        #expect(try guest.get("/city/seoul").1.nodes("//article[contains(@class,'post')]").isEmpty)
        let kept = try guest.get("/city/seoul").0.headers["ETag"]
        #expect(try guest.get("/city/seoul").0.headers["ETag"] == kept, "the page is in A's cache")
        let feed = try #require(a.application.changeFeed)
        let admin = try PostgresDatabase(url: try TestPostgres.require().url("postgres"), maximumConnections: 1)
        let pids = try admin.withConnection { connection in
            try connection.all("SELECT pid FROM pg_stat_activity WHERE application_name = ?", [ChangeFeed.applicationName(node: feed.node)]) {
                Int32($0.int64(0))
            }
        }
        try #require(pids.count == 1)
        kill(pids[0], SIGSTOP)
        defer { kill(pids[0], SIGCONT) }

        let writer = b.browser()
        try writer.signUp("writer")
        #expect(try writer.postOnBoard("seoul", "Heard despite a frozen listener").0.status == 303)
        try waitUntil("node A notices its frozen listener and shows node B's post", timeout: 40) {
            try guest.get("/city/seoul").1.text("//article[1]//p[@class='post-body']") == "Heard despite a frozen listener"
        }
    }

    /// Issue 21 #1: the notice to other nodes travels with the commit (`pg_notify` in the write
    /// transaction), not after it. The writer here is a process that commits and does nothing
    /// more — no listener, no consumer, as a node killed right after its commit — and node A's
    /// cached page still gives way; a transaction rolled back after emitting tells nobody.
    @Test func theNoticeTravelsWithTheCommitNotAfterIt() throws {
        guard let (a, _, drop) = try Self.twoNodes(configure: { $0.pageCacheMaximumAge = 600 }) else { return }
        defer { drop() }
        let guest = a.browser()
        _ = try guest.get("/city/seoul")
        let kept = try guest.get("/city/seoul").0.headers["ETag"]
        #expect(try guest.get("/city/seoul").0.headers["ETag"] == kept, "the page is in A's cache")

        let url = try #require(a.application.configuration.databaseURL)
        let (writer, _) = try AppDatabase.open(.postgres(url: url), migrationsDirectory: AppConfiguration.repositoryFolder("Migrations"), connections: 1)
        defer { try? writer.close() }
        let seoul = Int64(try a.count("SELECT id FROM cities WHERE slug = 'seoul'"))
        try AccountStore(database: writer).create(NewUser(username: "quiet", displayName: "Quiet", passwordHash: "x",
                                                          role: "user", createdAt: a.clock.read()))
        let userID = Int64(try a.count("SELECT id FROM users WHERE username = 'quiet'"))

        // What the channel carries, heard on a connection of the test's own.
        let listener = try PostgresConnection(url: url, library: try LibPQ.shared.get(), applicationName: "test-listener")
        defer { listener.close() }
        try listener.simple("LISTEN \(ChangeStream.channel)")
        struct Abandoned: Error {}
        #expect(throws: Abandoned.self) {
            try writer.write(.cluster) { db, changes in
                try changes.emit(.city(seoul))
                throw Abandoned()
            }
        }

        let refusal = try BoardStore(database: writer, effects: BoardNotices()).create(cityID: seoul, userID: userID, body: "Told with the commit",
                                                              now: a.clock.read().timeIntervalSince1970,
                                                              rules: PostingRules(secondsBetweenPosts: 0, postsPerDay: 10))
        #expect((try? refusal.get()) != nil)
        try waitUntil("node A hears the commit of a process that told nobody after it", timeout: 10) {
            try guest.get("/city/seoul").1.text("//article[1]//p[@class='post-body']") == "Told with the commit"
        }
        // Notices arrive in commit order: had the rolled-back one been sent, it would come first.
        var notices: [String] = []
        try waitUntil("the test's listener hears the commit", timeout: 10) {
            notices += listener.notifications().map(\.1)
            return !notices.isEmpty
        }
        #expect(notices.count == 1)
        let notice = try #require(notices.first)
        #expect(notice.hasPrefix("\(writer.changes.node) post posted "))
        let said = PageChange(payload: notice.dropFirst(writer.changes.node.count + 1))
        guard case .post(let event)? = said else { Issue.record("\(notice) names no post"); return }
        #expect(event.city == seoul && event.author == userID && event.parent == nil && event.kind == .posted)
    }

    /// The notices go in COMMIT's round trip, after it: one that fails there (PostgreSQL's
    /// queue full, say) fails alone, and the write it follows stays committed and is answered
    /// as such (no error for a write that happened, to be sent again).
    @Test func aStatementAfterTheCommitThatFailsLeavesTheWriteCommitted() throws {
        guard let (a, _, drop) = try Self.twoNodes() else { return }
        defer { drop() }
        let postgres = try #require(a.application.database.engine as? PostgresDatabase)
        let (value, last) = try postgres.write(.cluster, commit: { "COMMIT; SELECT 1 / 0" }) { db in
            try db.execute("UPDATE cities SET name_en = 'Seoul, after' WHERE slug = 'seoul'")
        }
        #expect(value == 1 && last == nil)
        #expect(try a.count("SELECT COUNT(*) FROM cities WHERE name_en = 'Seoul, after'") == 1)
        // The connection went back to the pool usable: the next writes use it.
        #expect(try postgres.write(.cluster) { try $0.execute("UPDATE cities SET name_en = 'Seoul' WHERE slug = 'seoul'") } == 1)
    }

    /// A write that changes thousands of things (a purge of a prolific member) tells the other
    /// nodes of every one: one statement for all of them, past PostgreSQL's 1,664 columns.
    @Test func aWriteOfThousandsOfChangesTellsTheOtherNodeOfEach() throws {
        guard let (a, b, drop) = try Self.twoNodes() else { return }
        defer { drop() }
        let heard = Locked(Set<Int64>())
        b.application.database.changes.subscribe { change, origin in
            if case .notice(let member) = change, origin == .elsewhere { heard.update { $0.insert(member) } }
        }
        try a.application.database.write(.cluster) { _, changes in
            for member in 1...3_000 { try changes.emit(.notice(Int64(member))) }
        }
        try waitUntil("node B hears all 3,000", timeout: 20) { heard.value.count == 3_000 }
    }

    @Test func aPostThroughOneNodeReachesTheStreamsOpenOnTheOther() throws {
        guard let (a, b, drop) = try Self.twoNodes(configure: { $0.limits.secondsBetweenPosts = 0 }) else { return }
        defer { drop() }
        // Both nodes up a while before anything happens (a position from before a node started is
        // another process's: reload).
        a.clock.advance(10)
        b.clock.advance(10)
        let onB = try b.browser().listen("/city/seoul/live")
        let writer = a.browser()
        try writer.signUp("writer")
        try writer.postOnBoard("seoul", "Written through A")
        let postID = try a.count("SELECT max(id) FROM posts")
        #expect(try onB.next().data == #"{"type":"post","id":\#(postID)}"#)

        // Issue 46 #2: a page rendered by A, cut off while a post is made, resumes on B from A's
        // position, by time (B numbers events itself).
        let position = try #require(LivePositionTests.position(try a.browser().get("/city/seoul").1))
        #expect(position.hasPrefix(a.application.live.node + "-"))
        try writer.postOnBoard("seoul", "Written while the page was cut off")
        let missed = #"{"type":"post","id":\#(try a.count("SELECT max(id) FROM posts"))}"#
        #expect(try onB.events(through: missed).last == missed, "B has heard of it")
        let movedToB = try b.browser().listen("/city/seoul/live", lastEventID: position)
        // From two seconds before the position's time: the post the page shows may come again (a
        // page ignores what it shows), the one it missed does, and no reload.
        let replayed = try movedToB.events(through: missed)
        #expect(replayed.last == missed && !replayed.contains(#"{"type":"reload"}"#), "\(replayed)")
        // A position from before B started (another process's): reload.
        let old = "\(a.application.live.node)-0-\(Int((AppHarness.fixedNow.timeIntervalSince1970 - 5) * 1000))"
        let reload = try b.browser().listen("/city/seoul/live", lastEventID: old).next()
        #expect(reload.data == #"{"type":"reload"}"#)
        #expect(reload.id?.hasPrefix(b.application.live.node) == true)
    }

    @Test func aPostThroughOneNodeIsOnTheOthersCachedPageAndSessionsLimitsAndBansHoldOnBoth() throws {
        guard let (a, b, drop) = try Self.twoNodes() else { return }
        defer { drop() }
        // A guest's view of Seoul on node A, now in A's page cache.
        let guest = a.browser()
        #expect(try guest.get("/city/seoul").1.nodes("//article[contains(@class,'post')]").isEmpty)

        // Signed in through A, posting through B with A's cookie.
        let onA = a.browser()
        try onA.signUp("alice")
        let onB = b.browser()
        onB.cookies = onA.cookies
        let (response, _) = try onB.postOnBoard("seoul", "Snow over the Han river")
        #expect(response.status == 303)
        #expect(try b.count("SELECT count(*) FROM posts") == 1)

        // A's cached page gives way as soon as B's change is heard.
        try waitUntil("node A shows node B's post", timeout: 10) {
            try guest.get("/city/seoul").1.text("//article[1]//p[@class='post-body']") == "Snow over the Han river"
        }

        // The sign-in limit counts attempts on both nodes together (6 a minute per account and address).
        for node in [a, b, a, b, a, b] {
            let browser = node.browser()
            try browser.get("/login")
            #expect(try browser.post("/login", [("username", "alice"), ("password", "wrong guess")]).0.status == 422)
        }
        let seventh = b.browser()
        try seventh.get("/login")
        #expect(try seventh.post("/login", [("username", "alice"), ("password", "correct horse battery")]).0.status == 429)

        // Banned on A, refused on B.
        let admin = a.browser()
        try admin.signUp("chief")
        try a.promoteToAdmin("chief")
        try admin.get("/admin/users/alice")
        #expect(try admin.post("/admin/users/alice/ban", [("duration", "7d"), ("reason", "spam")]).0.status == 303)
        let (refused, _) = try onB.postOnBoard("seoul", "Still here")
        #expect(refused.status != 303 || refused.headers["Location"]?.hasPrefix("/login") == true)
        #expect(try a.count("SELECT count(*) FROM posts") == 1)
    }

    @Test func nodesAskTheProviderOnceForACityAndShareTheAnswer() throws {
        let stub = try UpstreamStub()
        stub.delay = 0.5 // both nodes ask while the first fetch is still out
        guard let (a, b, drop) = try Self.twoNodes(configure: { configuration in
            configuration.weatherProviders = ["open-meteo"]
            configuration.openMeteoURL = stub.url
        }) else { return }
        defer { drop() }
        let pages = Locked<[Bool]>([])
        let threads = [a, b].map { node in
            Thread {
                let shown = (try? node.page("/city/seoul").1.text("//section[@data-day='today']//span[@class='high']")) != nil
                pages.update { $0.append(shown) }
            }
        }
        threads.forEach { $0.start() }
        try waitUntil("both pages answered", timeout: 20) { pages.value.count == 2 }
        #expect(pages.value == [true, true])
        #expect(stub.hits == 1, "one node fetched; the other waited for its answer in the shared cache")
    }

    /// Issue 41 #2: both nodes check the window; the member is told, and pushed to, once.
    @Test func twoNodesTellARainAlertOnce() throws {
        guard TestSubscriber.available() else { return }
        let stub = try UpstreamStub()
        stub.mode = try RainAlertTests.rainy(17..<20)
        let service = try PushServiceStandIn()
        guard let (a, b, drop) = try Self.twoNodes(configure: { configuration in
            configuration.weatherProviders = ["open-meteo"]
            configuration.openMeteoURL = stub.url
            configuration.scheduleInterval = 0.05
            configuration.pushContact = "mailto:ops@example.org"
            configuration.pushExtraOrigins = [service.origin]
            configuration.pushPollInterval = 0.1
        }) else { return }
        defer { drop() }
        let member = try RainAlertTests.member(a, "both_nodes")
        #expect(try member.json("POST", "/push/subscriptions", TestSubscriber().json(endpoint: service.endpoint("phone"))).status == 201)
        // Both nodes reach 16:00 in Seoul together.
        for node in [a, b] { node.clock.advance(75 * 60) }
        try waitUntil("the push", timeout: 20) { service.receivedFor("phone").count == 1 }
        for node in [a, b] { try node.waitForRounds(of: "rain alerts"); try node.waitForRounds(of: "push") }
        #expect(service.receivedFor("phone").count == 1)
        #expect(try a.count("SELECT count(*) FROM notifications WHERE kind = 'rain'") == 1)
    }

    /// Issue 68 #3: two nodes polling the same feed tell each follower of a warning once, on the
    /// site and by e-mail where they chose it (through a real SMTP server).
    @Test func twoNodesTellEachFollowerOfAWarningOnce() throws {
        let stub = try NWSStub()
        try stub.alerts([])
        guard let catcher = try MailCatcher.start() else { return }
        guard let (a, b, drop) = try Self.twoNodes(configure: { configuration in
            configuration.warningsNWSURL = stub.url
            configuration.warningsEvery = 3600
            configuration.smtpURL = catcher.url
            configuration.mailFrom = "weather@example.org"
            configuration.publicURL = MailTests.origin
            configuration.mailPollInterval = 0.1
        }) else { return }
        defer { drop() }
        WarningTests.firstPoll(a)
        WarningTests.firstPoll(b)
        let member = try MailTests.memberWithAddress(a, catcher, "angeleno", "angeleno@example.org")
        try member.get("/city/los-angeles")
        #expect(try member.post("/bookmarks/los-angeles", []).0.status == 303)
        try member.get("/settings/notifications")
        #expect(try member.post("/settings/notifications", [("warnings_site", "on"), ("warnings_email", "on"),
                                                            ("time_zone", "America/Los_Angeles")]).0.status == 303)
        let mailsBefore = catcher.messages().count
        try stub.alerts([WarningAlertTests.flood()])
        let polls = [a, b].map { node in Thread { node.application.warnings.poll() } }
        polls.forEach { $0.start() }
        try waitUntil("both polls ended", timeout: 20) {
            a.application.warnings.polls.load(ordering: .acquiring) >= 2 && b.application.warnings.polls.load(ordering: .acquiring) >= 2
        }
        b.application.warnings.poll()
        #expect(try WarningAlertTests.notices(a, "angeleno") == 1)
        let mail = try #require(try catcher.waitForMessages(mailsBefore + 1).last)
        #expect(mail.subject == "Severe warning in Los Angeles: Flash Flood Warning, until 01:00, 22 Nov.")
        Thread.sleep(forTimeInterval: 1)
        #expect(catcher.messages().count == mailsBefore + 1, "one mail, though two nodes polled")
    }
}
