import Foundation
import HTTPServer
import HTTPTestSupport
import Testing
@testable import Weatherboard

/// Issue 20: cheap requests that cost the site dearly, and the smaller holes found with them.
@Suite(.onEveryEngine) struct HardeningRound3Tests {
    /// #2: a PUT (or any method but GET) of thousands of segments is a 404 at once; and a refused
    /// form still finds the page above its address for its language links.
    @Test func longPathsAreRefusedAndARefusedFormStillLinksToItsPage() throws {
        let app = try AppHarness()
        let deep = "/city/seoul" + String(repeating: "/a", count: 4_000)
        for method in ["PUT", "POST", "DELETE", "OPTIONS"] {
            let response = try TestClient.request(port: app.port, method, deep)
            #expect(response.status == 404, "\(method) \(String(decoding: response.body, as: UTF8.self))")
        }
        let person = app.browser()
        try person.signUp("walker")
        let (refused, page) = try person.postOnBoard("seoul", "   ")
        #expect(refused.status == 422)
        let links = page?.nodes("//ul[@class='lang-switch']//a").compactMap { $0["href"] } ?? []
        #expect(!links.isEmpty)
        #expect(links.allSatisfy { $0.hasPrefix("/city/seoul?lang=") }, "\(links)")
    }

    /// #3: a megabyte-long display name of decomposed characters is refused without normalising
    /// it, and the form gives back at most a few times the limit, at sign-up and in settings.
    @Test func aHugeDisplayNameIsRefusedAndEchoedAtMostTheLimit() throws {
        let app = try AppHarness()
        // 15 KB (45 KB percent-encoded, under the 64 KiB body limit), NFC would make it 10 KB
        let huge = String(repeating: "e\u{301}", count: 5_000)
        let guest = app.browser()
        try guest.get("/signup")
        let (signUp, signUpPage) = try guest.post("/signup", [("username", "decomposed"), ("display_name", huge),
                                                              ("password", "correct horse battery")])
        #expect(signUp.status == 422)
        let echoed = try #require(signUpPage?.nodes("//input[@name='display_name']").first?["value"])
        #expect(echoed.utf8.count <= TextPolicy.displayName.inputBytes)
        #expect(echoed.hasPrefix("e\u{301}e\u{301}") || echoed.hasPrefix("\u{e9}"))
        #expect(signUp.body.count < 30_000)
        #expect(try app.count("SELECT count(*) FROM users WHERE username = 'decomposed'") == 0)

        let member = app.browser()
        try member.signUp("renamer")
        try member.get("/settings")
        let (rename, settingsPage) = try member.post("/settings/profile", [("display_name", huge)])
        #expect(rename.status == 422)
        let kept = try #require(settingsPage?.nodes("//input[@name='display_name']").first?["value"])
        #expect(kept.utf8.count <= TextPolicy.displayName.inputBytes)
        #expect(rename.body.count < 30_000)

        // A name of 40 Hangul syllables typed as decomposed jamo (9 bytes each) is still accepted.
        let jamo = String(repeating: "\u{1100}\u{1161}\u{11A8}", count: 40)
        try member.get("/settings")
        #expect(try member.post("/settings/profile", [("display_name", jamo)]).0.status == 303)
        #expect(try app.count("SELECT count(*) FROM users WHERE display_name = '\(String(repeating: "각", count: 40))'") == 1)
    }

    /// #10: a new display name is on the boards with the person's posts at once; renaming is
    /// limited per person (each change re-renders those boards on every node).
    @Test func renamesShowAtOnceAndAreLimited() throws {
        let app = try AppHarness()
        let member = app.browser()
        try member.signUp("renamer")
        try member.postOnBoard("seoul", "Drizzle by the river")
        let guest = app.browser()
        #expect(try guest.get("/city/seoul").1.text("//article//a[@class='author']") == "Renamer")
        var statuses: [Int] = []
        for n in 1...11 {
            try member.get("/settings")
            statuses.append(try member.post("/settings/profile", [("display_name", "Name \(n)")]).0.status)
        }
        #expect(statuses.prefix(10).allSatisfy { $0 == 303 }, "\(statuses)")
        #expect(statuses.last == 429)
        #expect(try guest.get("/city/seoul").1.text("//article//a[@class='author']") == "Name 10")
        // Saving the same name again is no change and counts for nothing.
        try member.get("/settings")
        #expect(try member.post("/settings/profile", [("display_name", "Name 10")]).0.status == 303)
    }

