import Foundation
import HTTPServer
import HTTPTestSupport
import Testing
@testable import Weatherboard

/// Issue 45 #1: search in what people wrote, on both engines with one behaviour.
@Suite(.serialized, .onEveryEngine) struct PostSearchTests {
    /// A ko/en corpus through the boards, and rows only some readers may see.
    func corpus() throws -> (app: AppHarness, reader: Browser, ids: [String: Int64]) {
        let app = try AppHarness { $0.limits.secondsBetweenPosts = 0; $0.limits.postsPerDay = 1_000 }
        let alice = app.browser(), bob = app.browser(), carol = app.browser(), reader = app.browser()
        try alice.signUp("alice")
        try bob.signUp("bob")
        try carol.signUp("carol")
        try reader.signUp("reader")
        var ids: [String: Int64] = [:]
        func post(_ browser: Browser, _ city: String, _ body: String) throws {
            try browser.postOnBoard(city, body)
            ids[body] = Int64(try app.count("SELECT max(id) FROM posts"))
        }
        try post(alice, "seoul", "Forgot my Umbrella again")
        try post(alice, "seoul", "우산 챙기세요, 비가 와요")
        try post(bob, "busan", "Heavy rain in Haeundae")
        try post(bob, "seoul", "heavy, then rain later")
        try post(bob, "seoul", "They said 50% chance")
        try post(bob, "seoul", "They said 500 chance")
        try post(carol, "seoul", "Umbrella sale, cheap")
        try post(bob, "seoul", "Umbrella hidden by reports")
        try post(bob, "seoul", "Umbrella removed by a moderator")
        try post(bob, "seoul", "Umbrella deleted by its author")
        try app.execute("UPDATE posts SET hidden_at = 1 WHERE id = ?", [ids["Umbrella hidden by reports"]!])
        try app.execute("UPDATE posts SET removed_at = 1, removed_reason = 'spam' WHERE id = ?", [ids["Umbrella removed by a moderator"]!])
        try app.execute("DELETE FROM posts WHERE id = ?", [ids["Umbrella deleted by its author"]!])
        try reader.get("/users/carol")
        #expect(try reader.post("/users/carol/block", []).0.status == 303)
        return (app, reader, ids)
    }

    func results(_ browser: Browser, _ query: String, extra: String = "") throws -> (ids: [Int64], page: MarkupDocument) {
        let (response, page) = try browser.get("/search/posts?q=" + percentEncode(query) + extra)
        #expect(response.status == 200, "\(query)")
        return (page.nodes("//ol[@class='post-results']//article[@data-post-id]").compactMap { $0["data-post-id"].flatMap { Int64($0) } }, page)
    }

    @Test func substringsInEitherLanguageAndPhrasesAreFoundMarked() throws {
        let (app, reader, ids) = try corpus()
        // "mbrel": inside a word, whatever its case; what the reader may not see is never there.
        let (umbrella, page) = try results(reader, "mbrel")
        #expect(umbrella == [ids["Forgot my Umbrella again"]!])
        #expect(page.nodes("//article//mark").map(\.text) == ["mbrel"])
        #expect(try results(reader, "UMBRELLA").page.nodes("//article//mark").map(\.text) == ["Umbrella"])
        #expect(try results(reader, "우산").ids == [ids["우산 챙기세요, 비가 와요"]!])
        // A phrase in quotes, or its words anywhere.
        #expect(try results(reader, "\"heavy rain\"").ids == [ids["Heavy rain in Haeundae"]!])
        #expect(Set(try results(reader, "heavy rain").ids) == [ids["Heavy rain in Haeundae"]!, ids["heavy, then rain later"]!])
        // `%` is a character like any other.
        #expect(try results(reader, "50%").ids == [ids["They said 50% chance"]!])
        // One board only.
        #expect(try results(reader, "heavy", extra: "&city=busan").ids == [ids["Heavy rain in Haeundae"]!])
        // Someone who blocked nobody sees carol's post; a guest too; nobody the hidden, removed or deleted ones.
        let guest = app.browser()
        #expect(Set(try results(guest, "umbrella").ids) == [ids["Forgot my Umbrella again"]!, ids["Umbrella sale, cheap"]!])
    }

    @Test func whatADatabaseWouldReadAsSyntaxIsJustText() throws {
        let (app, reader, _) = try corpus()
        defer { withExtendedLifetime(app) {} }
        for typed in ["\"", "*", "AND", "NEAR(", "-", "umbrella\"", "\"\"", "_", "%", "a OR b", "rain NOT", "'; DROP TABLE posts; --", "\\", "((("] {
            let (response, _) = try reader.get("/search/posts?q=" + percentEncode(typed))
            #expect(response.status == 200, "\(typed)")
        }
        #expect(try results(reader, "rain*").ids.count == 2)
    }

