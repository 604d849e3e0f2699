import Foundation
import HTTPServer
import HTTPTestSupport
import Testing
@testable import Weatherboard

/// Issue 46 #3: writes no longer queue behind one cluster-wide lock; each guarded check locks
/// what it counts. Each test sends requests at once through the server's sockets and counts
/// what was kept: a check that two writes can both pass shows as one too many.
@Suite(.serialized, .onEveryEngine) struct RaceTests {
    /// `body(i)` on `count` threads released together; their answers in order.
    func atOnce<T: Sendable>(_ count: Int, _ body: @escaping @Sendable (Int) throws -> T) -> [Result<T, any Error>] {
        let results = Locked<[Int: Result<T, any Error>]>([:])
        let start = DispatchSemaphore(value: 0), done = DispatchGroup()
        for index in 0..<count {
            done.enter()
            Thread.detachNewThread {
                start.wait()
                let result = Result { try body(index) }
                results.update { $0[index] = result }
                done.leave()
            }
        }
        for _ in 0..<count { start.signal() }
        done.wait()
        return (0..<count).map { results.value[$0]! }
    }

    /// Browsers over sockets that share `signedIn`'s session (one member's tabs).
    func tabs(of signedIn: Browser, _ app: AppHarness, _ count: Int) -> [Browser] {
        (0..<count).map { _ in
            let tab = app.browser(overSocket: true)
            tab.cookies = signedIn.cookies
            return tab
        }
    }

    /// `count` members signed up as `prefix1`, `prefix2`…, each a browser over sockets.
    func members(_ app: AppHarness, _ prefix: String, _ count: Int) throws -> [Browser] {
        try (1...count).map { number in
            let member = app.browser(overSocket: true)
            try member.signUp("\(prefix)\(number)")
            return member
        }
    }

    func statuses(_ results: [Result<WireResponse, any Error>]) throws -> [Int] {
        try results.map { try $0.get().status }
    }

    @Test func postsSentAtOnceByOneMemberStopAtTheDailyLimit() throws {
        let app = try AppHarness { $0.limits.secondsBetweenPosts = 0; $0.limits.postsPerDay = 3 }
        let member = app.browser()
        try member.signUp("hasty")
        try member.postOnBoard("seoul", "First of the day")
        try member.postOnBoard("seoul", "Second of the day")
        nonisolated(unsafe) let tabs = tabs(of: member, app, 12)
        let answers = try statuses(atOnce(12) { index in
            try tabs[index].post("/city/seoul/posts", [("body", "At once, number \(index)")]).0
        })
        #expect(answers.filter { $0 == 303 }.count == 1, "answers: \(answers)")
        #expect(try app.count("SELECT count(*) FROM posts p JOIN users u ON u.id = p.user_id WHERE u.username = 'hasty'") == 3)
    }