    /// #3, every other text field: a report's detail and a post are cut before any Unicode work
    /// and given back at most a few times their limits.
    @Test func otherTextFieldsAreCutBeforeAnyUnicodeWork() {
        let huge = String(repeating: "a\u{308}", count: 200_000)
        for policy in [TextPolicy.post, .reportDetail, .moderationReason, .displayName] {
            let typed = policy.typed(huge)
            #expect(typed.wasCut)
            #expect(typed.text.utf8.count <= policy.inputBytes)
            #expect(policy.normalise(typed) == .failure(.tooLong))
            // A cut never splits a character's bytes.
            #expect(TextPolicy.prefix("가나다", bytes: 4) == "가")
        }
    }
}

@Suite(.onEveryEngine) struct TokenHardeningTests {
    /// #9: a planted `csrf` cookie that is not a token the site mints is not taken as one (it
    /// was spliced unescaped into cached pages); no page sets one, whatever the client sends.
    @Test func aPlantedGuestCookieIsNotATokenAndNeverReachesThePage() throws {
        let app = try AppHarness()
        let planted = "<meta http-equiv=\"refresh\" content=\"0;url=https://evil.example/\">aaaaaaaaaaaaaaaaaaaaaaa"
        for target in ["/", "/city/seoul", "/city/seoul"] {
            let modern = try app.get(target, headers: [("Cookie", "csrf=\(planted)")])
            #expect(!String(decoding: modern.body, as: UTF8.self).contains("evil.example"), "\(target)")
            let response = try app.get(target, headers: [("Cookie", "csrf=\(planted)")], fetchMetadata: false)
            #expect(response.status == 200)
            let body = String(decoding: response.body, as: UTF8.self)
            #expect(!body.contains("evil.example"), "\(target)")
            #expect(!response.headers.values("Set-Cookie").contains { $0.hasPrefix("csrf=") }, "a page sets no token")
        }
    }

    /// The token's encoding, on bytes: the same text as Foundation's base64 in the URL alphabet
    /// without padding, for every length.
    @Test func base64URLMatchesFoundation() {
        var generator = SeededGenerator(seed: 11)
        for length in 0...130 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let encoded = Tokens.base64URL(bytes)
            let foundation = Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
            #expect(encoded == foundation, "\(length)")
        }
        #expect(Tokens.random().utf8.count == Tokens.length)
    }
}

@Suite(.onEveryEngine) struct PrefilledConfirmationTests {
    /// #13: a link someone else made can open a ban's confirmation, but it then says first that
    /// a link filled it in, and quotes the post it is about; the moderation queue's own form
    /// opens it without the warning.
    @Test func aBanFilledInByALinkSaysSoAndShowsThePost() throws {
        let app = try AppHarness()
        let (admin, _, _, postID) = try app.reportedPost("Buy cheap umbrellas at example.test")
        let crafted = "/admin/users/author/ban?duration=permanent&reason=spam&post_id=\(postID)"
        let (_, linked) = try admin.get(crafted)
        #expect(linked.text("//p[contains(@class,'confirm-warning')]")?.isEmpty == false)
        #expect(linked.text("//blockquote[@class='confirm-quote']") == "Buy cheap umbrellas at example.test")
        // The queue's own form carries its proof: no warning.
        let (_, queue) = try admin.get("/admin")
        let form = try #require(queue.nodes("//form[contains(@action,'/admin/users/author/ban')]").first)
        let proof = try #require(queue.nodes("//form[contains(@action,'/admin/users/author/ban')]/input[@name='from']").first?["value"])
        #expect(form["method"] == "get")
        let (_, own) = try admin.get(crafted + "&from=\(proof)")
        #expect(own.count("//p[contains(@class,'confirm-warning')]") == 0)
        #expect(own.text("//blockquote[@class='confirm-quote']") == "Buy cheap umbrellas at example.test")
        // Another admin's proof is not this one's.
        let other = app.browser()
        try other.signUp("deputy")
        try app.promoteToAdmin("deputy")
        #expect(try other.get(crafted + "&from=\(proof)").1.count("//p[contains(@class,'confirm-warning')]") == 1)
        // A removal filled in by a link says so too.
        #expect(try admin.get("/admin/posts/\(postID)/remove?reason=spam").1.count("//p[contains(@class,'confirm-warning')]") == 1)
    }
}


