import Foundation
import Testing
@testable import Weatherboard

/// No page shows Swift's `nil` or `Optional(…)`, whatever optional data is missing: cities without
/// a Korean name, posts of deleted people, log entries without a post or city, lifted and
/// permanent bans, empty lists.
@Suite(.serialized, .onEveryEngine) struct NoNilOnScreenTests {
    @Test func everyPageRendersMissingDataAsNothing() throws {
        let app = try AppHarness(configure: AppConfiguration.withEverything)
        let (admin, author, _, _) = try app.reportedPost("A post that will lose its author")
        try admin.get("/admin/users/reporter")
        try admin.post("/admin/users/reporter/ban", [("duration", "1d"), ("reason", "testing"), ("return_to", "/admin/users/reporter")])
        try admin.get("/admin/users/reporter")
        try admin.post("/admin/users/reporter/unban", [("reason", "lifted")])
        try author.get("/settings")
        try author.post("/settings/delete", [("password", "correct horse battery")])
        let pages = ["/", "/map", "/search?q=springfield", "/search?q=", "/search/posts?q=zzzzqqq&from=cities", "/city/springfield-gardens", "/city/seoul",
                     "/city/seoul?before=1", "/city/seoul/moderation", "/city/seoul/feed.atom", "/users/reporter", "/login", "/signup",
                     "/admin", "/admin/log", "/admin/log?action=unban", "/admin/users/reporter", "/admin/users/author", "/settings",
                     "/settings/reports", "/settings/recovery", "/login/recover", "/settings/email", "/password/forgot", "/settings/passkeys", "/settings/push", "/settings/notifications", "/offline", "/nowhere"]
        // What each page answers each of them (a page answering 500, or a guest let in, is no page of its own).
        let guestStatuses = ["/admin": 303, "/admin/log": 303, "/admin/log?action=unban": 303, "/admin/users/reporter": 303,
                             "/admin/users/author": 303, "/settings": 303, "/settings/reports": 303, "/settings/recovery": 303, "/settings/email": 303, "/settings/passkeys": 303, "/settings/push": 303, "/settings/notifications": 303, "/nowhere": 404]
        let adminStatuses = ["/nowhere": 404]
        var shown = 0
        for (browser, name, statuses) in [(admin, "admin", adminStatuses), (app.browser(), "guest", guestStatuses)] {
            for target in pages {
                let (response, _) = try browser.get(target)
                #expect(response.status == statuses[target] ?? 200, "\(name) \(target)")
                shown += 1
                let text = String(decoding: response.body, as: UTF8.self)
                #expect(!text.contains("Optional("), "\(name) \(target)")
                #expect(text.range(of: #"\bnil\b"#, options: .regularExpression) == nil, "\(name) \(target)")
            }
        }
        #expect(shown == 2 * pages.count)
    }
}
