import Foundation
import HTTPTestSupport
import Testing
@testable import Weatherboard

/// Issue 22 #1–#3: a page per post, replies one level deep, and "agree" reactions.
@Suite(.onEveryEngine) struct ConversationTests {
    /// Issue 65 #7: a reply has a pace of its own, a fifth of a post's: a new member (30 s
    /// between posts) answers under a post 7 s after posting, and still waits to post again.
    @Test func aReplyRightAfterPostingIsNotKeptWaitingLikeAPost() throws {
        let app = try AppHarness()
        let newcomer = app.browser()
        try newcomer.signUp("newcomer")
        try newcomer.postOnBoard("seoul", "First time here: is it raining by the river?")
        let postID = try app.count("SELECT max(id) FROM posts")
        app.clock.advance(7)
        try newcomer.get("/posts/\(postID)")
        let (reply, _) = try newcomer.post("/posts/\(postID)/replies", [("body", "It just started here.")])
        #expect(reply.status == 303)
        app.clock.advance(1)
        let (post, page) = try newcomer.postOnBoard("seoul", "And now hail!")
        #expect(post.status == 429)
        #expect(page?.text("//textarea[@name='body']") == "And now hail!")
        #expect(try app.count("SELECT count(*) FROM posts") == 2)
    }

    /// Issue 65 #8: a post by someone the reader blocked opens as what it is (hidden because they
    /// blocked its author), with the way to unblock that comes back to it; not "page not found".
    @Test func aBlockedPersonsPostSaysWhyItIsHiddenAndHowToSeeIt() throws {
        let app = try AppHarness()
        let author = app.browser(), reader = app.browser()
        try author.signUp("author", displayName: "Sunny Author")
        try reader.signUp("reader")
        try author.postOnBoard("seoul", "Hail on the river")
        let postID = try app.count("SELECT max(id) FROM posts")
        try reader.get("/users/author")
        try reader.post("/users/author/block", [])
        let (hidden, page) = try reader.get("/posts/\(postID)")
        #expect(hidden.status == 200)
        #expect(page.text("//h1") == "Hidden: you blocked Sunny Author")
        #expect(!String(decoding: hidden.body, as: UTF8.self).contains("Hail on the river"))
        let form = "//form[@action='/users/author/unblock']"
        #expect(page.nodes(form + "//input[@name='return_to']").first?["value"] == "/posts/\(postID)")
        let (unblocked, _) = try reader.post("/users/author/unblock", [("return_to", "/posts/\(postID)")])
        #expect(unblocked.headers["Location"] == "/posts/\(postID)")
        #expect(try reader.get("/posts/\(postID)").1.text("//article[@data-post-id='\(postID)']//p[@class='post-body']") == "Hail on the river")
        // Someone who blocked nobody still finds no post that is not there.
        #expect(try reader.get("/posts/\(postID + 100)").0.status == 404)
    }

    /// Given a member ("asker") with a question on Seoul's board; its id.
    static func question(_ app: AppHarness, _ text: String = "퇴근길에 비 그칠까요?") throws -> (asker: Browser, postID: Int64) {
        let asker = app.browser()
        try asker.signUp("asker")
        #expect(try asker.postOnBoard("seoul", text).0.status == 303)
        return (asker, Int64(try app.count("SELECT max(id) FROM posts")))
    }

    /// A reply sent from the post's page.
    @discardableResult
    static func reply(_ browser: Browser, to postID: Int64, _ text: String) throws -> (WireResponse, MarkupDocument?) {
        try browser.get("/posts/\(postID)")
        return try browser.post("/posts/\(postID)/replies", [("body", text)])
    }

