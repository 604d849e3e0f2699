import Foundation
import HTTPTestSupport
import Testing
@testable import Weatherboard

/// A page's event stream read as a browser's EventSource reads it.
final class EventStreamReader {
    let client: TestClient
    let head: WireResponse
    /// Events read but not yet taken: (id, data).
    private var pending: [(id: String?, data: String)] = []

    init(_ browser: Browser, _ target: String, lastEventID: String? = nil) throws {
        client = try TestClient(port: browser.port, timeout: 10, source: browser.source)
        var text = "GET \(target) HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n"
        if !browser.cookies.isEmpty { text += "Cookie: " + browser.cookies.map { "\($0.key)=\($0.value)" }.joined(separator: "; ") + "\r\n" }
        if let lastEventID { text += "Last-Event-ID: \(lastEventID)\r\n" }
        try client.send(text + "\r\n")
        head = try client.readResponse(head: true)
        if head.status == 200 { try readChunk() } // the opening: retry, a comment and anything replayed
    }

    /// Reads one chunk and the events in it (comments skipped).
    private func readChunk() throws {
        let sizeLine = try client.readUntil("\r\n")
        guard let size = Int(sizeLine.dropLast(), radix: 16), size > 0 else { throw TestClientError("the stream ended") }
        let text = String(decoding: try client.readBytes(size), as: UTF8.self)
        _ = try client.readUntil("\r\n")
        for block in text.components(separatedBy: "\n\n") where !block.isEmpty {
            var id: String?, data: String?
            for line in block.split(separator: "\n") {
                if line.hasPrefix("id: ") { id = String(line.dropFirst(4)) }
                if line.hasPrefix("data: ") { data = String(line.dropFirst(6)) }
            }
            if let data { pending.append((id, data)) }
        }
    }

    /// The next event's data (waiting for it), and its id.
    @discardableResult
    func next() throws -> (id: String?, data: String) {
        while pending.isEmpty { try readChunk() }
        return pending.removeFirst()
    }

    /// Every event up to and including the first whose data is `marker`.
    func events(through marker: String) throws -> [String] {
        var seen: [String] = []
        while true {
            let data = try next().data
            seen.append(data)
            if data == marker { return seen }
        }
    }
}

extension Browser {
    func listen(_ target: String, lastEventID: String? = nil) throws -> EventStreamReader {
        try EventStreamReader(self, target, lastEventID: lastEventID)
    }
}

@Suite(.serialized, .onEveryEngine) struct LiveTests {
    /// Seoul's id (its GeoNames id), the city these tests post in.
    static let seoul: Int64 = 1_835_848

    static func newest(_ app: AppHarness) throws -> Int64 { Int64(try app.count("SELECT max(id) FROM posts")) }

    @Test func theBoardAndThePostPageNameTheirStreams() throws {
        let app = try AppHarness()
        let (asker, postID) = try ConversationTests.question(app)
        #expect(try app.page("/city/seoul").1.nodes("//section[@id='board'][@data-live='/city/seoul/live']").count == 1)
        #expect(try asker.get("/posts/\(postID)").1.nodes("//section[@data-live='/posts/\(postID)/live']").count == 1)
        let stream = try app.browser().listen("/city/seoul/live")
        #expect(stream.head.headers["Content-Type"] == "text/event-stream; charset=utf-8")
        #expect(stream.head.headers["X-Accel-Buffering"] == "no" && stream.head.headers["Cache-Control"] == "no-store")
        let atl = try app.browser().listen("/city/no-such-city/live").head
        #expect(atl.status == 404, "\(atl.status) \(atl.headers)")
        #expect(try app.browser().listen("/posts/999999/live").head.status == 404)
    }

    /// Three members on a quick board (no wait between posts, one report hides): `author`, one
    /// who has blocked them, and one who has not.
    private func sceneWithABlock(blocker blockerName: String, other otherName: String) throws
        -> (app: AppHarness, author: Browser, blocker: Browser, other: Browser) {
        let app = try AppHarness { $0.limits.secondsBetweenPosts = 0; $0.limits.reportThreshold = 1 }
        let author = app.browser(), blocker = app.browser(), other = app.browser()
        try author.signUp("author")
        try blocker.signUp(blockerName)
        try other.signUp(otherName)
        try app.inGoodStanding("author", blockerName, otherName)
        try blocker.get("/users/author")
        #expect(try blocker.post("/users/author/block", []).0.status == 303)
        return (app, author, blocker, other)
    }

