import CZlib
import Foundation
import HTTPServer
import HTTPTestSupport
import Testing
@testable import Weatherboard

/// Guests' pages come from a cache that every change empties at once; compressed pages are the
/// same bytes as uncompressed ones.
@Suite(.serialized, .onEveryEngine) struct PageCacheTests {
    /// Given a guest who has read Seoul's page (so it is cached), an author and three readers.
    struct Scene {
        let app: AppHarness
        let guest: Browser
        let author: Browser

        init() throws {
            app = try AppHarness()
            guest = app.browser()
            author = app.browser()
            try author.signUp("author")
            try app.inGoodStanding("author")
            try author.postOnBoard("seoul", "First light over the Han")
            app.clock.advance(11)
            try guest.get("/city/seoul")
        }

        /// The post bodies a guest sees on Seoul's board now.
        func guestSees() throws -> [String] {
            try guest.get("/city/seoul").1.nodes("//article[contains(@class,'post')]//p[@class='post-body']").map(\.text)
        }

        var firstPostID: Int64 {
            get throws { Int64(try app.count("SELECT min(id) FROM posts")) }
        }

        func makeAdmin(_ name: String) throws -> Browser {
            let admin = app.browser()
            try admin.signUp(name)
            try app.promoteToAdmin(name)
            return admin
        }

        func hideByReports() throws {
            for name in ["reader1", "reader2", "reader3"] {
                let reader = app.browser()
                try reader.signUp(name)
                try app.inGoodStanding(name)
                try reader.get("/city/seoul")
                let (answer, _) = try reader.post("/posts/\(try firstPostID)/report", [("reason", "spam"), ("return_to", "/city/seoul")])
                #expect(answer.status == 303, "\(String(decoding: answer.body, as: UTF8.self).prefix(300))")
            }
        }
    }

    @Test func aCachedPageAnswersWithItsTagAnd304() throws {
        let scene = try Scene()
        let (first, _) = try scene.guest.get("/city/seoul")
        let tag = try #require(first.headers["ETag"])
        let cookie = scene.guest.cookies.map { "\($0.key)=\($0.value)" }.joined(separator: "; ")
        let again = try scene.app.get("/city/seoul", headers: [("Cookie", cookie), ("If-None-Match", tag)])
        #expect(again.status == 304)
        #expect(again.body.isEmpty)
        // Another guest gets the same bytes under the same tag: nothing in them is the first one's.
        let other = try scene.app.get("/city/seoul")
        #expect(other.status == 200)
        #expect(other.headers["ETag"] == tag)
        // So does a client that sends no Fetch Metadata (issue 64: no page holds a form token).
        let old = try scene.app.get("/city/seoul", headers: [("Cookie", cookie), ("If-None-Match", tag)], fetchMetadata: false)
        #expect(old.status == 304)
    }

    /// Issue 38 #4: the tag came from a counter that starts at 0 in every process, so after a
    /// restart (or on another node) a page never had could be answered 304. It is the content's
    /// now: a tag from before a change is answered with the new page by a new process.
    @Test func aTagFromBeforeARestartIsNotTakenForTheNewPage() throws {
        let scene = try Scene()
        let (first, _) = try scene.guest.get("/city/seoul")
        let tag = try #require(first.headers["ETag"])
        let cookie = scene.guest.cookies.map { "\($0.key)=\($0.value)" }.joined(separator: "; ")
        scene.app.clock.advance(60)
        try scene.author.postOnBoard("seoul", "Snow by evening")
        // The same database served by a new process (a restart, or a second node).
        let restarted = try AppHarness(sharedDatabase: scene.app.application.configuration.databaseURL) {
            if scene.app.engine == .sqlite { $0.databasePath = scene.app.application.configuration.databasePath }
        }
        restarted.clock.advance(scene.app.clock.read().timeIntervalSince(AppHarness.fixedNow))
        let answer = try restarted.get("/city/seoul", headers: [("Cookie", cookie), ("If-None-Match", tag)])
        #expect(answer.status == 200)
        #expect(String(decoding: answer.body, as: UTF8.self).contains("Snow by evening"))
        // Its own tag stands with it.
        let current = try #require(answer.headers["ETag"])
        #expect(try restarted.get("/city/seoul", headers: [("Cookie", cookie), ("If-None-Match", current)]).status == 304)
    }

    /// Issue 38 #4: the home page's key left out whether its cities are the reader's bookmarks or
    /// the defaults: a guest who bookmarked the default cities gave the next guest their heading
    /// and Remove buttons.
    @Test func aGuestsBookmarksAreNotAnotherGuestsDefaults() throws {
        let app = try AppHarness()
        let collector = app.browser()
        for slug in HomeController.defaultCities {
            try collector.get("/city/" + slug)
            #expect(try collector.post("/bookmarks/" + slug, []).0.status == 303)
        }
        try collector.get("/") // the bookmark's message shown: this one is rendered for the reader alone
        let (_, own) = try collector.get("/") // kept, under its key
        #expect(own.nodes("//li[@class='city-row']").map { $0["data-slug"] ?? "" } == HomeController.defaultCities)
        #expect(own.text("//h2[@id='city-list-heading']") == "Your cities")
        let (_, newcomer) = try app.browser().get("/")
        #expect(newcomer.nodes("//li[@class='city-row']").map { $0["data-slug"] ?? "" } == HomeController.defaultCities)
        #expect(newcomer.text("//h2[@id='city-list-heading']") != "Your cities")
        #expect(newcomer.nodes("//form[contains(@action,'/bookmarks/')]").isEmpty)
    }