    @Test func reportsSentAtOnceHideThePostAtTheThreshold() throws {
        let app = try AppHarness { $0.limits.secondsBetweenPosts = 0; $0.limits.signUpsPerHour = 100 }
        let author = app.browser()
        try author.signUp("author")
        nonisolated(unsafe) let sending = try members(app, "reporter", 3)
        try app.inGoodStanding("reporter1", "reporter2", "reporter3")
        // Three posts, each reported by all three at once: each must end hidden.
        for round in 1...3 {
            try author.postOnBoard("seoul", "Questionable, round \(round)")
            let postID = Int64(try app.count("SELECT max(id) FROM posts"))
            let answers = try statuses(atOnce(3) { index in
                try sending[index].post("/posts/\(postID)/report", [("reason", "spam")]).0
            })
            #expect(answers == [303, 303, 303])
            #expect(try app.count("SELECT count(*) FROM reports WHERE post_id = ?", [postID]) == 3)
            #expect(try app.count("SELECT count(*) FROM posts WHERE id = ? AND hidden_at IS NOT NULL", [postID]) == 1,
                    "round \(round): three reports at once hide the post")
        }
    }

    @Test func agreementsSentAtOnceAreToldInOneNotice() throws {
        let app = try AppHarness { $0.limits.secondsBetweenPosts = 0; $0.limits.signUpsPerHour = 100 }
        let author = app.browser()
        try author.signUp("author")
        nonisolated(unsafe) let sending = try members(app, "reader", 4)
        for round in 1...3 {
            try author.postOnBoard("seoul", "Agreeable, round \(round)")
            let postID = Int64(try app.count("SELECT max(id) FROM posts"))
            let answers = try statuses(atOnce(4) { index in
                try sending[index].post("/posts/\(postID)/react", []).0
            })
            #expect(answers == [303, 303, 303, 303])
            #expect(try app.count("SELECT count(*) FROM reactions WHERE post_id = ?", [postID]) == 4)
            #expect(try app.count("SELECT count(*) FROM notifications WHERE kind = 'reaction' AND post_id = ?", [postID]) == 1,
                    "round \(round): one notice for the post")
            #expect(try app.count("SELECT people FROM notifications WHERE kind = 'reaction' AND post_id = ?", [postID]) == 4)
        }
    }

    @Test func signInsSentAtOnceFromOneAddressStopAtItsLimit() throws {
        let app = try AppHarness { $0.limits.signInsPerMinute = 3 }
        try app.browser().signUp("member")
        let browsers = (0..<8).map { _ in app.browser(overSocket: true) }
        for browser in browsers { try browser.get("/login") }
        nonisolated(unsafe) let sending = browsers
        let answers = try statuses(atOnce(8) { index in
            try sending[index].post("/login", [("username", "member"), ("password", "correct horse battery")]).0
        })
        // Three are counted and go on to the password check (a 503 there: the checks' own
        // queue was full, `ConcurrencyLimit`); the rest are refused before it.
        #expect(answers.filter { $0 == 429 }.count == 5, "answers: \(answers)")
        #expect(try app.count("SELECT count(*) FROM rate_events WHERE bucket = ?", [Tokens.digest("login:ip:127.0.0.1")]) == 3)
    }

    /// A ban can commit after a post's request read its session (not banned) and before its
    /// write: the write itself, under the member's lock, refuses it. Driven through the store,
    /// as no request can be held between the two.
    @Test func aPostWhoseSessionPredatesTheBanIsRefusedInItsWrite() throws {
        let app = try AppHarness { $0.limits.secondsBetweenPosts = 0 }
        let member = app.browser(), chief = app.browser()
        try member.signUp("doomed")
        try chief.signUp("chief")
        try app.promoteToAdmin("chief")
        try member.postOnBoard("seoul", "Before the ban")
        let userID = Int64(try app.count("SELECT id FROM users WHERE username = 'doomed'"))
        let cityID = Int64(try app.count("SELECT id FROM cities WHERE slug = 'seoul'"))
        try chief.get("/admin")
        #expect(try chief.post("/admin/users/doomed/ban", [("reason", "Spam"), ("duration", "permanent")]).0.status == 303)
        #expect(try app.count("SELECT count(*) FROM bans") == 1)

        let store = BoardStore(database: app.application.database, effects: BoardNotices())
        let rules = PostingRules(secondsBetweenPosts: 0, postsPerDay: 50)
        #expect(throws: BannedError.self) {
            _ = try store.create(cityID: cityID, userID: userID, body: "After the ban", now: app.clock.read().timeIntervalSince1970, rules: rules)
        }
        #expect(throws: BannedError.self) {
            _ = try store.reply(to: Int64(try app.count("SELECT max(id) FROM posts")), userID: userID, body: "A reply after it",
                                now: app.clock.read().timeIntervalSince1970, rules: rules)
        }
        #expect(try app.count("SELECT count(*) FROM posts WHERE user_id = ?", [userID]) == 1)
    }

    /// Two writes that each hold one member and wait for the other's: PostgreSQL ends one
    /// (a deadlock), the node tries it again, and both land. (SQLite has one writer: no circle.)
    @Test func aDeadlockBetweenSubjectsIsTriedAgainAndBothWritesLand() throws {
        let app = try AppHarness()
        guard app.engine == .postgres else { return }
        let database = app.application.database
        let holding = [DispatchSemaphore(value: 0), DispatchSemaphore(value: 0)]
        let attempts = Locked([0, 0])
        let results = atOnce(2) { index in
            try database.write(.subjects) { db in
                attempts.update { $0[index] += 1 }
                try db.lock(.member(Int64(index + 1)))
                if attempts.value[index] == 1 { // each holds its own before asking for the other's
                    holding[index].signal()
                    holding[1 - index].wait()
                }
                try db.lock(.member(Int64(2 - index)))
                try db.execute("INSERT INTO rate_events (bucket, at) VALUES (?, ?)", "deadlock-\(index)", 0.0)
            }
        }
        for result in results { #expect(throws: Never.self) { try result.get() } }
        #expect(try app.count("SELECT count(*) FROM rate_events WHERE bucket LIKE 'deadlock-%'") == 2)
        #expect(attempts.value.reduce(0, +) == 3, "one of the two was tried again: \(attempts.value)")
    }
}