    /// Issue 41 #6: a member told something hears it on every page they have open (and nobody
    /// else does); the page then asks for the count, which is theirs alone.
    @Test func aNoticeReachesTheMembersOpenPagesAndOnlyThem() throws {
        let app = try AppHarness()
        let author = app.browser(), neighbour = app.browser()
        try author.signUp("author")
        try neighbour.signUp("neighbour")
        try app.inGoodStanding("author", "neighbour")
        try author.postOnBoard("seoul", "Hail on the hills")
        let postID = try Self.newest(app)
        let board = try author.listen("/city/seoul/live")
        let page = try author.listen("/posts/\(postID)/live")
        let others = try neighbour.listen("/city/seoul/live")
        let guest = try app.browser().listen("/city/seoul/live")
        #expect(try JSONSerialization.jsonObject(with: Data(try author.get("/notifications/unread").0.body)) as? [String: Int] == ["unread": 0])

        try ConversationTests.reply(neighbour, to: postID, "Here too")
        let replyID = try Self.newest(app)
        let reply = #"{"type":"reply","id":\#(replyID),"post":\#(postID),"city":\#(LiveTests.seoul)}"#
        #expect(try board.events(through: #"{"type":"notice"}"#).contains(reply))
        #expect(try page.events(through: #"{"type":"notice"}"#).contains(reply))
        let (answer, _) = try author.get("/notifications/unread")
        #expect(answer.headers["Cache-Control"] == "no-store")
        #expect(try JSONSerialization.jsonObject(with: Data(answer.body)) as? [String: Int] == ["unread": 1])
        // The others hear the reply, and nothing after it but the next post.
        app.clock.advance(11) // past the wait between two posts
        try neighbour.postOnBoard("seoul", "Marker")
        let marker = #"{"type":"post","id":\#(try Self.newest(app))}"#
        #expect(try others.events(through: marker) == [reply, marker])
        #expect(try guest.events(through: marker) == [reply, marker])
        #expect(try JSONSerialization.jsonObject(with: Data(try app.browser().get("/notifications/unread").0.body)) as? [String: Int] == ["unread": 0])
    }

    /// A block or a mute made in another tab (or on another device) reaches the pages already
    /// open: their streams stop announcing the person at once. A page fetches a new reply as
    /// everyone sees it, so a stream that still announced them would show them.
    @Test func aBlockMadeElsewhereSilencesThePagesAlreadyOpen() throws {
        let app = try AppHarness { $0.limits.secondsBetweenPosts = 0 }
        let author = app.browser(), reader = app.browser(), neighbour = app.browser()
        try author.signUp("author")
        try reader.signUp("reader")
        try neighbour.signUp("neighbour")
        try app.inGoodStanding("author", "reader", "neighbour")
        try neighbour.postOnBoard("seoul", "Fog by the river")
        let postID = try Self.newest(app)
        let open = try reader.listen("/city/seoul/live")

        // In another tab: blocking the author, then muting the neighbour for a day.
        try reader.get("/users/author")
        #expect(try reader.post("/users/author/block", []).0.status == 303)
        try ConversationTests.reply(author, to: postID, "Not fog, smoke")
        try reader.get("/users/neighbour")
        #expect(try reader.post("/users/neighbour/mute", [("duration", "day")]).0.status == 303)
        try neighbour.postOnBoard("seoul", "Still foggy")
        let chief = app.browser()
        try chief.signUp("chief")
        try app.inGoodStanding("chief")
        try chief.postOnBoard("seoul", "Marker")
        let marker = #"{"type":"post","id":\#(try Self.newest(app))}"#
        #expect(try open.events(through: marker) == [marker], "nothing of the person blocked, nor of the one muted, since")
    }

