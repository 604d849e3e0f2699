import Foundation
import Testing
@testable import Weatherboard

/// Issue 63 #7: each feature says what it keeps beside its table; one worker purges, on its own
/// thread (a request never runs the purge), every statement valid on both engines.
@Suite(.onEveryEngine) struct JanitorTests {
    @Test func theWorkerPurgesWhatIsPastItsTimeAndKeepsTheRest() throws {
        let app = try AppHarness { $0.janitorInterval = 0.2 }
        let now = AppHarness.fixedNow.timeIntervalSince1970
        try app.execute("INSERT INTO rate_events (bucket, at) VALUES (?, ?)", ["old", now - 2 * 86_400])
        try app.execute("INSERT INTO rate_events (bucket, at) VALUES (?, ?)", ["recent", now - 60])
        let janitor = app.application.janitor
        // Two rounds past the rows' insertion: the first may have begun before them.
        let after = janitor.rounds + 2
        let deadline = Date().addingTimeInterval(30)
        while janitor.rounds < after && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        #expect(janitor.rounds >= after, "the janitor ran on its own")
        #expect(try app.count("SELECT count(*) FROM rate_events WHERE bucket = 'old'") == 0)
        #expect(try app.count("SELECT count(*) FROM rate_events WHERE bucket = 'recent'") == 1)
    }

    /// Every table a feature declares is purged by a statement its engine accepts.
    @Test func everyDeclaredKeepingIsAValidStatement() throws {
        let app = try AppHarness()
        let tables = Set(app.application.janitor.keeping.map(\.table))
        #expect(tables.isSuperset(of: ["rate_events", "sessions", "notifications", "rain_alerts", "email_tokens", "webauthn_challenges",
                                        "unsubscribe_links", "forecast_history", "known_devices", "form_confirmations", "oidc_attempts", "oidc_pending"]))
        try app.application.janitor.purge(now: AppHarness.fixedNow)
    }
}
