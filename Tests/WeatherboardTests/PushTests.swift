import Crypto
import Foundation
import Testing
import HTTPServer
import HTTPTestSupport
@testable import Weatherboard

/// The stand-in's routes need no context of their own.
final class StandInContext: RequestContext {
    init(request: Request) {}
}

/// A push service on loopback for the tests (our HTTP server, with a route a subscription's
/// endpoint names): it records what it receives and answers as each test plans.
final class PushServiceStandIn: Sendable {
    struct Received: Sendable {
        var path: String
        var headers: HTTPHeaders
        var body: [UInt8]
    }

    enum Answer: Sendable {
        case status(Int, retryAfter: Int?)
        /// Accepts the request and answers nothing for `seconds`.
        case hang(seconds: Double)
    }

    let received = Locked<[Received]>([])
    let plan = Locked<[String: [Answer]]>([:])
    private let server: Server

    var origin: String { "http://127.0.0.1:\(server.port)" }
    func endpoint(_ name: String) -> String { origin + "/push/" + name }
    func receivedFor(_ name: String) -> [Received] { received.value.filter { $0.path == "/push/" + name } }

    init() throws {
        let router = Router<StandInContext>()
        let received = received, plan = plan
        router.post("/push/{name}") { request, _ in
            received.update { $0.append(Received(path: request.path, headers: request.headers, body: request.body)) }
            let name = request.parameters["name"] ?? ""
            var answer = Answer.status(201, retryAfter: nil)
            plan.update { plans in if let next = plans[name]?.first { answer = next; plans[name]?.removeFirst() } }
            switch answer {
            case .hang(let seconds):
                Thread.sleep(forTimeInterval: seconds)
                return Response(status: .created)
            case .status(let code, let retryAfter):
                var response = Response(status: HTTPStatus(code: code, reason: "Planned"))
                if let retryAfter { response.headers.add("Retry-After", String(retryAfter)) }
                return response
            }
        }
        var configuration = ServerConfiguration()
        configuration.host = "127.0.0.1"
        configuration.port = 0
        server = Server(configuration: configuration, responder: router.responder)
        try server.start()
    }

    deinit {
        server.shutdown()
        server.wait()
    }
}

/// A browser's side of a subscription: the key pair and secret the push is encrypted for.
struct TestSubscriber {
    let key = P256.KeyAgreement.PrivateKey()
    let auth = randomBytes(16)

    func json(endpoint: String) -> String {
        #"{"endpoint":"\#(endpoint)","expirationTime":null,"keys":{"p256dh":"\#(Tokens.base64URL(Array(key.publicKey.x963Representation)))","auth":"\#(Tokens.base64URL(auth))"}}"#
    }

    /// The push's plaintext, decrypted by Python's http_ece (an implementation independent of ours).
    func decrypt(_ body: [UInt8]) throws -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("wb-push-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try Data(body).write(to: URL(fileURLWithPath: folder + "/body"))
        let script = Bundle.module.url(forResource: "decrypt", withExtension: "py", subdirectory: "Fixtures/webpush")!.path
        let run = try ChildProcess(shell: "exec python3 '\(script)' '\(folder)/body' \(Tokens.base64URL(Array(key.rawRepresentation))) \(Tokens.base64URL(auth)) > '\(folder)/out' 2> '\(folder)/err'")
        guard run.wait() == 0 else { throw TestClientError("http_ece: \((try? String(contentsOfFile: folder + "/err", encoding: .utf8)) ?? "")") }
        return try String(contentsOfFile: folder + "/out", encoding: .utf8)
    }

    /// Why Python's http_ece cannot run here, or nil.
    static let unavailableReason: String? = {
        guard let check = try? ChildProcess(shell: "exec python3 -c 'import http_ece, cryptography'"), check.wait() == 0 else {
            return "python3 with http_ece is missing (pip install http-ece)"
        }
        return nil
    }()