    /// Issue 39 #4: a conversation closed by reports takes nothing more from anyone but a
    /// moderator: its author (who still sees it) can neither reply, nor mention people in a
    /// reply, nor agree with the replies under it, and is offered none of it; nor can anyone
    /// agree with a reply under a removed post.
    @Test func aClosedConversationTakesNoRepliesMentionsOrAgreements() throws {
        let app = try AppHarness { $0.limits.secondsBetweenPosts = 0 }
        let author = app.browser(), friend = app.browser(), bystander = app.browser()
        try author.signUp("author")
        try friend.signUp("friend")
        try bystander.signUp("bystander")
        try author.postOnBoard("seoul", "A post three people report")
        let postID = Int64(try app.count("SELECT max(id) FROM posts"))
        try friend.get("/city/seoul")
        #expect(try friend.post("/posts/\(postID)/replies", [("body", "A reply before")]).0.status == 303)
        let replyID = Int64(try app.count("SELECT max(id) FROM posts"))
        for name in ["reporter1", "reporter2", "reporter3"] {
            let reporter = app.browser()
            try reporter.signUp(name)
            try app.inGoodStanding(name)
            try reporter.get("/city/seoul")
            #expect(try reporter.post("/posts/\(postID)/report", [("reason", "spam")]).0.status == 303)
        }
        #expect(try app.count("SELECT count(*) FROM posts WHERE id = ? AND hidden_at IS NOT NULL", [postID]) == 1)
        for address in ["/city/seoul", "/posts/\(postID)"] {
            let page = try author.get(address).1
            #expect(page.count("//article[@data-post-id='\(postID)']") == 1, "\(address): its author still sees it")
            #expect(page.count("//form[@action='/posts/\(postID)/replies']") == 0, "\(address)")
            #expect(page.count("//form[@action='/posts/\(replyID)/react']") == 0, "\(address)")
        }
        let notices = try app.count("SELECT count(*) FROM notifications")
        let (closed, closedPage) = try author.post("/posts/\(postID)/replies", [("body", "@friend look at this")])
        #expect(closed.status == 409)
        #expect(closedPage?.text("//p[@class='form-error']")?.contains("hidden while moderators") == true)
        #expect(closedPage?.text("//p[@class='replies-closed']")?.contains("hidden while moderators") == true)
        #expect(try author.post("/posts/\(replyID)/react", [("return_to", "/city/seoul")]).0.status == 404)
        #expect(try app.count("SELECT count(*) FROM posts") == 2)
        #expect(try app.count("SELECT count(*) FROM notifications") == notices, "nobody told of a mention nobody can read")
        #expect(try app.count("SELECT count(*) FROM reactions") == 0)
        // Removed: the reply under it takes no agreement either.
        try app.execute("UPDATE posts SET hidden_at = NULL, removed_at = ?, removed_reason = 'spam' WHERE id = ?",
                        [app.clock.read().timeIntervalSince1970, postID])
        try bystander.get("/city/seoul")
        #expect(try bystander.post("/posts/\(replyID)/react", [("return_to", "/city/seoul")]).0.status == 404)
        #expect(try app.count("SELECT count(*) FROM reactions") == 0)
    }

    /// Issue 39 #4: a post takes `PostingRules.repliesPerPost` replies; the next is refused with
    /// the text kept, and the post's page still reads a page of replies at a time.
    @Test func aConversationTakesSoManyRepliesAndThenSaysSo() throws {
        let app = try AppHarness { $0.limits.secondsBetweenPosts = 0 }
        let author = app.browser(), replier = app.browser()
        try author.signUp("author")
        try replier.signUp("replier")
        try author.postOnBoard("seoul", "Ask me anything about the weather")
        let postID = Int64(try app.count("SELECT max(id) FROM posts"))
        try app.execute("""
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
            INSERT INTO posts (city_id, user_id, body, created_at, parent_id)
            SELECT p.city_id, p.user_id, 'Answer number ' || n.i, p.created_at + n.i, p.id FROM n, posts p WHERE p.id = ?
            """, [PostingRules.repliesPerPost - 1, postID])
        try replier.get("/posts/\(postID)")
        #expect(try replier.post("/posts/\(postID)/replies", [("body", "The last one that fits")]).0.status == 303)
        let (full, page) = try replier.post("/posts/\(postID)/replies", [("body", "One too many")])
        #expect(full.status == 409)
        #expect(page?.text("//p[@class='form-error']")?.contains("1000 replies") == true)
        #expect(page?.nodes("//textarea[@name='body']").first?.text == "One too many")
        #expect(try app.count("SELECT count(*) FROM posts WHERE parent_id = ?", [postID]) == PostingRules.repliesPerPost)
        let (_, first) = try replier.get("/posts/\(postID)")
        #expect(first.count("//article[@data-parent-id='\(postID)']") == BoardQueries.repliesPageSize)
    }

