import Foundation
import Testing
@testable import Weatherboard

/// The session statement is read by position; its list and its reader come from one enum
/// (issue 21 #5). Every field read back, with a ban in force and unread notices.
@Suite(.onEveryEngine) struct SessionRowTests {
    @Test func aSessionReadsEveryColumnFromItsPlace() throws {
        let app = try AppHarness()
        let author = app.browser()
        try author.signUp("author")
        try author.postOnBoard("seoul", "Fog on the river")
        let reader = app.browser()
        try reader.signUp("reader", displayName: "Reader Kim")
        let token = try #require(reader.cookies[SessionStore.cookieName])
        let person = try #require(try app.application.database.readStatement { try User.find(username: "reader", $0) })
        let postID = Int64(try app.count("SELECT max(id) FROM posts"))
        let now = app.application.configuration.clock()
        let until = now.addingTimeInterval(86_400).timeIntervalSince1970.rounded()
        try app.execute("INSERT INTO bans (user_id, reason, created_at, until) VALUES (?, 'spam waves', ?, ?)",
                        [person.id, now.timeIntervalSince1970, until])
        for kind in ["reply", "mention"] {
            try app.execute("INSERT INTO notifications (user_id, kind, post_id, created_at) VALUES (?, ?, ?, ?)",
                            [person.id, kind, postID, now.timeIntervalSince1970])
        }
        let csrf = try app.application.database.readStatement { db in
            try db.one("SELECT csrf_secret FROM sessions WHERE user_id = ?", [person.id]) { $0.string(0) }
        }
        let session = try #require(try SessionStore(database: app.application.database).find(token: token, now: now))
        #expect(session.user == person)
        #expect(session.user.displayName == "Reader Kim" && session.user.role == "user")
        #expect(session.csrfSecret == csrf)
        #expect(session.ban == Ban(reason: "spam waves", until: Date(timeIntervalSince1970: until)))
        #expect(session.unread == 2)
        #expect(session.reportsWaiting == 0, "counted for admins only")
        try app.promoteToAdmin("reader")
        try app.execute("INSERT INTO reports (post_id, reporter_id, reason, created_at) SELECT ?, id, 'spam', ? FROM users WHERE username = 'author'",
                        [postID, now.timeIntervalSince1970])
        #expect(try SessionStore(database: app.application.database).find(token: token, now: now)?.reportsWaiting == 1)
        // Fourteen: the person's password hash is not read with every request (issue 21 #7).
        #expect(SessionStore.Column.allCases.count == 14)
    }
}