    @Test func aNewPostIsOnTheGuestsPageAtOnce() throws {
        let scene = try Scene()
        try scene.author.postOnBoard("seoul", "Fog rolling in")
        #expect(try scene.guestSees().first == "Fog rolling in")
        #expect(try scene.author.get("/city/seoul").1.nodes("//p[@class='post-body']").first?.text == "Fog rolling in")
    }

    @Test func editsAndDeletionsReachTheGuestAtOnce() throws {
        let scene = try Scene()
        let id = try scene.firstPostID
        try scene.author.get("/posts/\(id)/edit")
        try scene.author.post("/posts/\(id)/edit", [("body", "First light, edited")])
        #expect(try scene.guestSees() == ["First light, edited"])
        try scene.author.get("/city/seoul")
        try scene.author.post("/posts/\(id)/delete", [])
        #expect(try scene.guestSees().isEmpty)
    }

    @Test func hidingRestoringAndRemovingReachTheGuestAtOnce() throws {
        let scene = try Scene()
        try scene.hideByReports()
        #expect(try scene.app.count("SELECT count(*) FROM posts WHERE hidden_at IS NOT NULL") == 1)
        #expect(try scene.app.count("SELECT count(*) FROM reports") == 3)
        #expect(try scene.guestSees().isEmpty, "three reports hide the post")
        let admin = try scene.makeAdmin("chief")
        try admin.get("/admin")
        try admin.post("/admin/posts/\(try scene.firstPostID)/restore", [("reason", "fine")])
        #expect(try scene.guestSees() == ["First light over the Han"])
        try admin.get("/admin")
        try admin.post("/admin/posts/\(try scene.firstPostID)/remove", [("reason", "Advertising")])
        #expect(try scene.guestSees().isEmpty)
    }

    @Test func renamingAndDeletingAnAccountReachTheGuestAtOnce() throws {
        let scene = try Scene()
        func author() throws -> String? {
            try scene.guest.get("/city/seoul").1.nodes("//article[contains(@class,'post')]//*[contains(@class,'author')]").first?.text
        }
        #expect(try author() == "Author")
        try scene.author.get("/settings")
        try scene.author.post("/settings/profile", [("display_name", "Morning Author")])
        #expect(try author() == "Morning Author")
        try scene.author.get("/settings")
        try scene.author.post("/settings/delete", [("password", "correct horse battery")])
        #expect(try author() != "Morning Author")
    }

    @Test func aNewForecastReachesTheGuestAtOnce() throws {
        // Given a provider that is slower than the page's budget: the first page has no weather
        let stub = try UpstreamStub()
        stub.delay = 0.3
        let app = try AppHarness { configuration in
            configuration.weatherProviders = ["open-meteo"]
            configuration.openMeteoURL = stub.url
            configuration.weatherFirstFetchBudget = 0
        }
        #expect(try app.page("/city/seoul").1.nodes("//p[@class='weather-unavailable']").count == 1)
        // Then once the forecast is in, the guests' cached page is replaced (well before the cache's 30 s)
        try waitUntil("the forecast is on the guests' page", timeout: 10) {
            try app.page("/city/seoul").1.nodes("//p[@data-source='open-meteo']").count == 1
        }
    }