    @Test func aPostHasAPageWithItsCityItsRepliesOldestFirstAndTheReplyForm() throws {
        let app = try AppHarness()
        let (asker, postID) = try Self.question(app)
        // The board's time link leads to the post's own page.
        let (_, board) = try app.page("/city/seoul")
        #expect(board.nodes("//article[@data-post-id='\(postID)']//a[@class='permalink']").first?["href"] == "/posts/\(postID)")

        let answerer = app.browser()
        try answerer.signUp("answerer")
        #expect(try Self.reply(answerer, to: postID, "비는 7시쯤 그친대요").0.headers["Location"]?.hasPrefix("/posts/\(postID)#post-") == true)
        app.clock.advance(11)
        #expect(try Self.reply(asker, to: postID, "감사합니다!").0.status == 303)

        let (response, page) = try app.page("/posts/\(postID)")
        #expect(response.status == 200)
        #expect(page.nodes("//a[@href='/city/seoul#post-\(postID)']").count == 1, "the post's city, linked")
        #expect(page.text("//article[@data-post-id='\(postID)']//p[@class='post-body']") == "퇴근길에 비 그칠까요?")
        let replies = page.nodes("//article[@data-parent-id='\(postID)']")
        #expect(replies.map { $0["data-author"] } == ["answerer", "asker"], "oldest first")
        #expect(page.nodes("//article[@data-post-id='\(postID)']//*[@data-replies]").first?["data-replies"] == "2")
        #expect(page.text("//h2[@id='replies-heading']") == "2 replies")
        #expect(page.nodes("//form[@action='/posts/\(postID)/replies']").isEmpty, "a guest gets no reply form")
        #expect(page.nodes("//a[contains(@href,'/login')]").count >= 1)
        let (_, signedIn) = try answerer.get("/posts/\(postID)")
        #expect(signedIn.nodes("//form[@action='/posts/\(postID)/replies']//textarea[@name='body']").count == 1)

        // A reply's own address is its place on its post's page.
        let replyID = try #require(replies.first?["data-post-id"])
        let moved = try app.get("/posts/\(replyID)")
        #expect(moved.status == 302)
        #expect(moved.headers["Location"] == "/posts/\(postID)#post-\(replyID)")
        #expect(try app.get("/posts/999999").status == 404)
        #expect(try app.get("/posts/abc").status == 404)
        #expect(try app.get("/posts/+\(postID)").status == 404, "one address per post")
        #expect(try app.get("/posts/0\(postID)").status == 404)
        #expect(try app.get("/posts/1?after=x").status == 400)
    }