    static func available() -> Bool {
        guard let reason = unavailableReason else { return true }
        if ProcessInfo.processInfo.environment["WEATHERBOARD_REQUIRE_PUSH"] == "1" { Issue.record("http_ece is required here: \(reason)") }
        else { print("push tests not run: \(reason)") }
        return false
    }
}

/// Issue 41 #3: Web Push from the queue to a push service, as a browser would receive it.
@Suite(.serialized, .onEveryEngine) struct PushTests {
    static func site(_ service: PushServiceStandIn) throws -> AppHarness {
        try AppHarness { configuration in
            configuration.pushContact = "mailto:ops@example.org"
            configuration.pushExtraOrigins = [service.origin]
            configuration.pushPollInterval = 0.1
            configuration.pushRetryBase = 1
            configuration.pushTimeout = 2
        }
    }

    /// A member with a subscription (for `name` at the stand-in) and a post someone can reply to.
    static func subscribed(_ app: AppHarness, _ service: PushServiceStandIn, _ username: String, _ name: String) throws
        -> (browser: Browser, subscriber: TestSubscriber, postID: Int64) {
        let member = app.browser()
        try member.signUp(username)
        let subscriber = TestSubscriber()
        #expect(try member.json("POST", "/push/subscriptions", subscriber.json(endpoint: service.endpoint(name))).status == 201)
        try member.postOnBoard("seoul", "Hail on \(username)'s street")
        return (member, subscriber, Int64(try app.count("SELECT max(id) FROM posts")))
    }

    static func reply(_ app: AppHarness, to postID: Int64, as username: String) throws {
        let neighbour = app.browser()
        try neighbour.signUp(username)
        try ConversationTests.reply(neighbour, to: postID, "Here too, the size of peas")
    }

