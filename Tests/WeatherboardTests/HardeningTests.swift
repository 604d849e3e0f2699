import Foundation
import HTTPTestSupport
import Testing
@testable import Weatherboard

/// Requests an attacker can make (or trick an admin into making) get a clear 4xx and leave the
/// process serving.
@Suite struct HardeningTests {
    @Test(arguments: ["/admin?page=9223372036854775807", "/admin/log?page=461168601842738792", "/admin?page=-1",
                      "/admin?page=0", "/admin/log?page=1e3"])
    func pageNumbersOutOfRangeAre400AndTheProcessLives(target: String) throws {
        let app = try AppHarness()
        let admin = app.browser()
        try admin.signUp("chief")
        try app.application.database.pool.write { try $0.execute(sql: "UPDATE users SET role = 'admin' WHERE username = 'chief'") }
        let (response, page) = try admin.get(target)
        #expect(response.status == 400)
        #expect(page.text("//h1") != nil)
        #expect(try app.get("/healthz").status == 200)
        #expect(try admin.get("/admin?page=100000").0.status == 200, "the last page number accepted still renders")
    }
}

@Suite struct LanguageSwitchTests {
    @Test(arguments: ["//evil.example/x", "/\\evil.example/x", "///evil.example", "//evil.example/x?lang=en"])
    func languageLinksStayOnThisSite(target: String) throws {
        let app = try AppHarness()
        let (_, page) = try app.page(target)
        let links = page.nodes("//ul[@class='lang-switch']//a").compactMap { $0["href"] }
        #expect(!links.isEmpty)
        for link in links {
            #expect(link.hasPrefix("/") && !link.hasPrefix("//") && !link.hasPrefix("/\\"), "\(link)")
        }
    }
}