    @Test func gzipPagesAreTheSamePageForTheSameVisitor() throws {
        let scene = try Scene()
        let cookie = scene.guest.cookies.map { "\($0.key)=\($0.value)" }.joined(separator: "; ")
        for target in ["/city/seoul", "/", "/static/css/site.css"] {
            let plain = try scene.app.get(target, headers: [("Cookie", cookie)])
            let packed = try scene.app.get(target, headers: [("Cookie", cookie), ("Accept-Encoding", "br;q=1, gzip;q=0.8")])
            #expect(plain.headers["Content-Encoding"] == nil)
            #expect(packed.headers["Content-Encoding"] == "gzip", "\(target)")
            #expect(packed.headers["Vary"]?.contains("Accept-Encoding") == true)
            #expect(packed.body.count < plain.body.count)
            // The same page but for the token, which each response masks afresh.
            #expect(String(decoding: try gunzip(packed.body), as: UTF8.self) == String(decoding: plain.body, as: UTF8.self), "\(target)")
            let refused = try scene.app.get(target, headers: [("Cookie", cookie), ("Accept-Encoding", "gzip;q=0")])
            #expect(refused.headers["Content-Encoding"] == nil)
        }
        // a signed-in page, compressed per response
        try scene.author.get("/city/seoul")
        let authorCookie = scene.author.cookies.map { "\($0.key)=\($0.value)" }.joined(separator: "; ")
        let packed = try scene.app.get("/city/seoul", headers: [("Cookie", authorCookie), ("Accept-Encoding", "gzip")])
        let plain = try scene.app.get("/city/seoul", headers: [("Cookie", authorCookie)])
        #expect(try String(decoding: gunzip(packed.body), as: UTF8.self).contains("First light over the Han"))
        #expect(plain.headers["Content-Encoding"] == nil)
        #expect(String(decoding: try gunzip(packed.body), as: UTF8.self) == String(decoding: plain.body, as: UTF8.self))
        // The weather part went in as it was deflated when it was rendered, for this reader and
        // for guests' kept pages alike: no compressed page deflates it again (issue 24 #4).
        let seoul = try #require(scene.app.application.cities.city(slug: "seoul"))
        let part = try #require(scene.app.application.weatherParts.fragment(city: seoul.id, language: .en,
                                                                           report: scene.app.application.weather.report(for: seoul, client: "test"), hourly: HourReports(), warning: nil,
                                                                           now: scene.app.application.configuration.clock()))
        let deflated = try #require(part.deflated).deflated
        #expect(DeflatedPieceTests.contains(packed.body, deflated))
        let guestPacked = try scene.app.get("/city/seoul", headers: [("Cookie", cookie), ("Accept-Encoding", "gzip")])
        #expect(DeflatedPieceTests.contains(guestPacked.body, deflated))
    }

    /// The layout's head, the same for every reader of a page in a language, is deflated once
    /// and goes into each compressed page as it was (the guests' kept page and each member's
    /// page alike); what follows it is the reader's own, and each page still inflates to itself.
    @Test func theLayoutsHeadIsDeflatedOnceForEveryReaderOfThePage() throws {
        let scene = try Scene()
        let other = scene.app.browser()
        try other.signUp("another_reader")
        var packedPages: [[UInt8]] = []
        var head: [UInt8]?
        for reader in [scene.author, other, scene.guest] {
            let cookie = reader.cookies.map { "\($0.key)=\($0.value)" }.joined(separator: "; ")
            let plain = try scene.app.get("/city/seoul", headers: [("Cookie", cookie)])
            let packed = try scene.app.get("/city/seoul", headers: [("Cookie", cookie), ("Accept-Encoding", "gzip")])
            #expect(String(decoding: try gunzip(packed.body), as: UTF8.self) == String(decoding: plain.body, as: UTF8.self))
            let end = try #require(Self.find(plain.body, Array("\n    <div class=\"account\">".utf8)))
            if let head { #expect(Array(plain.body[..<end]) == head, "the same head for every reader") } else { head = Array(plain.body[..<end]) }
            packedPages.append(packed.body)
        }
        let shown = try #require(head)
        let run = try #require(scene.app.application.pages.renderer.sharedStretches.run(for: shown))
        for packed in packedPages { #expect(DeflatedPieceTests.contains(packed, run.deflated)) }
    }

    static func find(_ haystack: [UInt8], _ needle: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        return (0...(haystack.count - needle.count)).first { haystack[$0..<($0 + needle.count)].elementsEqual(needle) }
    }

    /// Readers a board is the same for share one render of it (decided from its rows, before
    /// rendering); what is a reader's own gets a render of its own: their post's Delete, their
    /// agreement, a person they blocked left out (issue 22's signed-in figure, issue 24 #5).
    @Test func readersABoardIsTheSameForShareOneRenderAndOthersGetTheirOwn() throws {
        let scene = try Scene()
        let boards = scene.app.application.boards
        let readers = [scene.app.browser(), scene.app.browser()]
        try readers[0].signUp("reader")
        try readers[1].signUp("another")
        let postID = try scene.firstPostID
        let post = "//article[@data-post-id='\(postID)']"
        let before = (boards.made.load(ordering: .relaxed), boards.reused.load(ordering: .relaxed))
        let pages = try readers.map { try $0.get("/city/seoul").1 }
        #expect(boards.made.load(ordering: .relaxed) == before.0 + 1)
        #expect(boards.reused.load(ordering: .relaxed) == before.1 + 1)
        for page in pages {
            #expect(page.nodes(post).count == 1)
            #expect(page.nodes("//form[@action='/posts/\(postID)/delete']").isEmpty)
            #expect(page.nodes(post + "//button[@aria-pressed='false']").count == 1)
        }
        // The author's board has Delete on their post.
        #expect(try scene.author.get("/city/seoul").1.nodes("//form[@action='/posts/\(postID)/delete']").count == 1)
        // One reader agrees: their board says so; the other's shows the count only.
        #expect(try readers[1].post("/posts/\(postID)/react", [("return_to", "/city/seoul")]).0.status == 303)
        let agreed = try readers[1].get("/city/seoul").1
        let other = try readers[0].get("/city/seoul").1
        #expect(agreed.nodes(post + "//button[@aria-pressed='true']").count == 1)
        #expect(other.nodes(post + "//button[@aria-pressed='false']").count == 1)
        #expect(other.nodes(post + "//*[@data-reactions='1']").count == 1)
        // One blocks the author: the post leaves their board alone.
        try readers[0].get("/users/author")
        #expect(try readers[0].post("/users/author/block", [("return_to", "/city/seoul")]).0.status == 303)
        #expect(try readers[0].get("/city/seoul").1.nodes(post).isEmpty)
        #expect(try readers[1].get("/city/seoul").1.nodes(post).count == 1)
    }

    /// A board page is read once for everyone it is the same for (`BoardSnapshots`, SQLite):
    /// each signed-in reader adds their own agreements and reports in one statement; a change to
    /// the board makes it read again at once, a forecast does not; a reader who sees it otherwise
    /// (they blocked someone, or a post of theirs is hidden) gets it read for them alone; the
    /// observations are counted again after a minute.
    @Test func aBoardIsReadOnceForEveryoneItIsTheSameForAndEachReaderAddsTheirOwnMarks() throws {
        let scene = try Scene()
        let snapshots = scene.app.application.boardSnapshots
        #expect((snapshots == nil) == (TestEngine.current == .postgres), "kept only where every change arrives as it commits")
        let reads = { snapshots?.reads.load(ordering: .relaxed) ?? 0 }
        let seoul = try #require(scene.app.application.cities.city(slug: "seoul"))
        let readers = [scene.app.browser(), scene.app.browser(), scene.app.browser()]
        for (n, reader) in readers.enumerated() { try reader.signUp("reader\(n)") }
        try scene.app.inGoodStanding("reader0", "reader1", "reader2") // their reports weigh a member's
        _ = try scene.guestSees() // the board read again after the Given step's announcement
        let postID = try scene.firstPostID
        let post = "//article[@data-post-id='\(postID)']"
        func body(_ page: MarkupDocument) -> [String] {
            page.nodes(post + "//p[@class='post-body'][not(ancestor::article[@data-parent-id])]").map(\.text)
        }

        let before = reads()
        let pages = try readers.map { try $0.get("/city/seoul").1 }
        #expect(pages.allSatisfy { body($0) == ["First light over the Han"] })
        #expect(reads() == before, "the guest's read serves every reader")
        // One agrees, one reports: each sees their own mark, the third neither.
        #expect(try readers[0].post("/posts/\(postID)/react", [("return_to", "/city/seoul")]).0.status == 303)
        #expect(try readers[1].post("/posts/\(postID)/report", [("reason", "spam")]).0.status == 303)
        let agreed = try readers[0].get("/city/seoul").1, reported = try readers[1].get("/city/seoul").1
        let bystander = try readers[2].get("/city/seoul").1
        #expect(agreed.nodes(post + "//button[@aria-pressed='true']").count == 1)
        #expect(agreed.nodes(post + "//*[@data-reactions='1']").count == 1)
        #expect(reported.text(post + "/p[@class='reported-placeholder']") == "You reported this post.")
        #expect(body(reported).isEmpty)
        #expect(bystander.nodes(post + "//button[@aria-pressed='false']").count == 1 && body(bystander).count == 1)
        #expect(bystander.nodes(post + "//*[@data-reactions='1']").count == 1)
        // A forecast stored for the city leaves the board as read; a reply changes it at once.
        let afterAgreeing = reads()
        scene.app.application.database.changes.deliver([.weather(seoul.id)], from: .here)
        _ = try readers[2].get("/city/seoul")
        #expect(reads() == afterAgreeing, "a forecast is not the board")
        #expect(try readers[2].post("/posts/\(postID)/replies", [("body", "Same here by the river")]).0.status == 303)
        for reader in [readers[0], readers[2]] { // (the reporter sees the post's placeholder, without its conversation)
            #expect(try reader.get("/city/seoul").1.nodes("//article[@data-parent-id='\(postID)']//p[@class='post-body']").map(\.text)
                    == ["Same here by the river"])
        }
        // Blocking the author: their post leaves this reader's board only.
        try readers[2].get("/users/author")
        #expect(try readers[2].post("/users/author/block", [("return_to", "/city/seoul")]).0.status == 303)
        #expect(try readers[2].get("/city/seoul").1.nodes(post).isEmpty)
        #expect(try body(readers[0].get("/city/seoul").1) == ["First light over the Han"])
        // Hidden by reports, the post is still its author's on their board, and nobody else's.
        let third = scene.app.browser()
        try third.signUp("reader3")
        try scene.app.inGoodStanding("reader3") // three members' reports hide it
        try third.get("/city/seoul")
        for reporter in [readers[0], third] {
            #expect(try reporter.post("/posts/\(postID)/report", [("reason", "spam")]).0.status == 303)
        }
        #expect(try scene.author.get("/city/seoul").1.nodes(post + "[contains(@class,'is-hidden')]").count == 1)
        #expect(try readers[0].get("/city/seoul").1.nodes(post + "//p[@class='post-body']").isEmpty)
        // The "last 3 hours" tally moves with the clock though the board does not change.
        let observer = scene.app.browser()
        try observer.signUp("observer")
        try observer.get("/city/seoul")
        #expect(try observer.post("/city/seoul/posts", [("body", "Snow on the bridges"), ("sky", "snow")]).0.status == 303)
        func snow() throws -> String? {
            try readers[0].get("/city/seoul").1.nodes("//*[@data-observations]//*[@data-sky='snow']").first?["data-count"]
        }
        #expect(try snow() == "1")
        scene.app.clock.advance(Observation.window - 30)
        #expect(try snow() == "1")
        let readBefore = reads()
        scene.app.clock.advance(61)
        #expect(try snow() == nil, "counted again after a minute: the post is more than 3 hours old")
        #expect(reads() == readBefore + (snapshots == nil ? 0 : 1), "the tally alone, the board as it was")
    }

    /// A kept page that expires and renders again byte for byte the same reuses its deflated
    /// form (no deflating it again) and keeps its tag, so a visitor's copy is still current (304);
    /// once its text changes (a post's time now reads "10 minutes ago") it gets a new tag.
    @Test func anExpiredPageThatRendersTheSameKeepsItsDeflatedFormAndItsTag() throws {
        let scene = try Scene()
        let cache = scene.app.application.pageCache
        let cookie = scene.guest.cookies.map { "\($0.key)=\($0.value)" }.joined(separator: "; ")
        func guestPage() throws -> (tag: String, page: [UInt8]) {
            let packed = try scene.app.get("/city/seoul", headers: [("Cookie", cookie), ("Accept-Encoding", "gzip")])
            #expect(packed.status == 200 && packed.headers["Content-Encoding"] == "gzip")
            return (try #require(packed.headers["ETag"]), try gunzip(packed.body))
        }
        let first = try guestPage()
        let renders = cache.renders.load(ordering: .relaxed)
        scene.app.clock.advance(cache.maximumAge + 1)
        let again = try guestPage()
        #expect(cache.renders.load(ordering: .relaxed) == renders + 1, "expired: rendered again")
        #expect(again.tag == first.tag, "the same bytes, the same tag")
        #expect(String(decoding: again.page, as: UTF8.self) == String(decoding: first.page, as: UTF8.self))
        #expect(String(decoding: again.page, as: UTF8.self).contains("First light over the Han"))
        let revalidated = try scene.app.get("/city/seoul", headers: [("Cookie", cookie), ("If-None-Match", again.tag)])
        #expect(revalidated.status == 304)
        scene.app.clock.advance(600)
        let later = try guestPage()
        #expect(later.tag != first.tag, "its text changed")
        #expect(String(decoding: later.page, as: UTF8.self) != String(decoding: first.page, as: UTF8.self))
    }

    /// A board rendered the same for two readers is rendered and deflated once, and both
    /// responses are the same page plain and compressed; a reader whose board differs (the
    /// author, whose post has Edit and Delete) gets their own, kept for their next page (issue 38 #2).
    @Test func aBoardIsRenderedAndDeflatedOnceForEveryoneItLooksTheSameTo() throws {
        let scene = try Scene()
        let boards = scene.app.application.boards
        let readers = [scene.app.browser(), scene.app.browser()]
        try readers[0].signUp("reader")
        try readers[1].signUp("another")
        func cookie(_ browser: Browser) -> String { browser.cookies.map { "\($0.key)=\($0.value)" }.joined(separator: "; ") }
        func page(_ reader: Browser) throws {
            let packed = try scene.app.get("/city/seoul", headers: [("Cookie", cookie(reader)), ("Accept-Encoding", "gzip")])
            #expect(packed.status == 200 && packed.headers["Content-Encoding"] == "gzip")
            let plain = try scene.app.get("/city/seoul", headers: [("Cookie", cookie(reader))])
            #expect(try gunzip(packed.body) == plain.body)
        }
        let before = (boards.made.load(ordering: .relaxed), boards.reused.load(ordering: .relaxed))
        for reader in readers { try page(reader) }
        #expect(boards.made.load(ordering: .relaxed) == before.0 + 1)
        #expect(boards.reused.load(ordering: .relaxed) == before.1 + 3)
        for _ in 0..<2 { try page(scene.author) }
        #expect(boards.made.load(ordering: .relaxed) == before.0 + 2, "the author's own board, kept for their next page")
    }
}

/// Parts of a body deflated ahead of time are spliced in, not compressed again (issue 24 #4).
@Suite struct DeflatedPieceTests {
    /// Page-like text whose stretches repeat each other (so that deflate would reach back across
    /// a piece if the stream were not flushed before it).
    static func text(_ seed: Int, count: Int) -> [UInt8] {
        var out: [UInt8] = []
        var n = seed
        while out.count < count {
            n = (n &* 1_103_515_245 &+ 12_345) & 0x7FFF_FFFF
            out += Array("<article class=\"post\" data-post-id=\"\(n % 97)\"><p>Drizzle by the river \(n % 13)</p></article>\n".utf8)
        }
        return Array(out.prefix(count))
    }

    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard needle.count <= haystack.count else { return false }
        return (0...(haystack.count - needle.count)).contains { haystack[$0..<($0 + needle.count)].elementsEqual(needle) }
    }

    @Test func aBodyWithPiecesAnywhereInflatesToItsBytesAndCarriesThePiecesAsTheyWere() throws {
        let shared = Self.text(7, count: 9_000)
        let run = Gzip.DeflatedRun(shared, level: 9)
        let before = Self.text(1, count: 5_000), between = Self.text(1, count: 3_000), after = Self.text(2, count: 700)
        // piece first, in the middle, twice side by side, last, alone, and in an empty body's stead
        let layouts: [[[UInt8]?]] = [[nil, before], [before, nil, between, nil, after], [before, nil, nil, after], [before, nil], [nil], [before]]
        for layout in layouts {
            var bytes: [UInt8] = []
            var pieces: [Gzip.Piece] = []
            for part in layout {
                if let part { bytes += part } else { pieces.append(Gzip.Piece(offset: bytes.count, run: run)); bytes += shared }
            }
            for level: Int32 in [1, 6] {
                let gzip = Gzip.compress(bytes, reusing: pieces, level: level)
                #expect(try gunzip(gzip) == bytes)
                #expect(pieces.isEmpty || Self.contains(gzip, run.deflated), "the piece is spliced in as deflated once")
            }
        }
    }

    /// Short stretches between pieces go out stored when asked (no Huffman trees built for a few
    /// hundred bytes), longer ones deflated; whatever the layout, the body inflates to its bytes,
    /// also when zlib's stream goes on after a stored stretch.
    @Test func shortStretchesBetweenPiecesAreStoredAndTheBodyStillInflatesToItsBytes() throws {
        let shared = Self.text(7, count: 9_000)
        let run = Gzip.DeflatedRun(shared, level: 9)
        let short = Self.text(1, count: 600), long = Self.text(2, count: 3_000), tail = Self.text(3, count: 300)
        let layouts: [[[UInt8]?]] = [[short, nil, long, nil, tail], [long, nil, short, nil, short], [short, nil], [nil, tail],
                                     [long, nil, short, nil, long], [short, nil, nil, short]]
        for layout in layouts {
            var bytes: [UInt8] = []
            var pieces: [Gzip.Piece] = []
            for part in layout {
                if let part { bytes += part } else { pieces.append(Gzip.Piece(offset: bytes.count, run: run)); bytes += shared }
            }
            let gzip = Gzip.compress(bytes, reusing: pieces, level: 1, storingGapsUnder: 1_024)
            #expect(try gunzip(gzip) == bytes)
            #expect(Self.contains(gzip, run.deflated))
            for part in layout.compactMap({ $0 }) where part.count < 1_024 {
                #expect(Self.contains(gzip, part), "a short stretch goes out as it is")
            }
            #expect(!Self.contains(gzip, Array(long.prefix(1_500))), "a long one is deflated")
        }
    }

    /// A page lends its large fragments (a board with its replies, a city's weather) instead of
    /// copying them: its body holds the kept fragment's own array; joined it is the page a copy
    /// makes, and compressed (splicing the fragment's deflated form) it inflates to it.
    @Test func aPageLendsItsLargeFragments() throws {
        let renderer = try Renderer(templatesDirectory: AppConfiguration.repositoryFolder("Templates"))
        let kept = HTMLFragment(Self.text(5, count: 30_000))
        let small = HTMLFragment(Array("<p>copied, too short to lend</p>".utf8))
        for shown in [kept, kept.deflatedOnce()] {
            let page = renderer.page(.en) { html, _ in
                html.raw("<main>")
                html.text(shown)
                html.text(small)
                html.raw("</main>")
            }
            let expected = Array("<main>".utf8) + kept.bytes + small.bytes + Array("</main>".utf8)
            #expect(page.body.joined() == expected, "the page a copy makes")
            var sharesTheKeptArray = false
            page.body.forEachStretch(in: 0..<page.body.count) { stretch in
                kept.bytes.withUnsafeBufferPointer { keptBytes in
                    if let base = stretch.baseAddress, let keptBase = keptBytes.baseAddress,
                       base >= keptBase, base < keptBase + keptBytes.count { sharesTheKeptArray = true }
                }
            }
            #expect(sharesTheKeptArray, "the fragment is sent from where it is kept")
            let gzip = Gzip.compress(page.body, reusing: page.deflatedParts(), level: 1).joined()
            #expect(try gunzip(gzip) == expected, "compressed, it inflates to the page")
            if let run = shown.deflated { #expect(Self.contains(gzip, run.deflated)) }
        }
    }

    /// What caches keep holds its bytes and no more: a board rendered into room for a long one,
    /// and a kept page, were arrays of 128 KB whatever their size (`Array` of a whole array's
    /// slice is that array), which the caches' budgets, counting bytes, did not see.
    @Test func keptFragmentsAndPagesHoldNoRoomToSpare() throws {
        let renderer = try Renderer(templatesDirectory: AppConfiguration.repositoryFolder("Templates"))
        let board = renderer.fragment(.en, capacity: 64 * 1024) { html, _ in html.raw("<p>a short board</p>") }
        #expect(board.bytes.capacity < 256, "capacity \(board.bytes.capacity)")
        let cache = PageCache(versions: PageVersions())
        let context = AppContext(request: Request(method: "GET", target: "/", headers: HTTPHeaders([("Sec-Fetch-Site", "none")])))
        _ = try cache.response(key: PageCache.Key("short", context), cities: [], context: context) {
            renderer.page(.en) { html, _ in html.raw("<p>a short page</p>") }
        }
        let entry = try #require(cache.entry(for: PageCache.Key("short", context)))
        #expect(entry.bytes.capacity < 256, "capacity \(entry.bytes.capacity)")
    }

    /// A stretch is kept once it is seen again (or a kept page shows it): heads made up one per
    /// request (a search, a query in the language links) are compressed with the rest as before
    /// and push out none of the kept ones.
    @Test func aStretchSeenOnceIsNotKeptAndMadeUpOnesPushOutNothing() throws {
        let stretches = SharedStretches()
        let head = Self.text(1, count: 2_000)
        #expect(stretches.run(for: head) == nil, "seen once")
        let run = try #require(stretches.run(for: head), "seen again")
        let kept = stretches.keptBytes
        #expect(kept > 0)
        for n in 0..<9_000 { #expect(stretches.run(for: head + Array(" \(n)".utf8)) == nil) }
        #expect(stretches.keptBytes == kept, "nothing made up was kept")
        #expect(stretches.run(for: head)?.deflated == run.deflated)
        #expect(stretches.run(for: Self.text(2, count: 2_000), shared: true) != nil, "a kept page's head is kept at once")
    }

    @Test func piecesThatDoNotFitAreCompressedLikeTheRest() throws {
        let shared = Self.text(3, count: 2_000)
        let run = Gzip.DeflatedRun(shared, level: 9)
        let bytes = Self.text(4, count: 1_000) + shared + Self.text(5, count: 1_000)
        let pieces = [Gzip.Piece(offset: 1_000, run: run), Gzip.Piece(offset: 1_500, run: run), // overlaps the first
                      Gzip.Piece(offset: bytes.count - 10, run: run), Gzip.Piece(offset: -5, run: run)] // past the end, before the start
        #expect(try gunzip(Gzip.compress(bytes, reusing: pieces, level: 1)) == bytes)
        #expect(try gunzip(Gzip.compress(bytes, reusing: [], level: 1)) == bytes)
        #expect(try gunzip(Gzip.compress([], reusing: [], level: 1)) == [])
    }

}

enum GunzipError: Error { case failed(Int32) }

/// Inflates a whole gzip body with zlib (and checks its CRC and length).
func gunzip(_ data: [UInt8]) throws -> [UInt8] {
    var stream = z_stream()
    guard inflateInit2_(&stream, 16 + 15, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else { throw GunzipError.failed(-1) }
    defer { inflateEnd(&stream) }
    var input = data
    var output: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 64 * 1024)
    let status: Int32 = input.withUnsafeMutableBufferPointer { inBuffer in
        stream.next_in = inBuffer.baseAddress
        stream.avail_in = UInt32(inBuffer.count)
        var status = Z_OK
        while status == Z_OK {
            status = chunk.withUnsafeMutableBufferPointer { outBuffer in
                stream.next_out = outBuffer.baseAddress
                stream.avail_out = UInt32(outBuffer.count)
                let result = inflate(&stream, Z_NO_FLUSH)
                output += outBuffer.prefix(outBuffer.count - Int(stream.avail_out))
                return result
            }
        }
        return status
    }
    guard status == Z_STREAM_END, stream.avail_in == 0 else { throw GunzipError.failed(status) }
    return output
}

/// What the guest cache keeps is selected by what the page shows, and moves only when that changes
/// (issue 24 #2).
@Suite(.serialized, .onEveryEngine) struct PageCacheKeyTests {
    @Test func aForecastForOneCityLeavesAnotherCitysKeptPageInPlace() throws {
        let app = try AppHarness()
        let guest = app.browser()
        try guest.get("/city/busan")
        try guest.get("/city/seoul")
        try waitUntil("both forecasts stored") {
            try app.count("SELECT count(*) FROM weather_cache w JOIN cities c ON c.id = w.city_id WHERE c.slug IN ('seoul', 'busan')") == 2
        }
        let seoul = try guest.get("/city/seoul").0
        _ = try guest.get("/")
        let renders = app.application.pageCache.renders.load(ordering: .relaxed)

        // A newer forecast for Busan, stored as the weather service stores one
        let busan = Int64(try app.count("SELECT id FROM cities WHERE slug = 'busan'"))
        let payload = try #require(try app.application.database.readStatement {
            try $0.one("SELECT payload FROM weather_cache WHERE city_id = ?", [busan]) { $0.string(0) }
        })
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        var newer = try decoder.decode(Forecast.self, from: Data(payload.utf8))
        newer.fetchedAt = app.clock.read()
        try ForecastStore(database: app.application.database).save(newer, for: try #require(app.application.cities.city(id: busan)),
                                                                   payload: String(decoding: try WeatherService.encoder.encode(newer), as: UTF8.self))

        #expect(try guest.get("/city/seoul").0.headers["ETag"] == seoul.headers["ETag"], "Seoul's page does not show Busan's weather")
        #expect(app.application.pageCache.renders.load(ordering: .relaxed) == renders)
        // The home page shows Busan: rendered again (its tag stays if it came out the same).
        #expect(try guest.get("/").0.status == 200)
        #expect(app.application.pageCache.renders.load(ordering: .relaxed) == renders + 1, "the home page shows Busan")
        // A post on Seoul's board still replaces Seoul's page at once
        let author = app.browser()
        try author.signUp("author")
        try author.postOnBoard("seoul", "Fog lifting")
        #expect(try guest.get("/city/seoul").1.text("//article[1]//p[@class='post-body']") == "Fog lifting")
    }

    @Test(arguments: [("/city/seoul?x=1", "/city/seoul"), ("/city/seoul/", "/city/seoul"), ("/city/%73eoul", "/city/seoul"),
                      ("/city//seoul", "/city/seoul"), ("/city/seoul?before=5&x=1", "/city/seoul?before=5"),
                      ("/city/seoul?x=1&lang=ko", "/city/seoul?lang=ko"), ("/?utm_source=mail", "/")])
    func otherSpellingsOfAnAddressLeadToItsOnePage(spelling: String, address: String) throws {
        let app = try AppHarness()
        let response = try app.get(spelling)
        #expect(response.status == 301, "\(spelling)")
        #expect(response.headers["Location"] == address)
        #expect(app.application.pageCache.renders.load(ordering: .relaxed) == 0, "nothing rendered or kept for \(spelling)")
        #expect(try app.get(address).status == 200)
    }

    /// Issue 39 #4: an unknown `?lang=` value was the page's address, written into the kept
    /// guest page's links (sign-in's return address) for everyone for 30 s.
    @Test func anUnknownLanguageIsSentToTheOneAddress() throws {
        let app = try AppHarness()
        let odd = try app.get("/city/seoul?lang=%22onmouseover%3Dx")
        #expect(odd.status == 301)
        #expect(odd.headers["Location"] == "/city/seoul")
        #expect(try app.get("/city/seoul?lang=zz").headers["Location"] == "/city/seoul")
        #expect(try app.get("/city/seoul?lang=ko").status == 200)
        let (_, page) = try app.page("/city/seoul")
        #expect(!page.nodes("//a[contains(@href,'lang=')]").contains { ($0["href"] ?? "").contains("zz") })
    }

    @Test func theOneAddressAndTheLanguageSwitchAreServedAsThey() throws {
        let app = try AppHarness()
        #expect(try app.get("/city/seoul").status == 200)
        #expect(try app.get("/city/seoul?lang=ko").status == 200)
        #expect(try app.get("/?lang=en").status == 200)
    }

    @Test func concurrentMissesOfOnePageRenderItOnce() throws {
        let app = try AppHarness()
        #expect(try app.get("/city/seoul").status == 200) // its forecast is in; its kept page expires with the clock
        app.clock.advance(60)
        let before = app.application.pageCache.renders.load(ordering: .relaxed)
        let statuses = Locked<[Int]>([])
        DispatchQueue.concurrentPerform(iterations: 50) { _ in
            let status = (try? TestClient.request(port: app.port, "GET", "/city/seoul", headers: [("Sec-Fetch-Site", "none")], timeout: 30).status) ?? 0
            statuses.update { $0.append(status) }
        }
        #expect(statuses.value.count == 50 && statuses.value.allSatisfy { $0 == 200 })
        #expect(app.application.pageCache.renders.load(ordering: .relaxed) - before == 1)
    }
}