    @Test func thePostPageTreatsHiddenRemovedDeletedAndBlockedPostsAsTheBoardDoes() throws {
        let app = try AppHarness { $0.limits.reportThreshold = 1; $0.limits.secondsBetweenPosts = 0 }
        let (asker, postID) = try Self.question(app, "Hidden by a report")
        let reporter = app.browser()
        try reporter.signUp("reporter")
        try app.inGoodStanding("reporter")
        try Self.reply(reporter, to: postID, "A reply under it")
        try reporter.get("/city/seoul")
        #expect(try reporter.post("/posts/\(postID)/report", [("reason", "spam")]).0.status == 303)
        // Hidden pending review: not there for others; its author still sees it.
        #expect(try app.get("/posts/\(postID)").status == 404)
        let (own, ownPage) = try asker.get("/posts/\(postID)")
        #expect(own.status == 200)
        #expect(ownPage.count("//article[@data-post-id='\(postID)']//*[@class='hidden-marker']") == 1)

        // Removed: the notice, for everyone, and no replies.
        let chief = app.browser()
        try chief.signUp("chief")
        try app.promoteToAdmin("chief")
        try chief.get("/admin")
        #expect(try chief.post("/admin/posts/\(postID)/remove", [("reason", "Advertising")]).0.status == 303)
        let (removed, removedPage) = try app.page("/posts/\(postID)")
        #expect(removed.status == 200)
        #expect(removedPage.text("//p[@class='removed-notice']")?.contains("Advertising") == true)
        #expect(removedPage.nodes("//p[@class='post-body']").isEmpty)
        #expect(removedPage.nodes("//article[@data-parent-id]").isEmpty)
        // …and it takes no reply, with a clear message and the text kept.
        let (refused, refusedPage) = try reporter.post("/posts/\(postID)/replies", [("body", "Still here?")])
        #expect(refused.status == 409)
        #expect(refusedPage?.text("//p[@class='form-error']")?.contains("removed") == true)

        // Deleted by its author (told its replies go too): gone.
        let second = try Self.secondQuestion(app, asker)
        try Self.reply(reporter, to: second, "An answer that goes with it")
        let (_, confirm) = try asker.get("/posts/\(second)/delete")
        #expect(confirm.text("//p[@class='confirm-detail']")?.hasSuffix("whoever wrote them: 1.") == true)
        #expect(try asker.post("/posts/\(second)/delete", []).0.status == 303)
        #expect(try app.get("/posts/\(second)").status == 404)
        #expect(try reporter.post("/posts/\(second)/replies", [("body", "Too late")]).0.status == 404)

        // Blocked: the blocker sees neither the blocked person's post nor their replies.
        let third = try Self.secondQuestion(app, asker, "A third question")
        try Self.reply(reporter, to: third, "Reply by someone the asker blocks")
        let friend = app.browser()
        try friend.signUp("friend")
        try Self.reply(friend, to: third, "Reply by a friend")
        try asker.get("/users/reporter")
        #expect(try asker.post("/users/reporter/block", []).0.status == 303)
        let (_, blockerView) = try asker.get("/posts/\(third)")
        #expect(blockerView.nodes("//article[@data-parent-id='\(third)']").map { $0["data-author"] } == ["friend"])
        #expect(blockerView.nodes("//article[@data-post-id='\(third)']//*[@data-replies]").first?["data-replies"] == "1")
        let (_, board) = try asker.get("/city/seoul")
        #expect(board.nodes("//article[@data-post-id='\(third)']//*[@data-replies]").first?["data-replies"] == "1")
        let reporterPost = try Self.secondQuestion(app, reporter, "The blocked person's own post")
        // Said as hidden because of the block (issue 65 #8), nothing of it shown.
        let (hidden, hiddenPage) = try asker.get("/posts/\(reporterPost)")
        #expect(hidden.status == 200 && hiddenPage.count("//form[@action='/users/reporter/unblock']") == 1)
        #expect(!String(decoding: hidden.body, as: UTF8.self).contains("The blocked person's own post"))
    }

    /// Another post by `author` on Seoul's board (the clock moves past the posting interval).
    static func secondQuestion(_ app: AppHarness, _ author: Browser, _ text: String = "Another question") throws -> Int64 {
        app.clock.advance(11)
        #expect(try author.postOnBoard("seoul", text).0.status == 303)
        return Int64(try app.count("SELECT max(id) FROM posts WHERE parent_id IS NULL"))
    }

