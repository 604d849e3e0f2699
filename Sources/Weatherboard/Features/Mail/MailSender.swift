import Foundation
import HTTPServer
import Logging

/// Sends the queue's mail from a thread of its own, so that a slow or dead relay never holds a
/// request: woken when this node queues a message, and every `pollInterval` for what other
/// nodes queued and what waits for a retry. A failed message is tried again after `retryBase`
/// seconds, doubling with each failure up to 15 minutes, until it is no longer worth sending.
final class MailSender: Sendable, BackgroundWork {
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
    /// Each kind's words, from the feature that queues it.
    private let composers: [QueuedMail.Kind: any MailComposer]

    init(settings: Settings, database: AppDatabase, pages: Pages, composers: [QueuedMail.Kind: any MailComposer],
         clock: @escaping @Sendable () -> Date, logger: Logger) {
        self.settings = settings
        self.composers = composers
        self.database = database
        self.pages = pages
        self.clock = clock
        self.logger = logger
        worker = QueueWorker(pollInterval: settings.pollInterval)
    }

    var rounds: Int { worker.rounds.load(ordering: .relaxed) }

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
                // Locks: one sender a message across nodes.
                let (claimed, expired) = try database.write(.cluster) { try MailQueue.claim(now: now, claimFor: Double(settings.relay.timeout) * 2, $0) }
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
                try database.write(.subjects) { try MailQueue.sent(mail.id, $0) } // its account is gone  // one claimed message's row
                return
            }
            let id = Tokens.random().replacingOccurrences(of: "-", with: "").replacingOccurrences(of: "_", with: "")
            try settings.relay.send(message.rendered(date: clock(), id: id), from: settings.from, to: to)
            try database.write(.subjects) { try MailQueue.sent(mail.id, $0) }  // one claimed message's row
            // The message's id and kind only: an address is personal data the log need not keep.
            logger.info("mail: sent message \(mail.id) (\(mail.kind.rawValue))")
        } catch {
            let wait = min(900, settings.retryBase * pow(2, Double(max(0, mail.attempts - 1))))
            logger.warning("mail: message \(mail.id) (\(mail.kind.rawValue)) not sent, attempt \(mail.attempts), again in \(Int(clampedSeconds: wait)) s: \(LogText.oneLine(String(describing: error)))")
            do {
                // Locks: one claimed message's row.
                try database.write(.subjects) { try MailQueue.failed(mail.id, retryAt: clock().addingTimeInterval(wait), $0) }
            } catch {
                logger.error("mail: message \(mail.id) could not be put back: \(error); its claim runs out instead")
            }
        }
    }

    /// The message for `mail`, its links made now by the feature that queued it; nil when its
    /// member no longer exists (or a notice, or a digest's news, is gone) or no feature words it.
    private func compose(_ mail: QueuedMail, to: MailAddress) throws -> MailMessage? {
        guard let composer = composers[mail.kind] else { return nil }
        return try composer.compose(mail, to: to, MailWriter(settings: settings, database: database, pages: pages, now: clock()))
    }
}

/// Words one kind of queued mail as it is sent: the feature that queues the kind knows them
/// (the accounts' links, a notice, the digest), the queue only carries and sends.
protocol MailComposer: Sendable {
    func compose(_ mail: QueuedMail, to: MailAddress, _ writer: MailWriter) throws -> MailMessage?
}

/// What a composer writes with: the site's address and sender, the catalogs, the database, now.
struct MailWriter {
    let settings: MailSender.Settings
    let database: AppDatabase
    let pages: Pages
    let now: Date

    /// Where links in messages point.
    var site: String { settings.publicURL }

    /// A plain-text part and an HTML part saying the same paragraphs.
    func message(to: MailAddress, subject: String, _ paragraphs: [MailParagraph], _ language: Language) -> MailMessage {
        let escape = { (text: String) in String(decoding: HTML.escaped(text), as: UTF8.self) }
        let text = paragraphs.map { paragraph in
            switch paragraph {
            case .text(let text), .heading(let text): text
            case .link(let text, let href): text == href ? href : text + "\n" + href
            }
        }.joined(separator: "\n\n") + "\n"
        let html = "<!doctype html><html lang=\"\(language.rawValue)\"><meta charset=\"utf-8\"><body>"
            + paragraphs.map { paragraph in
                switch paragraph {
                case .text(let text): "<p>\(escape(text))</p>"
                case .heading(let text): "<h2>\(escape(text))</h2>"
                case .link(let text, let href): "<p><a href=\"\(escape(href))\">\(escape(text))</a></p>"
                }
            }.joined() + "</body></html>"
        return MailMessage(from: settings.from, fromName: pages.string("site_name", language), to: to, subject: subject, text: text, html: html)
    }
}

/// A paragraph of a message, said alike in its text and HTML parts.
enum MailParagraph {
    case text(String)
    case heading(String)
    /// A link's words and address (the address alone when they are the same).
    case link(String, String)
}
