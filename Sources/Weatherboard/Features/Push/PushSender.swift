import Foundation
import HTTPServer
import Logging
import Synchronization

/// Sends the push queue from a thread of its own: woken when a notice is told (the change
/// stream's `.notice`, from any node), and every `pollInterval` for retries. Each push waits at
/// most `timeout` seconds for its service, so a service that hangs delays the others by that
/// much per attempt and never holds a request; a failed push is tried again after 30 s
/// doubling to 15 minutes (or the service's `Retry-After`), until it is a day old.
final class PushSender: Sendable, BackgroundWork {
    struct Settings: Sendable {
        /// RFC 8292's `sub`: how a push service reaches the operator (`--push-contact`).
        var contact: String
        /// Push services this site sends to: https origins ending in these host names. A
        /// subscription is an address the site will POST to, so it must be a push service's.
        var serviceHosts = ["fcm.googleapis.com", "push.services.mozilla.com", "push.apple.com", "notify.windows.com"]
        /// Exact origins also allowed, plain http included: the tests' stand-in on loopback.
        var extraOrigins: [String] = []
        var pollInterval: TimeInterval = 5
        var retryBase: TimeInterval = 30
        var timeout = 10
    }

    let settings: Settings
    private let store: PushStore
    private let pages: Pages
    private let clock: @Sendable () -> Date
    private let logger: Logger
    private let worker: QueueWorker
    /// What each push says, from the feature whose notices they are.
    private let wording: PushWording
    /// VAPID tokens per push service origin, reused until an hour before they expire.
    private let tokens = Mutex<[String: (header: String, expires: Date)]>([:])

    init(settings: Settings, store: PushStore, pages: Pages, wording: @escaping PushWording, clock: @escaping @Sendable () -> Date, logger: Logger) {
        self.settings = settings
        self.wording = wording
        self.store = store
        self.pages = pages
        self.clock = clock
        self.logger = logger
        worker = QueueWorker(pollInterval: settings.pollInterval)
    }

    /// The origin of an endpoint the site may push to, or nil for any other address.
    func origin(of endpoint: String) -> String? {
        // Read by libcurl's own parser, the one that sends: a host Foundation reads one way and
        // libcurl another (`https://127.0.0.1%2f.fcm.googleapis.com/`) is refused.
        guard let parts = Curl.parts(of: endpoint), !parts.host.contains("%") else { return nil }
        let (scheme, host) = (parts.scheme, parts.host)
        let origin = "\(scheme)://\(host)" + (parts.port.map { ":\($0)" } ?? "")
        if settings.extraOrigins.contains(origin) { return origin }
        guard scheme == "https", parts.port == nil || parts.port == 443,
              settings.serviceHosts.contains(where: { host == $0 || host.hasSuffix("." + $0) }) else { return nil }
        return origin
    }

    var rounds: Int { worker.rounds.load(ordering: .relaxed) }

    func start() { worker.start { [self] in sendDue() } }

    func wake() { worker.wake() }

    func stop() { worker.stop(waitingAtMost: Double(settings.timeout) + 5) }

    func sendDue() {
        while !worker.isStopped {
            do {
                let (due, expired) = try store.claim(now: clock(), claimFor: Double(settings.timeout) * 2)
                if expired > 0 { logger.warning("push: \(expired) push(es) expired undelivered") }
                guard let due else { return }
                try send(due)
            } catch {
                logger.error("push: the queue could not be read: \(error)")
                return
            }
        }
    }

    private func send(_ due: Due) throws {
        let language = due.language
        guard let origin = origin(of: due.subscription.endpoint),
              let said = try wording(due.notificationID, due.userID, language),
              let p256dh = Tokens.base64URLDecoded(due.subscription.p256dh), let auth = Tokens.base64URLDecoded(due.subscription.auth) else {
            try store.drop(due.id) // nothing left to say, or nowhere to say it
            return
        }
        let payload: [String: String] = ["title": pages.string("site_name", language), "body": said.body,
                                         "url": said.url, "lang": language.rawValue, "tag": said.tag]
        let now = clock()
        do {
            let body = try WebPush.encrypt(Array(try JSONSerialization.data(withJSONObject: payload, options: [.sortedKeys])),
                                           p256dh: p256dh, auth: auth)
            let answer = try PushTransport.post(due.subscription.endpoint, headers: [
                ("Content-Type", "application/octet-stream"), ("Content-Encoding", "aes128gcm"), ("TTL", "86400"),
                ("Urgency", "normal"), ("Authorization", try authorization(for: origin, now: now)),
            ], body: body, timeout: settings.timeout)
            switch answer.status {
            case 200..<300:
                try store.delivered(due, now: now)
            case 404, 410:
                logger.info("push: subscription \(due.subscription.id) is gone (\(answer.status)): forgotten")
                try store.forget(subscription: due.subscription.id)
            case 429, 500..<600:
                try later(due, answer.retryAfter, because: "the service answered \(answer.status)")
            default:
                logger.warning("push: push \(due.id) refused by its service (\(answer.status)): dropped")
                try store.drop(due.id)
            }
        } catch let failure as PushTransport.Failure {
            try later(due, nil, because: failure.description)
        }
    }

    private typealias Due = PushStore.Due

    private func later(_ due: Due, _ retryAfter: Int?, because reason: String) throws {
        let backoff = min(900, settings.retryBase * pow(2, Double(max(0, due.attempts - 1))))
        // The service's own word, when it gives one, between a second and an hour.
        let wait = retryAfter.map { Double(min(max($0, 1), 3600)) } ?? backoff
        logger.warning("push: push \(due.id) not delivered, attempt \(due.attempts), again in \(Int(clampedSeconds: wait)) s: \(LogText.oneLine(reason))")
        try store.retry(due.id, at: clock().addingTimeInterval(wait))
    }

    /// `Authorization` for a service's origin: a token for 12 hours, made again an hour before it ends.
    private func authorization(for origin: String, now: Date) throws -> String {
        if let kept = tokens.withLock({ $0[origin] }), kept.expires.timeIntervalSince(now) > 3600 { return kept.header }
        let expires = now.addingTimeInterval(12 * 3600)
        let header = try store.vapid(now: now).authorization(audience: origin, contact: settings.contact, expires: expires)
        tokens.withLock { $0[origin] = (header, expires) }
        return header
    }
}

/// What one push says: its text, the address it opens, and the tag that lets a newer push about
/// the same thing replace it.
struct PushMessage: Sendable {
    var body: String
    var url: String
    var tag: String
}

/// Words the notice `notification` of a member in a language; nil when it is gone.
typealias PushWording = @Sendable (_ notification: Int64, _ userID: Int64, _ language: Language) throws -> PushMessage?