    @Test func theBoardShowsEachPostsNewestTwoRepliesAndLinksToThemAll() throws {
        let app = try AppHarness { $0.limits.secondsBetweenPosts = 0 }
        let (_, postID) = try Self.question(app)
        let people = try (1...3).map { index -> Browser in
            let person = app.browser()
            try person.signUp("person\(index)")
            return person
        }
        // From the board: the small form under the post comes back to the board.
        for (index, person) in people.enumerated() {
            let (_, board) = try person.get("/city/seoul")
            #expect(board.count("//article[@data-post-id='\(postID)']//form[@action='/posts/\(postID)/replies']") == 1)
            let (sent, _) = try person.post("/posts/\(postID)/replies", [("body", "Answer \(index + 1)"), ("return_to", "/city/seoul")])
            #expect(sent.headers["Location"]?.hasPrefix("/city/seoul#post-") == true)
        }
        let (_, board) = try app.page("/city/seoul")
        let post = "//article[@data-post-id='\(postID)']"
        #expect(board.nodes(post + "//*[@data-replies]").first?["data-replies"] == "3")
        #expect(board.nodes(post + "//article[@data-parent-id='\(postID)']").compactMap { $0["data-author"] } == ["person2", "person3"])
        let all = try #require(board.nodes(post + "//a[@data-replies]").first)
        #expect(all["href"] == "/posts/\(postID)#replies")
        #expect(board.text(post + "//a[@data-replies]") == "All 3 replies")
        #expect(board.nodes("//article[@data-parent-id and not(ancestor::article)]").isEmpty, "replies are not posts of the board")
        // A reply to a reply answers the post: one level.
        let replyID = try #require(board.nodes(post + "//article[@data-parent-id]").first?["data-post-id"])
        try people[0].get("/posts/\(postID)")
        #expect(try people[0].post("/posts/\(replyID)/replies", [("body", "@person2 thanks")]).0.status == 303)
        #expect(try app.count("SELECT count(*) FROM posts WHERE parent_id = ?", [postID]) == 4)
        #expect(try app.count("SELECT count(*) FROM posts WHERE parent_id = ?", [Int64(replyID)!]) == 0)
    }

    @Test func repliesFollowThePostingRulesEditWindowsReportsModerationAndAccountDeletion() throws {
        let app = try AppHarness { $0.limits.reportThreshold = 1 }
        let (_, postID) = try Self.question(app)
        let answerer = app.browser()
        try answerer.signUp("answerer")
        #expect(try Self.reply(answerer, to: postID, "First answer").0.status == 303)
        // Replies count toward the interval between posts; the text comes back with the reason.
        let (tooSoon, page) = try Self.reply(answerer, to: postID, "Second answer, too soon")
        #expect(tooSoon.status == 429 || tooSoon.status == 422)
        #expect(page?.nodes("//textarea[@id='reply-body']").first?.text == "Second answer, too soon")
        let (empty, _) = try answerer.post("/posts/\(postID)/replies", [("body", "   ")])
        #expect(empty.status == 422)
        #expect(try app.count("SELECT count(*) FROM posts WHERE parent_id = ?", [postID]) == 1)

        let replyID = Int64(try app.count("SELECT max(id) FROM posts WHERE parent_id = ?", [postID]))
        // The author's edit window, as for posts.
        try answerer.get("/posts/\(replyID)/edit")
        #expect(try answerer.post("/posts/\(replyID)/edit", [("body", "First answer, edited")]).0.status == 303)
        app.clock.advance(15 * 60 + 1)
        #expect(try answerer.post("/posts/\(replyID)/edit", [("body", "Too late")]).0.status == 403)

        // Reported to the threshold: hidden from others pending review, in the moderators' queue.
        let reporter = app.browser()
        try reporter.signUp("reporter")
        try app.inGoodStanding("reporter")
        try reporter.get("/posts/\(postID)")
        #expect(try reporter.post("/posts/\(replyID)/report", [("reason", "spam")]).0.status == 303)
        #expect(try app.page("/posts/\(postID)").1.nodes("//article[@data-post-id='\(replyID)']").isEmpty)
        let chief = app.browser()
        try chief.signUp("chief")
        try app.promoteToAdmin("chief")
        let (_, queue) = try chief.get("/admin")
        #expect(queue.nodes("//*[@data-post-id='\(replyID)']").count >= 1)
        #expect(try chief.post("/admin/posts/\(replyID)/restore", []).0.status == 303)
        #expect(try app.page("/posts/\(postID)").1.nodes("//article[@data-post-id='\(replyID)']").count == 1)
        try chief.get("/admin")
        #expect(try chief.post("/admin/posts/\(replyID)/remove", [("reason", "Off topic")]).0.status == 303)
        #expect(try app.page("/posts/\(postID)").1.nodes("//article[@data-post-id='\(replyID)']").isEmpty)
        #expect(try app.count("SELECT count(*) FROM moderation_log WHERE post_id = ? AND action = 'remove'", [replyID]) == 1)
        try chief.get("/admin")
        #expect(try chief.post("/admin/posts/\(replyID)/restore", []).0.status == 303)

        // The account goes; the reply stays, as a deleted user's.
        try answerer.get("/settings")
        #expect(try answerer.post("/settings/delete", [("password", "correct horse battery")]).0.status == 303)
        let (_, after) = try app.page("/posts/\(postID)")
        let kept = try #require(after.nodes("//article[@data-post-id='\(replyID)']").first)
        #expect(kept["data-author"] == "")
        #expect(after.text("//article[@data-post-id='\(replyID)']//p[@class='post-body']") == "First answer, edited")
    }

