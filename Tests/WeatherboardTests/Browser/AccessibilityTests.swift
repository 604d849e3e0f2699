import Foundation
import Testing
@testable import Weatherboard

/// axe-core (WCAG 2 A and AA rules) on every kind of page, light and dark, phone and desktop
/// widths: no violations. axe comes from `scripts/fetch-axe.sh` (CI runs it); without it the
/// test says why and passes locally, and fails where the browser is required.
@Suite(.serialized, .onEveryEngine) struct AccessibilityTests {
    static let axePath = AppConfiguration.repositoryFolder(".build/axe.min.js")

    static var axe: String? { try? String(contentsOfFile: axePath, encoding: .utf8) }

    /// The violations axe finds on the page now: "rule: count (first targets)".
    static func violations(_ browser: WebDriver, axe: String) throws -> [String] {
        try browser.script(axe + "\nreturn true;")
        let found = try browser.asyncScript("""
            const done = arguments[arguments.length - 1];
            axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } })
              .then(result => done(result.violations.map(v => v.id + ': ' + v.nodes.length + ' (' +
                    v.nodes.slice(0, 3).map(n => n.target.join(' ') + (n.any[0] ? ' — ' + n.any[0].message : '')).join(' | ') + ')')))
              .catch(error => done(['axe failed: ' + error]));
            """)
        return found as? [String] ?? ["axe gave no answer"]
    }

    @Test("no violations", arguments: [375, 1280])
    func everyPageInBothSchemes(width: Int) throws {
        guard let axe = Self.axe else {
            if WebDriver.required && WebDriver.unavailableReason == nil {
                Issue.record("axe-core is required here: run scripts/fetch-axe.sh")
            } else {
                print("accessibility tests not run: \(Self.axePath) is missing (scripts/fetch-axe.sh)")
            }
            return
        }
        // A relay nothing answers at: the pages that need mail exist; nothing is sent.
        guard let site = try BrowserJourneyTests.start(width: width, configure: AppConfiguration.withEverything) else { return }
        defer { withExtendedLifetime(site) {} }
        let (app, browser, base) = (site.app, site.browser, site.base)
        try BrowserJourneyTests.signUp(browser, base, "checker")
        try app.execute("UPDATE users SET role = 'admin' WHERE username = 'checker'")
        try BrowserJourneyTests.post(browser, base, city: "seoul", "A post to look at, with a link https://example.com/a")
        let postID = try app.count("SELECT id FROM posts")
        // A reply (with a mention) under it, by someone else, and their agreement: the conversation's parts on every page.
        try app.execute("INSERT INTO users (username, username_key, display_name, password_hash, created_at) VALUES ('other', 'other', 'Other', 'x', 0)")
        try app.execute("INSERT INTO posts (city_id, user_id, body, created_at, parent_id) SELECT city_id, (SELECT id FROM users WHERE username = 'other'), 'Same here @checker', created_at, id FROM posts WHERE id = ?", [postID])
        try app.execute("INSERT INTO reactions (post_id, user_id, created_at) SELECT ?, id, 0 FROM users WHERE username = 'other'", [postID])
        try app.execute("INSERT INTO notifications (user_id, kind, post_id, actor_id, created_at) SELECT u.id, 'reply', p.id, p.user_id, p.created_at FROM users u, posts p WHERE u.username = 'checker' AND p.parent_id IS NOT NULL")
        let pages = ["/", "/map", "/search?q=gangnam", "/city/seoul", "/city/singapore", "/city/yakutsk", "/search?q=san", "/users/checker", "/settings",
                     "/settings/reports", "/settings/recovery", "/login/recover", "/settings/email", "/password/forgot", "/settings/passkeys", "/settings/push", "/settings/notifications", "/offline", "/login", "/signup", "/admin", "/admin/log", "/admin/users/checker", "/city/seoul/moderation",
                     "/posts/\(postID)/edit", "/posts/\(postID)", "/notifications", "/no-such-page", "/?lang=ko", "/city/seoul?lang=ko",
                     "/posts/\(postID)?lang=ko", "/admin/users/other", "/admin/users/other/purge?duration=7d&reason=Spam"]
        for scheme in ["light", "dark"] {
            try browser.devTools("Emulation.setEmulatedMedia", ["features": [["name": "prefers-color-scheme", "value": scheme]]])
            for path in pages {
                try browser.go(base + path)
                let found = try Self.violations(browser, axe: axe)
                #expect(found.isEmpty, "\(path), \(scheme), \(width) px: \(found)")
            }
        }
        try browser.devTools("Emulation.setEmulatedMedia", ["features": [["name": "prefers-color-scheme", "value": "light"]]])
        try BrowserJourneyTests.signOut(browser)
        for path in ["/login", "/signup", "/city/seoul"] {
            try browser.go(base + path)
            let found = try Self.violations(browser, axe: axe)
            #expect(found.isEmpty, "\(path), signed out, \(width) px: \(found)")
        }
    }
}