    /// Issue 61 #3: a reply is found only where its conversation shows: not under a post hidden
    /// by reports (but by that post's author and admins), not under a removed one (but by admins),
    /// not under a post by someone the reader blocked or muted.
    @Test func aReplyIsFoundOnlyWhereItsConversationShows() throws {
        let (app, reader, ids) = try corpus()
        let admin = app.browser()
        try admin.signUp("chief")
        try app.promoteToAdmin("chief")
        let dave = app.browser()
        try dave.signUp("dave")
        let bob = app.browser()
        try bob.get("/login")
        try bob.post("/login", [("username", "bob"), ("password", "correct horse battery")])
        let carol = app.browser()
        try carol.get("/login")
        try carol.post("/login", [("username", "carol"), ("password", "correct horse battery")])
        // Replies by dave, whom nobody blocked, under posts readers may not see. Given before the
        // posts were closed: a closed conversation takes no more replies.
        try app.execute("UPDATE posts SET hidden_at = NULL, removed_at = NULL, removed_reason = NULL WHERE id IN (?, ?)",
                        [ids["Umbrella hidden by reports"]!, ids["Umbrella removed by a moderator"]!])
        for (parent, text) in [("Umbrella hidden by reports", "drizzly under hidden"), ("Umbrella removed by a moderator", "drizzly under removed"),
                               ("Umbrella sale, cheap", "drizzly under blocked"), ("Heavy rain in Haeundae", "drizzly under muted"),
                               ("Forgot my Umbrella again", "drizzly under shown")] {
            #expect(try ConversationTests.reply(dave, to: ids[parent]!, text).0.status == 303)
        }
        try app.execute("UPDATE posts SET hidden_at = 1 WHERE id = ?", [ids["Umbrella hidden by reports"]!])
        try app.execute("UPDATE posts SET removed_at = 1, removed_reason = 'spam' WHERE id = ?", [ids["Umbrella removed by a moderator"]!])
        try reader.get("/users/bob")
        #expect(try reader.post("/users/bob/mute", [("duration", "week")]).0.status == 303)
        func texts(_ browser: Browser) throws -> Set<String> {
            Set(try results(browser, "drizzly").page.nodes("//ol[@class='post-results']//article").map(\.text)
                .compactMap { text in ["hidden", "removed", "blocked", "muted", "shown"].first { text.contains("drizzly under \($0)") } })
        }
        #expect(try texts(reader) == ["shown"], "the reader blocked carol and muted bob")
        #expect(try texts(app.browser()) == ["blocked", "muted", "shown"], "a guest")
        #expect(try texts(bob) == ["hidden", "blocked", "muted", "shown"], "the hidden post's author")
        #expect(try texts(admin) == ["hidden", "removed", "blocked", "muted", "shown"], "an admin")
        withExtendedLifetime(carol) {}
    }

    /// Issue 61 #1: `q=world%00` on a site with a post ending in "world" ended the process (the
    /// LIKE pass read the pattern up to the NUL, Foundation's search then ran past the text).
    /// Controls, format characters and lone marks are never searched for: the words around them are.
    @Test func controlsOverridesAndLoneMarksAreNeverSearchedFor() throws {
        let (app, reader, ids) = try corpus()
        defer { withExtendedLifetime(app) {} }
        let again = try #require(ids["Forgot my Umbrella again"])
        for typed in ["again%00", "again%00%00", "%00again", "ag%00ain", "again%01%1F%7F", "again%C2%80", "ag%E2%80%AEain",
                      "again%E2%80%8B", "again%EF%BF%BD", "again%EF%BF%BE"] {
            let (response, page) = try reader.get("/search/posts?q=" + typed)
            #expect(response.status == 200, "\(typed)")
            let found = page.nodes("//ol[@class='post-results']//article[@data-post-id]").compactMap { $0["data-post-id"].flatMap { Int64($0) } }
            #expect(found == [again], "\(typed)")
            #expect(page.nodes("//article//mark").map(\.text) == ["again"], "\(typed)")
            #expect(page.nodes("//main//input[@name='q']").first?["value"]?.unicodeScalars.allSatisfy { $0.value >= 0x20 && $0 != "\u{202E}" } == true)
        }
        for typed in ["%CC%81", String(repeating: "%CC%81", count: 10_000), "a" + String(repeating: "%CC%81", count: 10_000), "%ED%A0%80"] {
            let (response, _) = try reader.get("/search/posts?q=" + typed)
            #expect(response.status == 200 || response.status == 400 || response.status == 414, "\(typed.prefix(20))")
        }
        // A mark stays with its letter: "e" is not found inside "é", nor "é" written with a mark inside "e".
        #expect(try results(reader, "Haeundae").ids == [ids["Heavy rain in Haeundae"]!])
        #expect(try results(reader, "Hae\u{301}undae").ids.isEmpty)
    }