    /// Issue 22, numbers: the board costs the same statements with one bare post as with 20
    /// posts of 3 replies and 2 agreements each (no query per post).
    @Test func aBoardPageCostsTheSameStatementsWhateverItsPostsRepliesAndReactions() throws {
        let app = try AppHarness()
        let reader = app.browser()
        try reader.signUp("reader")
        _ = try Self.question(app, "One post")
        func statementsForTheBoard() throws -> Int {
            try reader.get("/city/seoul") // the forecast fetched, the session touched
            var counts: [Int] = []
            for _ in 0..<3 {
                let before = app.application.database.statements.load(ordering: .relaxed)
                let status = try reader.get("/city/seoul").0.status
                counts.append(app.application.database.statements.load(ordering: .relaxed) - before)
                #expect(status == 200)
            }
            return counts.min() ?? 0
        }
        let bare = try statementsForTheBoard()
        let seoul = Int64(try app.count("SELECT id FROM cities WHERE slug = 'seoul'"))
        let people = try (1...3).map { index -> Int64 in
            try app.execute("INSERT INTO users (username, username_key, display_name, password_hash, created_at) VALUES (?, ?, ?, 'x', 0)",
                            ["p\(index)", "p\(index)", "Person \(index)"])
            return Int64(try app.count("SELECT id FROM users WHERE username = ?", ["p\(index)"]))
        }
        for number in 1...19 {
            try app.execute("INSERT INTO posts (city_id, user_id, body, created_at) VALUES (?, ?, ?, ?)",
                            [seoul, people[number % 3], "Post \(number)", AppHarness.fixedNow.timeIntervalSince1970 - Double(number)])
        }
        for post in try app.application.database.read({ try $0.all("SELECT id FROM posts WHERE city_id = ?", [seoul]) { $0.int64(0) } }) {
            for person in people {
                try app.execute("INSERT INTO posts (city_id, user_id, body, created_at, parent_id) VALUES (?, ?, 'A reply', ?, ?)",
                                [seoul, person, AppHarness.fixedNow.timeIntervalSince1970, post])
            }
            for person in people.prefix(2) { try app.execute("INSERT INTO reactions (post_id, user_id, created_at) VALUES (?, ?, 0)", [post, person]) }
        }
        let (_, board) = try reader.get("/city/seoul")
        #expect(board.count("//article[@data-post-id and not(@data-parent-id)]") == 20)
        #expect(board.count("//article[@data-parent-id]") == 40)
        #expect(board.nodes("//*[@data-replies='3']").count == 20)
        let full = try statementsForTheBoard()
        #expect(full == bare, "statements for a signed-in board page: \(bare) with one bare post, \(full) with 20 posts, 60 replies, 40 agreements")
        print("statements for a signed-in board page: \(full)")
    }