    @Test func eachReaderHearsWhatTheyMaySeeAndNothingElse() throws {
        let (app, author, blocker, neighbour) = try sceneWithABlock(blocker: "blocker", other: "neighbour")
        let guest = try app.browser().listen("/city/seoul/live")
        let blocking = try blocker.listen("/city/seoul/live")
        let own = try author.listen("/city/seoul/live")

        // A post: everyone hears it but the person who blocked its author
        try author.postOnBoard("seoul", "Sleet on the river")
        let postID = try Self.newest(app)
        let posted = #"{"type":"post","id":\#(postID)}"#
        #expect(try guest.next().data == posted)
        #expect(try own.next().data == posted)
        try neighbour.postOnBoard("seoul", "Clear in Mapo")
        let marker = #"{"type":"post","id":\#(try Self.newest(app))}"#
        #expect(try blocking.events(through: marker) == [marker], "nothing of the blocked author's post")
        #expect(try guest.next().data == marker)
        #expect(try own.next().data == marker)

        // A reply, an agreement (its count), an edit
        try ConversationTests.reply(neighbour, to: postID, "Same here")
        let replyID = try Self.newest(app)
        #expect(try guest.next().data == #"{"type":"reply","id":\#(replyID),"post":\#(postID),"city":\#(LiveTests.seoul)}"#)
        try neighbour.get("/city/seoul")
        #expect(try neighbour.post("/posts/\(postID)/react", []).0.status == 303)
        #expect(try guest.next().data == #"{"type":"agree","id":\#(postID),"count":1}"#)
        try author.get("/posts/\(postID)/edit")
        #expect(try author.post("/posts/\(postID)/edit", [("body", "Sleet, then snow")]).0.status == 303)
        #expect(try guest.next().data == #"{"type":"edit","id":\#(postID)}"#)

        // Hidden by a report: gone for everyone but its author
        try neighbour.get("/city/seoul")
        #expect(try neighbour.post("/posts/\(postID)/report", [("reason", "spam")]).0.status == 303)
        let gone = #"{"type":"gone","id":\#(postID)}"#
        #expect(try guest.next().data == gone)
        try neighbour.postOnBoard("seoul", "Marker two")
        let marker2 = #"{"type":"post","id":\#(try Self.newest(app))}"#
        #expect(try own.events(through: marker2).contains(gone) == false, "its author still sees it")

        // Removed by a moderator: gone for its author too
        let chief = app.browser()
        try chief.signUp("chief")
        try app.promoteToAdmin("chief")
        try chief.get("/admin")
        #expect(try chief.post("/admin/posts/\(postID)/remove", [("reason", "Off topic")]).0.status == 303)
        #expect(try own.next().data == gone)
        #expect(try guest.events(through: gone).last == gone)
    }

