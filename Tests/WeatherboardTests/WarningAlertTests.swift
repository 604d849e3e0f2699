import Foundation
import Testing
import HTTPTestSupport
@testable import Weatherboard

/// Issue 68 #3: a warning that begins in a city a member follows (a bookmark, or a subscription
/// to its warnings) finds them, once; an update is told only when it changes what to do, and
/// only to those told of the start.
@Suite(.serialized, .onEveryEngine) struct WarningAlertTests {
    static func flood(_ id: String = "urn:oid:flood-1", severity: String = "Severe", messageType: String = "Alert",
                      sent: String = "2026-11-21T21:30:00-08:00", ends: String = "2026-11-22T01:00:00-08:00",
                      references: [String] = []) -> [String: Any] {
        WarningTests.alert(id, event: "Flash Flood Warning", severity: severity, messageType: messageType, sent: sent, ends: ends,
                           geometry: WarningTests.losAngeles, references: references)
    }

    static func notices(_ app: AppHarness, _ username: String, kind: String? = nil) throws -> Int {
        try app.count("""
            SELECT count(*) FROM notifications n JOIN users u ON u.id = n.user_id
            WHERE u.username = ? AND n.kind IN ('warning', 'warning_update') AND (? = '' OR n.kind = ?)
            """, [username, kind ?? "", kind ?? ""])
    }

    /// Followers by a bookmark or a subscription, in both languages.
    static func followers(_ app: AppHarness) throws -> (saver: Browser, subscriber: Browser) {
        let saver = app.browser()
        try saver.signUp("saver")
        try saver.get("/city/los-angeles")
        #expect(try saver.post("/bookmarks/los-angeles", []).0.status == 303)
        let subscriber = app.browser()
        try subscriber.signUp("subscriber")
        let (_, page) = try subscriber.get("/city/los-angeles")
        #expect(page.nodes("//*[@data-warning-subscription]").first?["data-warning-subscription"] == "none")
        #expect(try subscriber.post("/city/los-angeles/warnings", []).0.status == 303)
        let (_, after) = try subscriber.get("/city/los-angeles")
        #expect(after.nodes("//*[@data-warning-subscription]").first?["data-warning-subscription"] == "subscribed")
        #expect(try saver.get("/city/los-angeles").1.nodes("//*[@data-warning-subscription]").first?["data-warning-subscription"] == "bookmark")
        return (saver, subscriber)
    }