    /// Issue 21 #5: a row is read from the places its SELECT list puts each column (both come
    /// from `PostRow.Column`); every field of a known post and reply comes back as written.
    @Test func aPostRowReadsEveryColumnFromItsPlace() throws {
        let app = try AppHarness()
        let (_, postID) = try Self.question(app, "Sleet at Gwanghwamun")
        try app.execute("UPDATE posts SET sky = 'snow', feels = 'colder', edited_at = created_at + 5 WHERE id = ?", [postID])
        let answerer = app.browser()
        try answerer.signUp("answerer")
        try Self.reply(answerer, to: postID, "Same in Jongno")
        let replyID = Int64(try app.count("SELECT max(id) FROM posts"))
        try answerer.get("/city/seoul")
        #expect(try answerer.post("/posts/\(postID)/react", []).0.status == 303)
        #expect(try answerer.post("/posts/\(postID)/report", [("reason", "spam")]).0.status == 303)
        let viewer = try #require(try app.application.database.readStatement { try User.find(username: "answerer", $0) })
        let (post, reply) = try app.application.database.read { db in
            (try BoardQueries.post(id: postID, viewer: viewer, db), try BoardQueries.post(id: replyID, viewer: viewer, db))
        }
        let p = try #require(post), r = try #require(reply)
        #expect(p.id == postID && p.body == "Sleet at Gwanghwamun" && p.username == "asker" && p.displayName == "Asker")
        #expect(p.citySlug == "seoul" && p.cityNameEn == "Seoul" && p.cityNameKo == "서울" && !p.authorIsAdmin)
        #expect(p.editedAt == p.createdAt.addingTimeInterval(5) && p.hiddenAt == nil && p.removedAt == nil && p.parentID == nil)
        #expect(p.reactions == 1 && p.reactedByViewer && p.reportedByViewerAt != nil)
        #expect(p.observation == Observation(sky: .snow, feels: .colder))
        #expect(r.id == replyID && r.parentID == postID && r.username == "answerer" && r.body == "Same in Jongno")
        #expect(r.reactions == 0 && !r.reactedByViewer && r.reportedByViewerAt == nil && r.observation.sky == nil && r.observation.feels == nil)
    }

    @Test func agreeingTogglesCountsForEveryoneAndNotOnOnesOwnPost() throws {
        let app = try AppHarness()
        let (asker, postID) = try Self.question(app)
        let reader = app.browser()
        try reader.signUp("reader")
        func count(_ page: MarkupDocument) -> String? {
            page.nodes("//article[@data-post-id='\(postID)']//*[@data-reactions]").first?["data-reactions"]
        }
        // The guest's page (kept in the cache) shows 0, then 1 once someone agrees.
        #expect(count(try app.page("/city/seoul").1) == "0")
        let (_, board) = try reader.get("/city/seoul")
        let button = "//article[@data-post-id='\(postID)']//form[@action='/posts/\(postID)/react']//button"
        #expect(board.nodes(button).first?["aria-pressed"] == "false")
        #expect(try reader.post("/posts/\(postID)/react", [("return_to", "/city/seoul")]).0.headers["Location"] == "/city/seoul#post-\(postID)")
        #expect(count(try app.page("/city/seoul").1) == "1")
        #expect(try reader.get("/city/seoul").1.nodes(button).first?["aria-pressed"] == "true")
        // Again: taken back.
        #expect(try reader.post("/posts/\(postID)/react", []).0.status == 303)
        #expect(count(try app.page("/city/seoul").1) == "0")
        // Not on one's own post (no button either), and not as a guest.
        let (_, own) = try asker.get("/city/seoul")
        #expect(own.nodes(button).isEmpty)
        #expect(try asker.post("/posts/\(postID)/react", []).0.status == 403)
        let guest = app.browser()
        try guest.get("/city/seoul")
        #expect(try guest.post("/posts/\(postID)/react", []).0.status == 303)
        #expect(try app.count("SELECT count(*) FROM reactions") == 0)
        #expect(try reader.post("/posts/999999/react", []).0.status == 404)
    }
}