    @Test func aReconnectingPageGetsWhatItMissedOrIsToldToReload() throws {
        let app = try AppHarness { $0.limits.secondsBetweenPosts = 0 }
        let writer = app.browser()
        try writer.signUp("writer")
        var first = ""
        do {
            let stream = try app.browser().listen("/city/seoul/live")
            try writer.postOnBoard("seoul", "One")
            first = try stream.next().id ?? ""
        }
        #expect(first.split(separator: "-").count == 3 && first.split(separator: "-")[1] == "1", "ids are node-serial-milliseconds: \(first)")
        try writer.postOnBoard("seoul", "Two")
        let two = try Self.newest(app)
        try writer.postOnBoard("seoul", "Three")
        let three = try Self.newest(app)
        let resumed = try app.browser().listen("/city/seoul/live", lastEventID: first)
        #expect(try resumed.next().data == #"{"type":"post","id":\#(two)}"#)
        #expect(try resumed.next().data == #"{"type":"post","id":\#(three)}"#)
        // The same through ?last= (live.js reconnecting with its own backoff)
        let viaQuery = try app.browser().listen("/city/seoul/live?last=\(first)")
        #expect(try viaQuery.next().data == #"{"type":"post","id":\#(two)}"#)
        // An id of no node's form, or another node's from before this one started (another process's): reload
        for unknown in ["0000abcd-5", "0000abcd-5-\(Int((AppHarness.fixedNow.timeIntervalSince1970 - 60) * 1000))"] {
            let stranger = try app.browser().listen("/city/seoul/live", lastEventID: unknown)
            let reload = try stranger.next()
            #expect(reload.data == #"{"type":"reload"}"#)
            #expect(reload.id?.hasPrefix("\(app.application.live.node)-3-") == true,
                    "numbered as the last event, so that the reloaded page misses nothing after it")
        }
    }

    @Test func aPostPageHearsItsOwnConversationOnly() throws {
        let app = try AppHarness { $0.limits.secondsBetweenPosts = 0 }
        let (asker, postID) = try ConversationTests.question(app)
        let page = try asker.listen("/posts/\(postID)/live")
        try asker.postOnBoard("seoul", "Another topic")
        let other = try Self.newest(app)
        try ConversationTests.reply(asker, to: other, "not this conversation")
        try ConversationTests.reply(asker, to: postID, "this one")
        let reply = try Self.newest(app)
        #expect(try page.next().data == #"{"type":"reply","id":\#(reply),"post":\#(postID),"city":\#(LiveTests.seoul)}"#)
    }

    @Test func agreementCountsAreSentAtMostOnceASecondPerPost() throws {
        let app = try AppHarness()
        let (_, postID) = try ConversationTests.question(app)
        let stream = try app.browser().listen("/posts/\(postID)/live")
        var people: [Browser] = []
        for n in 0..<3 {
            let person = app.browser()
            try person.signUp("agreeing\(n)")
            people.append(person)
        }
        for person in people {
            try person.get("/posts/\(postID)")
            #expect(try person.post("/posts/\(postID)/react", []).0.status == 303)
        }
        // The first at once; the two within its second held, then sent as one with the count as it stands
        #expect(try stream.next().data == #"{"type":"agree","id":\#(postID),"count":1}"#)
        app.clock.advance(1)
        #expect(try stream.next().data == #"{"type":"agree","id":\#(postID),"count":3}"#)
    }

    // Found by a hostile tester.

    @Test func repliesUnderABlockedPersonsPostAndUnderAHiddenPostAreWithheld() throws {
        let (app, author, reader, stranger) = try sceneWithABlock(blocker: "reader", other: "stranger")
        let blocking = try reader.listen("/city/seoul/live")
        let guest = try app.browser().listen("/city/seoul/live")
        let own = try author.listen("/city/seoul/live")
        try author.postOnBoard("seoul", "Hail in Jongno")
        let postID = try Self.newest(app)
        try ConversationTests.reply(stranger, to: postID, "Here too")
        let replyID = try Self.newest(app)
        let reply = #"{"type":"reply","id":\#(replyID),"post":\#(postID),"city":\#(LiveTests.seoul)}"#
        #expect(try guest.events(through: reply).last == reply)
        // The reader who blocked the post's author hears nothing of its conversation
        try stranger.postOnBoard("seoul", "Marker")
        let marker = #"{"type":"post","id":\#(try Self.newest(app))}"#
        #expect(try blocking.events(through: marker) == [marker])
        #expect(try guest.next().data == marker)

        // Hidden by a report: its conversation is its author's alone
        try stranger.get("/city/seoul")
        #expect(try stranger.post("/posts/\(postID)/report", [("reason", "spam")]).0.status == 303)
        #expect(try guest.next().data == #"{"type":"gone","id":\#(postID)}"#)
        try stranger.get("/posts/\(replyID)")
        #expect(try stranger.post("/posts/\(replyID)/replies", [("body", "answering under a hidden post")]).0.status == 404)
        #expect(try stranger.post("/posts/\(replyID)/react", []).0.status == 404)
        // Its author may add nothing to it now (issue 39 #4); a moderator may, and only the author hears of it.
        #expect(try author.post("/posts/\(postID)/replies", [("body", "Only I see this now")]).0.status == 409)
        let chief = app.browser()
        try chief.signUp("chief")
        try app.promoteToAdmin("chief")
        #expect(try ConversationTests.reply(chief, to: postID, "A moderator's question").0.status == 303)
        let hiddenReply = #"{"type":"reply","id":\#(try Self.newest(app)),"post":\#(postID),"city":\#(LiveTests.seoul)}"#
        #expect(try own.events(through: hiddenReply).last == hiddenReply, "its author follows it")
        try stranger.postOnBoard("seoul", "Marker two")
        let marker2 = #"{"type":"post","id":\#(try Self.newest(app))}"#
        #expect(try guest.events(through: marker2) == [marker2], "nobody else hears of it")
    }

    @Test func aReplayLongerThanAStreamMayHoldIsAReload() throws {
        let app = try AppHarness()
        let seoul = Int64(try app.count("SELECT id FROM cities WHERE slug = 'seoul'"))
        let live = app.application.live
        live.publish(PostEvent(.posted, id: 1, city: seoul, author: 1))
        let first = "\(live.node)-1-0"
        for id in 2...1_000 { live.publish(PostEvent(.posted, id: Int64(id), city: seoul, author: 1)) } // about 40 KB of events
        #expect(try app.browser().listen("/city/seoul/live", lastEventID: first).next().data == #"{"type":"reload"}"#)
        let recent = try app.browser().listen("/city/seoul/live", lastEventID: "\(live.node)-990-0")
        #expect(try recent.next().data == #"{"type":"post","id":991}"#, "a short replay is still sent")
    }

    @Test func aHeldCountNeverOvertakesANewerOne() throws {
        let app = try AppHarness()
        let seoul = Int64(try app.count("SELECT id FROM cities WHERE slug = 'seoul'"))
        let live = app.application.live
        let stream = try app.browser().listen("/city/seoul/live")
        func agreed(_ count: Int) { live.publish(PostEvent(.agreed, id: 7, city: seoul, author: 1, count: count)) }
        agreed(1)                   // sent
        app.clock.advance(0.5)
        agreed(2)                   // held for the rest of the second
        app.clock.advance(0.6)
        agreed(3)                   // a second after the last sent: sent, and the held one dropped
        app.clock.advance(5)
        live.flushCounts()
        live.publish(PostEvent(.posted, id: 8, city: seoul, author: 1))
        let counts = try stream.events(through: #"{"type":"post","id":8}"#)
        #expect(counts == [#"{"type":"agree","id":7,"count":1}"#, #"{"type":"agree","id":7,"count":3}"#, #"{"type":"post","id":8}"#])
    }
}

