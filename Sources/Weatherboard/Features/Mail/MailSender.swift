import Foundation
import HTTPServer
import Logging

/// Sends the queue's mail from a thread of its own, so that a slow or dead relay never holds a
/// request: woken when this node queues a message, and every `pollInterval` for what other
/// nodes queued and what waits for a retry. A failed message is tried again after `retryBase`
/// seconds, doubling with each failure up to 15 minutes, until it is no longer worth sending.
final class MailSender: Sendable {
    struct Settings: Sendable {
        var relay: SMTPRelay
        var from: MailAddress
        /// Where links in messages point: the site as its members reach it.
        var publicURL: String
        var pollInterval: TimeInterval = 5
        var retryBase: TimeInterval = 30
    }

    let settings: Settings
    private let database: AppDatabase
    private let pages: Pages
    private let clock: @Sendable () -> Date
    private let logger: Logger
    private let worker: QueueWorker

    init(settings: Settings, database: AppDatabase, pages: Pages, clock: @escaping @Sendable () -> Date, logger: Logger) {
        self.settings = settings
        self.database = database
        self.pages = pages
        self.clock = clock
        self.logger = logger
        worker = QueueWorker(pollInterval: settings.pollInterval)
    }

    func start() { worker.start { [self] in sendDue() } }

    /// A message was queued here: send it now rather than at the next poll.
    func wake() { worker.wake() }

    /// Stops after the message being sent, if any.
    func stop() { worker.stop(waitingAtMost: Double(settings.relay.timeout) + 5) }

    /// Sends every message due now, one at a time; each failure is logged and scheduled again.
    func sendDue() {
        while !worker.isStopped {
            do {
                let now = clock()
                let (claimed, expired) = try database.write { try MailQueue.claim(now: now, claimFor: Double(settings.relay.timeout) * 2, $0) }
                if expired > 0 { logger.warning("mail: \(expired) message(s) expired unsent (the relay was unreachable too long)") }
                guard let mail = claimed else { return }
                send(mail)
            } catch {
                logger.error("mail: the queue could not be read: \(error)")
                return
            }
        }
    }

    private func send(_ mail: QueuedMail) {
        do {
            guard let to = MailAddress(mail.address), let message = try compose(mail, to: to) else {
                try database.write { try MailQueue.sent(mail.id, $0) } // its account is gone
                return
            }
            let id = Tokens.random().replacingOccurrences(of: "-", with: "").replacingOccurrences(of: "_", with: "")
            try settings.relay.send(message.rendered(date: clock(), id: id), from: settings.from, to: to)
            try database.write { try MailQueue.sent(mail.id, $0) }
            // The message's id and kind only: an address is personal data the log need not keep.
            logger.info("mail: sent message \(mail.id) (\(mail.kind.rawValue))")
        } catch {
            let wait = min(900, settings.retryBase * pow(2, Double(max(0, mail.attempts - 1))))
            logger.warning("mail: message \(mail.id) (\(mail.kind.rawValue)) not sent, attempt \(mail.attempts), again in \(Int(clampedSeconds: wait)) s: \(LogText.oneLine(String(describing: error)))")
            do {
                try database.write { try MailQueue.failed(mail.id, retryAt: clock().addingTimeInterval(wait), $0) }
            } catch {
                logger.error("mail: message \(mail.id) could not be put back: \(error); its claim runs out instead")
            }
        }
    }

    /// The message for `mail`, its link made now; nil when its member no longer exists.
    private func compose(_ mail: QueuedMail, to: MailAddress) throws -> MailMessage? {
        let now = clock()
        let found = try database.write { db -> (User, String?)? in
            guard let user = try User.find(id: mail.userID, db) else { return nil }
            switch mail.kind {
            case .verify: return (user, "/email/verify/" + (try EmailTokens.make(.verify, userID: user.id, address: mail.address, now: now, db)))
            case .reset: return (user, "/password/reset/" + (try EmailTokens.make(.reset, userID: user.id, address: mail.address, now: now, db)))
            case .addressChanged: return (user, nil)
            }
        }
        guard let (user, path) = found else { return nil }
        let language = mail.language
        let link = path.map { settings.publicURL + $0 }
        let arguments = ["name": user.displayName, "username": user.username, "address": mail.address, "new": mail.detail,
                         "site": pages.string("site_name", language), "link": link ?? ""]
        let key = mail.kind == .addressChanged && mail.detail.isEmpty ? "mail_address_removed" : "mail_" + mail.kind.rawValue
        let paragraphs = pages.string(key + "_text", language, arguments).components(separatedBy: "\n\n")
        let html = "<!doctype html><html lang=\"\(language.rawValue)\"><meta charset=\"utf-8\"><body>"
            + paragraphs.map { paragraph in
                let escaped = String(decoding: HTML.escaped(paragraph), as: UTF8.self)
                if let link, paragraph == link { return "<p><a href=\"\(escaped)\">\(escaped)</a></p>" }
                return "<p>\(escaped)</p>"
            }.joined() + "</body></html>"
        return MailMessage(from: settings.from, fromName: pages.string("site_name", language), to: to,
                           subject: pages.string(key + "_subject", language, arguments), text: paragraphs.joined(separator: "\n\n") + "\n",
                           html: html)
    }
}