    @Test func aWarningFindsItsFollowersOnceAndOnlyWhatChangesWhatToDo() throws {
        let stub = try NWSStub()
        try stub.alerts([])
        let app = try AppHarness { $0.warningsNWSURL = stub.url; $0.warningsEvery = 3600 }
        WarningTests.firstPoll(app)
        let (saver, _) = try Self.followers(app)
        let bystander = app.browser()
        try bystander.signUp("bystander")
        #expect(try app.get("/city/los-angeles").body.count > 0)
        let guest = try app.page("/city/los-angeles").1
        #expect(guest.nodes("//*[@data-warning-subscription='guest']//a").count == 1)

        try stub.alerts([Self.flood()])
        app.application.warnings.poll()
        app.application.warnings.poll()
        #expect(try Self.notices(app, "saver") == 1 && Self.notices(app, "subscriber") == 1 && Self.notices(app, "bystander") == 0)
        let (_, list) = try saver.get("/notifications")
        let told = try #require(list.nodes("//li[@data-notification='warning']/a").first)
        #expect(told.text == "Severe warning in Los Angeles: Flash Flood Warning, until 01:00, 22 Nov.", "\(told.text)")
        #expect(told["href"] == "/city/los-angeles")
        let (_, korean) = try saver.get("/notifications?lang=ko")
        #expect(korean.text("//li[@data-notification='warning']/a") == "로스앤젤레스에 심각 특보: Flash Flood Warning, 11월 22일 01:00까지.")
        try saver.get("/notifications?lang=en") // the language chosen stays: back to English

        // One who follows after the start is not told of its updates.
        let late = app.browser()
        try late.signUp("late")
        try late.get("/city/los-angeles")
        #expect(try late.post("/city/los-angeles/warnings", []).0.status == 303)

        // An update that only renews it (the same end): nobody is told.
        try stub.alerts([Self.flood("urn:oid:flood-2", messageType: "Update", sent: "2026-11-21T21:40:00-08:00", references: ["urn:oid:flood-1"])])
        app.application.warnings.poll()
        #expect(try Self.notices(app, "saver") == 1 && Self.notices(app, "late") == 0)
        // Extended: those told of the start hear it.
        try stub.alerts([Self.flood("urn:oid:flood-3", messageType: "Update", sent: "2026-11-21T21:50:00-08:00",
                                    ends: "2026-11-22T04:00:00-08:00", references: ["urn:oid:flood-2"])])
        app.application.warnings.poll()
        #expect(try Self.notices(app, "saver", kind: "warning_update") == 1 && Self.notices(app, "subscriber", kind: "warning_update") == 1)
        #expect(try Self.notices(app, "late") == 0)
        #expect(try saver.get("/notifications").1.text("//li[@data-notification='warning_update']/a")
                == "Extended in Los Angeles: Flash Flood Warning, now until 04:00, 22 Nov.")
        // Raised to extreme: told as a warning again.
        try stub.alerts([Self.flood("urn:oid:flood-4", severity: "Extreme", messageType: "Update", sent: "2026-11-21T22:00:00-08:00",
                                    ends: "2026-11-22T04:00:00-08:00", references: ["urn:oid:flood-3"])])
        app.application.warnings.poll()
        #expect(try Self.notices(app, "saver", kind: "warning") == 2)
        // Cancelled: told once to those told.
        try stub.alerts([WarningTests.alert("urn:oid:flood-5", event: "Flash Flood Warning", messageType: "Cancel",
                                            sent: "2026-11-21T22:10:00-08:00", geometry: WarningTests.losAngeles, references: ["urn:oid:flood-4"])])
        app.application.warnings.poll()
        app.application.warnings.poll()
        #expect(try Self.notices(app, "saver", kind: "warning_update") == 2 && Self.notices(app, "late") == 0)
        #expect(try saver.get("/notifications").1.text("(//li[@data-notification='warning_update'])[1]/a")
                == "Cancelled in Los Angeles: Flash Flood Warning.")

        // Unsubscribing: the next warning finds the bookmark's follower only.
        #expect(try late.post("/city/los-angeles/warnings/delete", []).0.status == 303)
        try stub.alerts([Self.flood("urn:oid:wind-1", sent: "2026-11-21T22:30:00-08:00")])
        app.application.warnings.poll()
        #expect(try Self.notices(app, "late") == 0 && Self.notices(app, "saver", kind: "warning") == 3)
    }

    /// Quiet hours hold a moderate warning's push and let a severe one's through (the default);
    /// the push is what the list says, decrypted as a browser would.
    @Test func quietHoursHoldModerateAndPassSevere() throws {
        guard TestSubscriber.available() else { return }
        let stub = try NWSStub()
        try stub.alerts([])
        let service = try PushServiceStandIn()
        let app = try AppHarness { configuration in
            configuration.warningsNWSURL = stub.url
            configuration.warningsEvery = 3600
            configuration.pushContact = "mailto:ops@example.org"
            configuration.pushExtraOrigins = [service.origin]
            configuration.pushPollInterval = 0.1
        }
        WarningTests.firstPoll(app)
        let subscriber = TestSubscriber()
        let sleeper = app.browser()
        try sleeper.signUp("sleeper")
        try sleeper.get("/city/los-angeles")
        #expect(try sleeper.post("/bookmarks/los-angeles", []).0.status == 303)
        #expect(try sleeper.json("POST", "/push/subscriptions", subscriber.json(endpoint: service.endpoint("sleeper"))).status == 201)
        try sleeper.get("/settings/notifications")
        // 21:45 in Los Angeles: quiet from 21:00 to 07:00; severe warnings pass (the box is ticked by default).
        #expect(try sleeper.post("/settings/notifications", [("warnings_site", "on"), ("warnings_push", "on"), ("quiet_from", "21:00"),
                                                             ("quiet_to", "07:00"), ("time_zone", "America/Los_Angeles"),
                                                             ("warnings_pass_quiet", "on")]).0.status == 303)
        try stub.alerts([WarningTests.alert("urn:oid:fog-1", event: "Dense Fog Advisory", severity: "Moderate", geometry: WarningTests.losAngeles)])
        app.application.warnings.poll()
        #expect(try Self.notices(app, "sleeper") == 1)
        try stub.alerts([WarningTests.alert("urn:oid:fog-1", event: "Dense Fog Advisory", severity: "Moderate", geometry: WarningTests.losAngeles),
                         Self.flood()])
        app.application.warnings.poll()
        try waitUntil("the severe warning pushed", timeout: 20) { service.receivedFor("sleeper").count == 1 }
        Thread.sleep(forTimeInterval: 0.5)
        #expect(service.receivedFor("sleeper").count == 1, "the moderate one waits for the end of quiet hours")
        let pushed = try JSONSerialization.jsonObject(with: Data(try subscriber.decrypt(service.receivedFor("sleeper")[0].body).utf8)) as? [String: String]
        #expect(pushed?["body"] == "Severe warning in Los Angeles: Flash Flood Warning, until 01:00, 22 Nov.")
        #expect(pushed?["url"] == "/city/los-angeles")
    }
}