/// Issue 46 #2: nothing missed. A page is rendered with its place in the stream
/// (`data-live-position`, taken before its rows are read); reconnecting from it after a drop,
/// having heard nothing since it loaded, it gets what was written meanwhile.
@Suite(.serialized, .onEveryEngine) struct LivePositionTests {
    static func position(_ page: MarkupDocument) -> String? { page.nodes("//*[@data-live]").first?["data-live-position"] }

    @Test func aBoardThatHeardNothingResumesFromWhereItWasRendered() throws {
        let app = try AppHarness { $0.limits.secondsBetweenPosts = 0 }
        let writer = app.browser(), reader = app.browser()
        try writer.signUp("writer")
        try writer.postOnBoard("seoul", "Before the page")
        // The page, with no stream open; then posts while it is cut off.
        let position = try #require(Self.position(try reader.get("/city/seoul").1))
        #expect(position.hasPrefix(app.application.live.node + "-"))
        try writer.postOnBoard("seoul", "While the page was cut off")
        let missed = try LiveTests.newest(app)
        let resumed = try reader.listen("/city/seoul/live?last=\(position)")
        #expect(try resumed.next().data == #"{"type":"post","id":\#(missed)}"#)

        // A post's page likewise: a reply made while it listened to nothing.
        let (_, postPage) = try reader.get("/posts/\(missed)")
        let there = try #require(Self.position(postPage))
        try ConversationTests.reply(writer, to: missed, "A reply nobody heard")
        let reply = try LiveTests.newest(app)
        let conversation = try reader.listen("/posts/\(missed)/live", lastEventID: there)
        #expect(try conversation.next().data == #"{"type":"reply","id":\#(reply),"post":\#(missed),"city":\#(LiveTests.seoul)}"#)
    }

    /// A quiet board's page is kept a while with the position of its read; other boards' events
    /// dropped from the replay window meanwhile do not make it reload.
    @Test func aQuietBoardKeptAWhileStillResumes() throws {
        let app = try AppHarness()
        let live = app.application.live
        let busan = Int64(try app.count("SELECT id FROM cities WHERE slug = 'busan'"))
        let position = try #require(Self.position(try app.browser().get("/city/seoul").1))
        for id in 1...(LiveBoards.keptAtMost + 10) { live.publish(PostEvent(.posted, id: Int64(id), city: busan, author: 1)) }
        let seoul = try app.browser().listen("/city/seoul/live", lastEventID: position)
        live.publish(PostEvent(.posted, id: 99_999, city: Int64(try app.count("SELECT id FROM cities WHERE slug = 'seoul'")), author: 1))
        #expect(try seoul.next().data == #"{"type":"post","id":99999}"#, "no reload: nothing of Seoul's was dropped")
        // Busan's own page from then has lost events: reload.
        #expect(try app.browser().listen("/city/busan/live", lastEventID: position).next().data == #"{"type":"reload"}"#)
    }
}