/// Issue 20, from reading the code: a check and the write it guards share one transaction, and
/// a target deleted between the page and the decision is a 404, not a foreign-key failure.
@Suite(.onEveryEngine) struct CheckAndWriteTests {
    @Test func anAuthorCannotOvertakeAReportBetweenCheckAndWrite() throws {
        let app = try AppHarness()
        let (_, _, _, postID) = try app.reportedPost("Reported text")
        let store = BoardStore(database: app.application.database, effects: BoardNotices())
        let authorID = Int64(try app.count("SELECT id FROM users WHERE username = 'author'"))
        #expect(throws: BoardStore.UnderReview.self) { try store.edit(postID: postID, authorID: authorID, body: "Innocent now", now: Date()) }
        #expect(throws: BoardStore.UnderReview.self) { try store.delete(postID: postID, authorID: authorID) }
        #expect(try app.count("SELECT count(*) FROM posts WHERE body = 'Reported text'") == 1)
    }

    @Test func decisionsAboutWhatWasDeletedMeanwhileAre404() throws {
        let app = try AppHarness()
        let (_, _, _, postID) = try app.reportedPost("Soon gone")
        let database = app.application.database
        let accounts = AccountStore(database: database)
        let reader = try #require(try accounts.user(named: "reporter"))
        let admin = try #require(try accounts.user(named: "chief"))
        let author = try #require(try accounts.user(named: "author"))
        let post = try #require(try BoardStore(database: database, effects: BoardNotices()).post(id: postID, viewer: reader))
        let moderated = try #require(try ModerationStore(database: database).post(id: postID))
        // The post and its author go while the forms are open.
        try app.execute("DELETE FROM posts WHERE id = ?", [postID])
        func status(_ work: () throws -> Void) -> Int? {
            do { try work(); return nil } catch let error as HTTPError { return error.status.code } catch { return 500 }
        }
        let other = app.browser()
        try other.signUp("latecomer")
        let latecomer = try #require(try accounts.user(named: "latecomer"))
        #expect(status { try BoardStore(database: database, effects: BoardNotices()).report(post, by: latecomer.id, reason: "spam", detail: "", now: 1, perDay: 20, threshold: 3) } == 404)
        let moderation = ModerationStore(database: database)
        #expect(status { try moderation.remove(moderated, by: admin, reason: "spam", now: Date()) } == 404)
        #expect(status { try moderation.restore(moderated, by: admin, reason: "", now: Date()) } == 404)
        // A ban about a post deleted meanwhile still bans, without the post.
        #expect(status { try moderation.ban(author, by: admin, reason: "spam", until: nil, postID: postID, now: Date()) } == nil)
        try app.execute("DELETE FROM users WHERE id = ?", [latecomer.id])
        #expect(status { try moderation.ban(latecomer, by: admin, reason: "spam", until: nil, postID: nil, now: Date()) } == 404)
    }
}

@Suite(.onEveryEngine) struct HonestAnswersTests {
    /// The 21st bookmark is not added, and the person is told so rather than "Bookmarked".
    @Test func aBookmarkPastTheLimitSaysSo() throws {
        let app = try AppHarness()
        let slugs = try app.application.database.readStatement { db in
            try db.all("SELECT slug FROM cities ORDER BY id LIMIT 21") { $0.string(0) }
        }
        let member = app.browser()
        try member.signUp("collector")
        let guest = app.browser()
        for person in [member, guest] {
            for slug in slugs.prefix(20) {
                try person.get("/city/\(slug)")
                #expect(try person.post("/bookmarks/\(slug)", []).0.status == 303)
            }
            try person.get("/city/\(slugs[20])")
            try person.post("/bookmarks/\(slugs[20])", [])
            let (_, page) = try person.get("/city/\(slugs[20])")
            let flash = page.text("//*[contains(@class,'flash')]") ?? ""
            #expect(flash.contains("20"), "\(flash)")
        }
        #expect(try app.count("SELECT count(*) FROM bookmarks") == 20)
        #expect(guest.cookies["bookmarks"]?.split(separator: ".").count == 20)
    }