    @Test func aTermIsFoundOnCharacterEdgesAndMarkedWhereverItsFoldedFormIs() {
        let query = PostQuery("ＲＡＩＮ é")
        #expect(query.terms == ["rain", "é"])
        #expect(query.matches("Rain? Café!"))
        #expect(query.matches("Rain? Cafe\u{301}x"), "a decomposed é is one character and folds as é")
        #expect(!query.matches("Rain only"))
        #expect(query.marked("RAIN, rain, café").filter(\.marked).map(\.text) == ["RAIN", "rain", "é"])
        #expect(PostQuery("a\u{0}b").terms == ["ab"])
        #expect(PostQuery(String(repeating: "\u{301}", count: 10_000)).isEmpty)
    }

    @Test func anEditIsFoundByItsNewWordsAndCursorsNeitherRepeatNorSkip() throws {
        let (app, reader, ids) = try corpus()
        // Written straight into the table (as a copy or an import would): the index follows.
        let seoul = try app.count("SELECT id FROM cities WHERE slug = 'seoul'")
        for n in 1...25 {
            try app.execute("INSERT INTO posts (city_id, user_id, body, created_at) VALUES (?, NULL, ?, ?)",
                            [seoul, "Drizzle report number \(n)" + String(repeating: "!", count: n), 1_000 + n])
        }
        let (first, page) = try results(reader, "drizzle")
        #expect(first.count == 20)
        let next = try #require(page.nodes("//a[@rel='next']").first?["href"])
        // A new one meanwhile does not shift the next page.
        try app.execute("INSERT INTO posts (city_id, user_id, body, created_at) VALUES (?, NULL, 'Drizzle again', 2000)", [seoul])
        let (_, second) = try reader.get(next)
        let secondIDs = second.nodes("//article[@data-post-id]").compactMap { $0["data-post-id"].flatMap { Int64($0) } }
        #expect(secondIDs.count == 5)
        #expect(Set(first).isDisjoint(with: secondIDs))
        // Best match first: the shortest text that holds the words.
        let best = try results(reader, "drizzle", extra: "&sort=best").page
        #expect(best.nodes("//article[@data-post-id]").first?.text.contains("Drizzle again") == true)
        // An edit: found by its new words, no longer by its old ones.
        let alice = app.browser()
        try alice.get("/login")
        try alice.post("/login", [("username", "alice"), ("password", "correct horse battery")])
        let id = try #require(ids["Forgot my Umbrella again"])
        try alice.get("/posts/\(id)/edit")
        #expect(try alice.post("/posts/\(id)/edit", [("body", "Found my parasol")]).0.status == 303)
        #expect(try results(reader, "parasol").ids == [id])
        #expect(try results(reader, "mbrel").ids.isEmpty)
    }

    /// A search no index can narrow reads many posts: each address has its share a minute, and
    /// the page past it keeps what was typed and says when to come back.
    @Test func searchesPerAddressAreLimitedAndTheRefusalKeepsTheWords() throws {
        let app = try AppHarness { $0.limits.searchesPerMinute = 2 }
        let reader = app.browser(), neighbour = app.browser()
        neighbour.source = "127.0.0.2"
        for _ in 1...2 { #expect(try reader.get("/search/posts?q=rain").0.status == 200) }
        let (refused, page) = try reader.get("/search/posts?q=" + percentEncode("\"heavy rain\""))
        #expect(refused.status == 429)
        #expect(refused.headers["Retry-After"] == "60")
        #expect(page.nodes("//input[@name='q']").first?["value"] == "\"heavy rain\"")
        #expect(page.nodes("//p[@class='form-error']").count == 1)
        #expect(try reader.get("/search/posts").0.status == 200, "the empty form is no search")
        #expect(try neighbour.get("/search/posts?q=rain").0.status == 200, "another address has its own share")
        app.clock.advance(60)
        #expect(try reader.get("/search/posts?q=rain").0.status == 200)
    }
}