    @Test func aReplyIsPushedEncryptedForTheBrowserWithAVAPIDTokenForItsService() throws {
        guard TestSubscriber.available() else { return }
        let service = try PushServiceStandIn()
        let app = try Self.site(service)
        let (member, subscriber, postID) = try Self.subscribed(app, service, "walker", "walker-phone")
        try Self.reply(app, to: postID, as: "neighbour")
        try waitUntil("the push arrives", timeout: 20) { service.receivedFor("walker-phone").count == 1 }
        let push = service.receivedFor("walker-phone")[0]
        #expect(push.headers["Content-Encoding"] == "aes128gcm")
        #expect(push.headers["TTL"] == "86400")
        #expect(push.headers["Urgency"] == "normal")
        let payload = try #require(try JSONSerialization.jsonObject(with: Data(subscriber.decrypt(push.body).utf8)) as? [String: String])
        #expect(payload["title"] == "Weatherboard")
        #expect(payload["body"] == "Neighbour replied to your post in Seoul", "\(payload)")
        #expect(payload["url"]?.hasPrefix("/posts/\(postID)") == true)
        #expect(payload["lang"] == "en")

        // The token: ES256 over the service's origin, signed by the key the site gives browsers.
        let authorization = try #require(push.headers["Authorization"])
        let publicKey = try #require(try JSONSerialization.jsonObject(with: Data(member.get("/push/key").0.body)) as? [String: String])["publicKey"]
        #expect(authorization.hasSuffix(", k=\(publicKey ?? "")"))
        let jwt = authorization.dropFirst("vapid t=".count).prefix { $0 != "," }.split(separator: ".").map(String.init)
        let claims = try #require(try JSONSerialization.jsonObject(with: Data(Tokens.base64URLDecoded(jwt[1])!)) as? [String: Any])
        #expect(claims["aud"] as? String == service.origin)
        #expect(claims["sub"] as? String == "mailto:ops@example.org")
        let expires = Double(claims["exp"] as? Int ?? 0), now = AppHarness.fixedNow.timeIntervalSince1970
        #expect(expires > now && expires <= now + 12 * 3600)
        let key = try P256.Signing.PublicKey(x963Representation: Tokens.base64URLDecoded(publicKey ?? "")!)
        #expect(key.isValidSignature(try P256.Signing.ECDSASignature(rawRepresentation: Tokens.base64URLDecoded(jwt[2])!),
                                     for: Array((jwt[0] + "." + jwt[1]).utf8)))
        try waitUntil("delivered", timeout: 10) { try app.count("SELECT count(*) FROM push_queue") == 0 }
        #expect(try app.count("SELECT count(*) FROM push_subscriptions WHERE last_used_at IS NOT NULL") == 1)
    }

    @Test func aBrowserTheServiceNoLongerKnowsIsForgotten() throws {
        guard TestSubscriber.available() else { return }
        let service = try PushServiceStandIn()
        service.plan.update { $0["gone"] = [.status(410, retryAfter: nil)] }
        let app = try Self.site(service)
        let (_, _, postID) = try Self.subscribed(app, service, "mover", "gone")
        try Self.reply(app, to: postID, as: "neighbour")
        try waitUntil("the subscription is forgotten", timeout: 20) { try app.count("SELECT count(*) FROM push_subscriptions") == 0 }
        #expect(try app.count("SELECT count(*) FROM push_queue") == 0)
    }

    /// 429 with Retry-After: 2 is asked again after two seconds of the site's clock, not before.
    @Test func aBusyServiceIsAskedAgainWhenItSaysAndNotBefore() throws {
        guard TestSubscriber.available() else { return }
        let service = try PushServiceStandIn()
        service.plan.update { $0["busy"] = [.status(429, retryAfter: 2)] }
        let app = try Self.site(service)
        let (_, _, postID) = try Self.subscribed(app, service, "patient", "busy")
        try Self.reply(app, to: postID, as: "neighbour")
        try waitUntil("the first attempt", timeout: 20) {
            try app.count("SELECT count(*) FROM push_queue WHERE attempts = 1 AND claimed_until IS NULL") == 1
        }
        app.clock.advance(1.5)
        try app.waitForRounds(of: "push")
        #expect(service.receivedFor("busy").count == 1, "not before two seconds")
        app.clock.advance(1)
        try waitUntil("asked again", timeout: 20) { service.receivedFor("busy").count == 2 }
        try waitUntil("delivered", timeout: 10) { try app.count("SELECT count(*) FROM push_queue") == 0 }
    }

    /// A service that takes the connection and never answers holds no request (pushes go from
    /// the sender's thread) and delays another member's push by at most the push timeout
    /// (2 s here, 10 s by default).
    @Test func aServiceThatNeverAnswersHoldsNoRequest() throws {
        guard TestSubscriber.available() else { return }
        let service = try PushServiceStandIn()
        service.plan.update { $0["stuck"] = [.hang(seconds: 4)] }
        let app = try Self.site(service)
        let (_, _, stuckPost) = try Self.subscribed(app, service, "stuck", "stuck")
        app.clock.advance(11)
        let (_, _, otherPost) = try Self.subscribed(app, service, "other", "other")
        try Self.reply(app, to: stuckPost, as: "first")
        try waitUntil("the stuck service is asked", timeout: 20) { service.receivedFor("stuck").count == 1 }
        // While it hangs, the site answers, and writes.
        #expect(try app.get("/city/seoul", overSocket: true).status == 200)
        try Self.reply(app, to: otherPost, as: "second")
        try waitUntil("the other member's push arrives", timeout: 20) { service.receivedFor("other").count == 1 }
        #expect(app.log.lines.contains { $0.contains("not delivered, attempt 1") })
    }

    @Test func onlyPushServicesAreSubscribedAndOnlyFromThisSite() throws {
        let service = try PushServiceStandIn()
        let app = try Self.site(service)
        let member = app.browser()
        try member.signUp("careful")
        let subscriber = TestSubscriber()
        for endpoint in ["https://evil.example/push/1", "http://127.0.0.1:1/push/1", "https://fcm.googleapis.com.evil.example/x",
                         "http://fcm.googleapis.com/fcm/send/x", "https://user@fcm.googleapis.com/x",
                         // Issue 61 #8: read one way by Foundation and another by libcurl, which sends.
                         "https://127.0.0.1%2f.fcm.googleapis.com/", "https://127.0.0.1%2F.fcm.googleapis.com/fcm/send/x"] {
            #expect(try member.json("POST", "/push/subscriptions", subscriber.json(endpoint: endpoint)).status == 422, "\(endpoint)")
        }
        #expect(try member.json("POST", "/push/subscriptions", subscriber.json(endpoint: "https://fcm.googleapis.com/fcm/send/abc")).status == 201)
        #expect(try member.json("POST", "/push/subscriptions", #"{"endpoint":"https://fcm.googleapis.com/fcm/send/x","keys":{"p256dh":"AAAA","auth":"AAAA"}}"#).status == 422)
        #expect(try member.json("POST", "/push/subscriptions", "not json").status == 400)
        // A p256dh of the right shape that is no point on the curve.
        let offCurve = Tokens.base64URL([4] + [UInt8](repeating: 1, count: 64))
        #expect(try member.json("POST", "/push/subscriptions",
                                #"{"endpoint":"https://fcm.googleapis.com/fcm/send/y","keys":{"p256dh":"\#(offCurve)","auth":"AAAAAAAAAAAAAAAAAAAAAA"}}"#).status == 422)
        // From another site: refused before anything is read.
        let elsewhere = app.browser()
        elsewhere.cookies = member.cookies
        elsewhere.fetchSite = "cross-site"
        #expect(try elsewhere.json("POST", "/push/subscriptions", subscriber.json(endpoint: "https://fcm.googleapis.com/fcm/send/evil")).status == 403)
        #expect(try elsewhere.json("DELETE", "/push/subscriptions", #"{"endpoint":"https://fcm.googleapis.com/fcm/send/abc"}"#).status == 403)
        #expect(try app.count("SELECT count(*) FROM push_subscriptions") == 1)

        let (_, page) = try member.get("/settings/push")
        #expect(page.count("//*[@data-push-device]") == 1)
        #expect(page.count("//button[@data-push-enable]") == 1)
        #expect(try member.json("DELETE", "/push/subscriptions", #"{"endpoint":"https://fcm.googleapis.com/fcm/send/abc"}"#).status == 204)
        #expect(try app.count("SELECT count(*) FROM push_subscriptions") == 0)
        // A guest has no subscriptions to make.
        #expect(try app.browser().json("POST", "/push/subscriptions", subscriber.json(endpoint: "https://fcm.googleapis.com/fcm/send/g")).status == 303)
    }
}

