import Foundation
import Testing
@testable import Weatherboard

/// No page shows Swift's `nil` or `Optional(…)`, whatever optional data is missing: cities without
/// a Korean name, posts of deleted people, log entries without a post or city, lifted and
/// permanent bans, empty lists.
@Suite(.serialized, .onEveryEngine) struct NoNilOnScreenTests {
    @Test func everyPageRendersMissingDataAsNothing() throws {
        let app = try AppHarness()
        let (admin, author, _, _) = try app.reportedPost("A post that will lose its author")
        try admin.get("/admin/users/reporter")
        try admin.post("/admin/users/reporter/ban", [("duration", "1d"), ("reason", "testing"), ("return_to", "/admin/users/reporter")])
        try admin.get("/admin/users/reporter")
        try admin.post("/admin/users/reporter/unban", [("reason", "lifted")])
        try author.get("/settings")
        try author.post("/settings/delete", [("password", "correct horse battery")])
        let pages = ["/", "/search?q=springfield", "/search?q=", "/search?q=zzzzqqq", "/city/springfield-gardens", "/city/seoul",
                     "/city/seoul?before=1", "/city/seoul/moderation", "/city/seoul/feed.atom", "/users/reporter", "/login", "/signup",
                     "/admin", "/admin/log", "/admin/log?action=unban", "/admin/users/reporter", "/admin/users/author", "/settings",
                     "/settings/reports", "/nowhere"]
        for (browser, name) in [(admin, "admin"), (app.browser(), "guest")] {
            for target in pages {
                let (response, _) = try browser.get(target)
                let text = String(decoding: response.body, as: UTF8.self)
                #expect(!text.contains("Optional("), "\(name) \(target)")
                #expect(text.range(of: #"\bnil\b"#, options: .regularExpression) == nil, "\(name) \(target)")
            }
        }
    }
}