    /// A stored hash that cannot be checked is the site's fault: a 500, not "wrong password".
    @Test func anUnusableStoredHashIsNotAWrongPassword() throws {
        let app = try AppHarness()
        try app.browser().signUp("damaged")
        try app.execute("UPDATE users SET password_hash = 'scrypt$1099511627776$8$1$AAAA$AAAA' WHERE username = 'damaged'")
        let person = app.browser()
        try person.get("/login")
        #expect(try person.post("/login", [("username", "damaged"), ("password", "correct horse battery")]).0.status == 500)
        try app.execute("UPDATE users SET password_hash = 'not a hash' WHERE username = 'damaged'")
        try person.get("/login")
        #expect(try person.post("/login", [("username", "damaged"), ("password", "correct horse battery")]).0.status == 500)
        #expect(try app.get("/healthz").status == 200)
    }
}

/// #7: nobody can look like an admin or the site's staff.
@Suite(.onEveryEngine) struct ImpersonationTests {
    @Test(arguments: ["admin", "Adm1n", "ROOT", "moderator2", "weatherboard_team", "Support"])
    func privilegedUsernamesCannotBeTaken(username: String) throws {
        let app = try AppHarness()
        let guest = app.browser()
        try guest.get("/signup")
        let (response, page) = try guest.post("/signup", [("username", username), ("display_name", "Someone"), ("password", "correct horse battery")])
        #expect(response.status == 422, "\(username)")
        #expect(page?.text("//*[@id='username-error']")?.isEmpty == false || page?.count("//*[contains(@class,'field-error')]") ?? 0 > 0)
        #expect(try app.count("SELECT count(*) FROM users") == 0)
    }

    /// Issue 39 #4: look-alikes that the hand table let through, now judged by Unicode's
    /// confusables data (`confusables.txt`) and small capitals' names; an admin's name among
    /// other words; staff-sounding names in both languages.
    @Test func confusablesAndStaffNamesFromTheDataAreRefused() throws {
        let app = try AppHarness()
        let admin = app.browser()
        try admin.signUp("root_admin", displayName: "River Watch")
        try app.promoteToAdmin("root_admin")
        #expect(try app.count("SELECT count(*) FROM users WHERE role = 'admin'") == 1)
        let member = app.browser()
        try member.signUp("member")
        for name in ["root_admın", "ʀᴏᴏᴛ_ᴀᴅᴍɪɴ", "root_admin ✓", "The Root Admin", "Site Admin", "Mod Team", "운영팀", "운영진 공지"] {
            try member.get("/settings")
            #expect(try member.post("/settings/profile", [("display_name", name)]).0.status == 422, "\(name)")
        }
        #expect(NamePolicy.skeleton("ʀᴏᴏᴛ") == NamePolicy.skeleton("root"))
        #expect(NamePolicy.skeleton("rnod") == NamePolicy.skeleton("mod"), "UTS #39: rn and m")
        try member.get("/settings")
        #expect(try member.post("/settings/profile", [("display_name", "Rooted in Busan")]).0.status == 303)
    }

    @Test func displayNamesThatReadLikeAnAdminOrTheStaffAreRefused() throws {
        let app = try AppHarness()
        let admin = app.browser()
        try admin.signUp("chief", displayName: "Han River Watch")
        try app.promoteToAdmin("chief")
        let member = app.browser()
        try member.signUp("member")
        let refused = [
            "Han River Watch", "han  river-watch", "Наn Rivеr Wаtch", // Cyrillic Н, е, а
            "Han\u{200B}River\u{200D}Watch", "HAN RlVER WATCH", "chief", "Chief", "CHlEF",
            "Moderator notice", "Weatherboard Team", "관리자 공지", "Admin", "a.d.m.i.n",
            "\u{202E}hcraeS", "\u{2067}name\u{2069}", "\u{3164}", "\u{200B}\u{200B}", "\u{2800}",
        ]
        for name in refused {
            try member.get("/settings")
            let (response, page) = try member.post("/settings/profile", [("display_name", name)])
            #expect(response.status == 422, "\(name.unicodeScalars.map { String($0.value, radix: 16) })")
            #expect(page?.count("//*[contains(@class,'form-error') or contains(@class,'field-error')]") ?? 0 > 0)
        }
        for name in ["Han River fan", "Badminton fan", "Chiefly curious", "서울 사람", "José"] {
            try member.get("/settings")
            #expect(try member.post("/settings/profile", [("display_name", name)]).0.status == 303, "\(name)")
            app.clock.advance(400) // names apart in time, as people rename (the limit is 10 an hour)
        }
        // An admin may keep their own name.
        try admin.get("/settings")
        #expect(try admin.post("/settings/profile", [("display_name", "Han River Watch")]).0.status == 303)
    }

