import Foundation
import HTTPServer
import Testing
@testable import Weatherboard

/// Issue 63 #3: where a board as everyone sees it is kept (`BoardSnapshots`, SQLite), a reader's
/// rows are that board plus their own marks (`ViewerMarks`); elsewhere they are read for the
/// reader alone. Both ways must give every `PostRow` field alike, for every kind of reader.
@Suite struct BoardReadPathTests {
    @Test func theKeptBoardWithTheReadersMarksIsTheBoardReadForThem() throws {
        let app = try TestEngine.$current.withValue(.sqlite) { try AppHarness { $0.limits.secondsBetweenPosts = 0 } }
        let writers = try ["sky_watcher", "loud_one", "quiet_one"].map { name in
            let browser = app.browser()
            try browser.signUp(name)
            return browser
        }
        for (n, writer) in writers.enumerated() {
            for k in 0..<3 { #expect(try writer.postOnBoard("seoul", "Rain report \(n)-\(k)").0.status == 303) }
        }
        let first = Int64(try app.count("SELECT min(id) FROM posts"))
        for writer in writers { try ConversationTests.reply(writer, to: first, "Seen it too") }
        let readers = ["plain", "marker", "blocker", "hider", "hidden", "chief"]
        for name in readers { try app.browser().signUp(name) }
        try app.promoteToAdmin("chief")
        let id = { (name: String) in Int64(try app.count("SELECT id FROM users WHERE username = ?", [name])) }
        let now = AppHarness.fixedNow.timeIntervalSince1970
        // The marker agrees with two posts, reports one and mutes an author: marks only they see.
        for post in [first, first + 1] { try app.execute("INSERT INTO reactions (post_id, user_id, created_at) VALUES (?, ?, ?)", [post, try id("marker"), now]) }
        try app.execute("INSERT INTO reports (post_id, reporter_id, reason, detail, created_at) VALUES (?, ?, 'spam', '', ?)", [first + 2, try id("marker"), now])
        try app.execute("INSERT INTO mutes (muter_id, muted_id, until, created_at) VALUES (?, ?, NULL, ?)", [try id("marker"), try id("loud_one"), now])
        // Those who see the board otherwise: a block, a hidden post, a post of theirs hidden by reports.
        try app.execute("INSERT INTO blocks (blocker_id, blocked_id, created_at) VALUES (?, ?, ?)", [try id("blocker"), try id("sky_watcher"), now])
        try app.execute("INSERT INTO hidden_posts (viewer_id, post_id) VALUES (?, ?)", [try id("hider"), first + 3])
        try app.execute("INSERT INTO posts (city_id, user_id, body, created_at, hidden_at) SELECT id, ?, 'Mine, hidden', ?, ? FROM cities WHERE slug = 'seoul'",
                        [try id("hidden"), now, now])
        app.application.pageVersions.apply(.everything)

        let application = app.application
        let snapshots = BoardSnapshots(versions: application.pageVersions)
        let kept = BoardView(database: application.database, pages: application.pages, clock: { AppHarness.fixedNow }, snapshots: snapshots,
                             livePosition: { _ in "" })
        let seoul = try #require(application.cities.city(slug: "seoul"))
        var sharedReads = 0
        for name in [nil] + readers {
            let user = try name.map { name in try #require(try application.database.read { try User.find(username: name, $0) }) }
            let context = AppContext(request: Request(method: "GET", target: "/city/seoul", headers: HTTPHeaders()))
            context.user = user
            let (viaKept, direct) = try application.database.read { db in
                (try kept.posts(city: seoul, context: context, before: nil, db), try kept.read(city: seoul, viewer: user, before: nil, db))
            }
            if viaKept.shared != nil { sharedReads += 1 }
            let who = name ?? "a guest"
            #expect(viaKept.posts == direct.posts, "\(who): every field of every post")
            #expect(viaKept.replies.mapValues(\.shown) == direct.replies.mapValues(\.shown), "\(who): every field of every reply")
            #expect(viaKept.replies.mapValues(\.count) == direct.replies.mapValues(\.count), "\(who): the reply counts")
            #expect(viaKept.muted == direct.muted, "\(who): whom they muted")
        }
        #expect(sharedReads >= 3, "the guest, the plain reader and the marker read the kept board")
        #expect(try app.count("SELECT count(*) FROM reactions") == 2)
    }
}