/// Issue 41 #1: each topic on each channel as the member chose, and quiet hours for pushes.
@Suite(.serialized, .onEveryEngine) struct NotificationChoicesTests {
    @Test func theFormShowsTheDefaultsAndKeepsWhatIsChosen() throws {
        let service = try PushServiceStandIn()
        let app = try PushTests.site(service)
        let member = app.browser()
        try member.signUp("chooser")
        let (_, settings) = try member.get("/settings")
        #expect(settings.count("//a[@href='/settings/notifications']") == 1)
        let (_, page) = try member.get("/settings/notifications")
        func checked(_ page: MarkupDocument, _ name: String) -> Bool? {
            page.nodes("//form[@action='/settings/notifications']//input[@name='\(name)']").first.map { $0["checked"] != nil }
        }
        for (name, on) in [("replies_site", true), ("mentions_site", true), ("agreements_site", true), ("moderation_site", true),
                           ("replies_push", true), ("mentions_push", false), ("agreements_push", false), ("moderation_push", false)] {
            #expect(checked(page, name) == on, "\(name)")
        }
        #expect(page.count("//input[@name='quiet_from' and @type='time']") == 1)
        #expect(page.count("//input[@name='quiet_to' and @type='time']") == 1)

        let (saved, _) = try member.post("/settings/notifications", [("replies_site", "on"), ("mentions_push", "on"), ("quiet_from", "22:00"),
                                                                     ("quiet_to", "07:00"), ("time_zone", "Asia/Seoul")])
        #expect(saved.status == 303)
        let (_, again) = try member.get("/settings/notifications")
        #expect(checked(again, "replies_site") == true)
        #expect(checked(again, "mentions_site") == false)
        #expect(checked(again, "mentions_push") == true)
        #expect(checked(again, "replies_push") == false)
        #expect(again.nodes("//input[@name='quiet_from']").first?["value"] == "22:00")
        #expect(again.nodes("//select[@name='time_zone']/option[@selected]").first?["value"] == "Asia/Seoul")

        let (refused, kept) = try member.post("/settings/notifications", [("quiet_from", "25:00"), ("quiet_to", "07:00")])
        #expect(refused.status == 422)
        #expect(kept?.text("//p[@id='choices-error']") == "Quiet hours need both times, like 22:00 and 07:00.")
        #expect(kept?.nodes("//input[@name='quiet_to']").first?["value"] == "07:00")
    }