/// Issue 24 #3: the weather part is rendered once per stored forecast and five minutes, not
/// again each time a guest page's kept copy expires (30 s).
@Suite(.serialized, .onEveryEngine) struct WeatherPartLifetimeTests {
    private func marker(_ app: AppHarness) throws -> String? {
        let (response, page) = try app.page("/city/seoul")
        #expect(response.status == 200)
        return page.nodes("//*[local-name()='line' and contains(@class, 'now-marker')]").first?["x1"]
    }

    @Test func theWeatherPartOutlivesTheKeptPageUntilTheNextFiveMinuteMark() throws {
        let app = try AppHarness() // 05:45:00 UTC: a five-minute mark
        let first = try #require(try marker(app))
        app.clock.advance(150) // 05:47:30: the kept page expired, the weather part did not
        #expect(try marker(app) == first, "the part rendered at 05:45 is reused")
        app.clock.advance(150) // 05:50:00: the next mark
        let next = try #require(try marker(app))
        #expect(next != first, "the now marker moved with the new part")
    }

    @Test func aPartEndsAtTheNextMarkOrWhenItsReadingStopsBeingNow() {
        let mark = Date(timeIntervalSince1970: 1_795_326_300) // 05:45:00 UTC
        #expect(WeatherFragments.validUntil(now: mark.addingTimeInterval(132), report: nil) == mark.addingTimeInterval(300))
        #expect(WeatherFragments.validUntil(now: mark, report: nil) == mark.addingTimeInterval(300))
        // Kathmandu (UTC+5:45) turns to the next day at 18:15 UTC: a mark, so never a stale date.
        let kathmanduMidnight = Date(timeIntervalSince1970: 1_795_366_800) // 2026-11-22 18:15 UTC
        #expect(WeatherFragments.validUntil(now: kathmanduMidnight.addingTimeInterval(-1), report: nil) == kathmanduMidnight)
        // A reading fetched 2 h 58 min ago stops being "now" in 2 minutes: the part ends then.
        let forecast = Forecast(source: "demo", fetchedAt: mark.addingTimeInterval(-CityWeatherView.currentReadingLifetime + 120),
                                current: nil, daily: [], hourly: [])
        #expect(WeatherFragments.validUntil(now: mark, report: WeatherReport(forecast: forecast, source: "demo")) == mark.addingTimeInterval(120))
        // Quarter hours fetched 28 min ago are too old for the next two hours in 2 minutes: the part ends then.
        let quarters = Forecast(source: "open-meteo", fetchedAt: mark.addingTimeInterval(-Nowcast.maximumAge + 120), current: nil, daily: [], hourly: [])
        #expect(WeatherFragments.validUntil(now: mark, report: WeatherReport(forecast: quarters, source: "open-meteo")) == mark.addingTimeInterval(120))
    }
}