    /// Issue 61 #9: usernames that read like an admin's (`root_adm1n`, `r00t_admin`, `root_admln`,
    /// `rootadmin`, `root__admin` beside an admin `root_admin`), or digits for letters (`4dm1n`,
    /// `r007`), are refused at sign-up with what was typed kept; names that only share a word are not.
    @Test func usernamesThatReadLikeAnAdminsAreRefused() throws {
        let app = try AppHarness { $0.limits.signUpsPerHour = 100 }
        let admin = app.browser()
        try admin.signUp("root_admin", displayName: "Night Watch")
        try app.promoteToAdmin("root_admin")
        for name in ["root_adm1n", "r00t_admin", "root_admln", "rootadmin", "root__admin", "ROOT-ADMIN", "root.admin", "4dm1n", "r007",
                     "night_watch", "nightwatch_kr", "n1ght_w4tch"] {
            let person = app.browser()
            try person.get("/signup")
            let (response, page) = try person.post("/signup", [("username", name), ("display_name", "Someone"), ("password", "correct horse battery")])
            #expect(response.status == 422, "\(name)")
            #expect(page?.nodes("//input[@name='username']").first?["value"] == name)
        }
        for name in ["root_fan", "admiral", "watchful", "night_owl", "rooted"] {
            #expect(try app.browser().signUp(name).status == 303, "\(name)")
        }
    }

    @Test func postsShowTheHandleAnIsolatedNameAndTheAdminBadge() throws {
        let app = try AppHarness()
        let admin = app.browser()
        try admin.signUp("chief", displayName: "Han River Watch")
        try app.promoteToAdmin("chief")
        try admin.postOnBoard("seoul", "Official: the river path is closed")
        app.clock.advance(11)
        let member = app.browser()
        try member.signUp("rivers", displayName: "Rivers")
        try member.postOnBoard("seoul", "Closed? I walked it this morning")
        let (_, page) = try app.browser().get("/city/seoul")
        let byAdmin = "//article[@data-author='chief']"
        #expect(page.text("\(byAdmin)//a[@class='author']/bdi") == "Han River Watch")
        #expect(page.text("\(byAdmin)//span[@class='handle']") == "@chief")
        #expect(page.count("\(byAdmin)//span[@class='admin-badge']") == 1)
        let byMember = "//article[@data-author='rivers']"
        #expect(page.text("\(byMember)//span[@class='handle']") == "@rivers")
        #expect(page.count("\(byMember)//span[@class='admin-badge']") == 0)
    }

    @Test func skeletonsMeetWhereNamesLookAlike() {
        #expect(NamePolicy.skeleton("admin") == NamePolicy.skeleton("ADM1N"))
        #expect(NamePolicy.skeleton("Chief") == NamePolicy.skeleton("Сhіef")) // Cyrillic С, і
        #expect(NamePolicy.skeleton("José") == NamePolicy.skeleton("Jose"))
        #expect(NamePolicy.skeleton("Ｗｅａｔｈｅｒ") == NamePolicy.skeleton("weather")) // fullwidth, NFKC
        #expect(NamePolicy.skeleton("\u{200B}\u{3164} ") == "")
        #expect(NamePolicy.skeleton("서울") == "서울")
    }
}

@Suite(.onEveryEngine) struct BodyLimitTests {
    /// #5: forms are a few KiB; a body past 64 KiB is refused at its head, not buffered.
    @Test func bodiesPastSixtyFourKiBAre413() throws {
        let app = try AppHarness()
        let big = Array(repeating: UInt8(ascii: "a"), count: 65 * 1024)
        let response = try TestClient.request(port: app.port, "POST", "/signup",
                                              headers: [("Content-Type", "application/x-www-form-urlencoded")], body: big)
        #expect(response.status == 413)
        // A large post, percent-encoded, is far below it.
        let person = app.browser()
        try person.signUp("longform")
        #expect(try person.postOnBoard("seoul", String(repeating: "비", count: 500)).0.status == 303)
    }
}
