import Crypto
import Foundation
import HTTPServer

/// Push for a member's browsers: the site's public key, subscriptions made and ended by the
/// page's script (`push.js`), and the list of browsers at `/settings/push`.
struct PushController {
    let pages: Pages
    let store: PushStore
    let sender: PushSender
    let clock: @Sendable () -> Date

    func addRoutes(to router: Router<AppContext>) {
        router.get("/push/key", key)
        router.post("/push/subscriptions", subscribe)
        router.add("DELETE", "/push/subscriptions", unsubscribe)
        router.get("/settings/push", list)
        router.post("/settings/push/{id}/delete", remove)
    }

    /// The VAPID public key browsers subscribe with (an uncompressed P-256 point, base64url).
    func key(_ request: Request, _ context: AppContext) throws -> Response {
        .json(["publicKey": try store.vapid(now: clock()).publicKey])
    }

    /// A `PushSubscription` as the browser gives it (`JSON.stringify(subscription)`).
    struct Subscription: Decodable {
        struct Keys: Decodable { var p256dh: String; var auth: String }
        var endpoint: String
        var keys: Keys
    }

    func subscribe(_ request: Request, _ context: AppContext) throws -> Response {
        let user = try context.requireUser()
        guard let subscription = try? JSONDecoder().decode(Subscription.self, from: Data(request.body)) else {
            throw HTTPError(.badRequest, message: "Expected a PushSubscription as JSON")
        }
        guard sender.origin(of: subscription.endpoint) != nil else {
            throw HTTPError(.unprocessableContent, message: "Not a push service this site sends to")
        }
        guard let point = Tokens.base64URLDecoded(subscription.keys.p256dh, limit: 65), point.count == 65, point.first == 4,
              (try? P256.KeyAgreement.PublicKey(x963Representation: point)) != nil, // a point on the curve
              let auth = Tokens.base64URLDecoded(subscription.keys.auth, limit: 16), auth.count == 16 else {
            throw HTTPError(.unprocessableContent, message: "The subscription's keys are not P-256 and a 16-byte secret")
        }
        try store.subscribe(userID: user.id, endpoint: subscription.endpoint, p256dh: subscription.keys.p256dh,
                            auth: subscription.keys.auth, browser: Self.browser(request.headers["User-Agent"] ?? ""), now: clock())
        return .json(["subscribed": true], status: .created)
    }

    func unsubscribe(_ request: Request, _ context: AppContext) throws -> Response {
        let user = try context.requireUser()
        struct Endpoint: Decodable { var endpoint: String }
        guard let named = try? JSONDecoder().decode(Endpoint.self, from: Data(request.body)) else {
            throw HTTPError(.badRequest, message: "Expected {\"endpoint\": …}")
        }
        try store.unsubscribe(userID: user.id, endpoint: named.endpoint)
        return Response(status: .noContent)
    }

    func list(_ request: Request, _ context: AppContext) throws -> Response {
        let user = try context.requireUser()
        let language = context.language
        let devices = try store.subscriptions(userID: user.id).map { subscription in
            PushDevicesPage.Device(id: subscription.id, browser: subscription.browser, added: Moment(subscription.createdAt, language),
                                   lastUsed: subscription.lastUsedAt.map { Moment($0, language) })
        }
        let view = PushDevicesPage(layout: pages.layout(context, title: pages.string("push_title", language)), devices: devices)
        return pages.html(context) { Templates.settings_push(view, &$0, $1) }
    }

    func remove(_ request: Request, _ context: AppContext) throws -> Response {
        let user = try context.requireUser()
        guard let id = Int64(request.parameters["id"] ?? "") else { throw HTTPError(.notFound) }
        try store.unsubscribe(userID: user.id, id: id)
        context.nextFlash = Flash(.pushRemoved)
        return .redirect(to: "/settings/push")
    }

    /// "Chrome on Android": enough for a member to tell their browsers apart, nothing more of
    /// the User-Agent kept.
    static func browser(_ userAgent: String) -> String {
        let name = [("Edg/", "Edge"), ("Firefox/", "Firefox"), ("SamsungBrowser/", "Samsung Internet"), ("Chrome/", "Chrome"),
                    ("Chromium/", "Chromium"), ("Safari/", "Safari")].first { userAgent.contains($0.0) }?.1 ?? "A browser"
        let system = [("Android", "Android"), ("iPhone", "iPhone"), ("iPad", "iPad"), ("Windows", "Windows"), ("Mac OS", "macOS"),
                      ("CrOS", "ChromeOS"), ("Linux", "Linux")].first { userAgent.contains($0.0) }?.1
        return system.map { "\(name) on \($0)" } ?? name
    }
}

/// `/settings/push`: this browser's switch, and every browser that gets pushes.
struct PushDevicesPage {
    struct Device {
        var id: Int64
        var browser: String
        var added: Moment
        var lastUsed: Moment?
    }

    var layout: LayoutView
    var devices: [Device]
    var hasDevices: Bool { !devices.isEmpty }
}