    /// Off on the site: the notice is not counted (kept read), and its push still goes; off
    /// everywhere: nothing is written.
    @Test func aTopicOffOnTheSiteOrEverywhere() throws {
        guard TestSubscriber.available() else { return }
        let service = try PushServiceStandIn()
        let app = try PushTests.site(service)
        let (member, _, postID) = try PushTests.subscribed(app, service, "quiet", "quiet-phone")
        try member.get("/settings/notifications")
        try member.post("/settings/notifications", [("replies_push", "on")])
        try PushTests.reply(app, to: postID, as: "first")
        try waitUntil("the push", timeout: 20) { service.receivedFor("quiet-phone").count == 1 }
        #expect(try app.count("SELECT count(*) FROM notifications WHERE read_at IS NOT NULL") == 1)
        #expect(try member.get("/").1.nodes("//a[@class='notifications-link']").first?["data-unread"] == "0")

        try member.get("/settings/notifications")
        try member.post("/settings/notifications", [])
        app.clock.advance(11)
        try PushTests.reply(app, to: postID, as: "second")
        #expect(try app.count("SELECT count(*) FROM notifications") == 1, "nothing written for a topic off everywhere")
    }

    /// In quiet hours (14:00–15:00 in Seoul; the test's clock says 14:45 there) a push waits
    /// for their end, and then goes.
    @Test func quietHoursHoldPushesUntilTheyEnd() throws {
        guard TestSubscriber.available() else { return }
        let service = try PushServiceStandIn()
        let app = try PushTests.site(service)
        let (member, _, postID) = try PushTests.subscribed(app, service, "sleeper", "sleeper-phone")
        try member.get("/settings/notifications")
        try member.post("/settings/notifications", [("replies_site", "on"), ("replies_push", "on"), ("quiet_from", "14:00"),
                                                    ("quiet_to", "15:00"), ("time_zone", "Asia/Seoul")])
        try PushTests.reply(app, to: postID, as: "night_owl")
        #expect(try app.count("SELECT count(*) FROM push_queue WHERE next_attempt_at = ?", [AppHarness.fixedNow.timeIntervalSince1970 + 15 * 60]) == 1)
        try app.waitForRounds(of: "push")
        #expect(service.receivedFor("sleeper-phone").isEmpty, "not in quiet hours")
        app.clock.advance(15 * 60)
        try waitUntil("the push, once they end", timeout: 20) { service.receivedFor("sleeper-phone").count == 1 }
    }

    @Test func quietHoursAcrossMidnight() {
        var choices = NotificationChoices(quietFrom: 22 * 60, quietTo: 7 * 60, zone: MemberTimeZone("Asia/Seoul", source: .chosen)!)
        // 05:45 UTC is 14:45 in Seoul: not quiet.
        #expect(choices.pushTime(after: AppHarness.fixedNow) == AppHarness.fixedNow)
        // 23:30 in Seoul: until 07:00, seven and a half hours later.
        let late = AppHarness.fixedNow.addingTimeInterval((8 * 60 + 45) * 60)
        #expect(choices.pushTime(after: late) == late.addingTimeInterval(7.5 * 3600))
        choices.quietFrom = nil
        #expect(choices.pushTime(after: late) == late)
    }
}
