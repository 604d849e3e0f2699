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
    private let digestSources: DigestSources?

    init(settings: Settings, database: AppDatabase, pages: Pages, digestSources: DigestSources?, clock: @escaping @Sendable () -> Date,
         logger: Logger) {
        self.settings = settings
        self.digestSources = digestSources
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

    /// The message for `mail`, its links made now; nil when its member no longer exists (or a
    /// notice, or a digest's news, is gone).
    private func compose(_ mail: QueuedMail, to: MailAddress) throws -> MailMessage? {
        switch mail.kind {
        case .verify, .reset, .addressChanged: try composeAccountMail(mail, to: to)
        case .notice: try composeNotice(mail, to: to)
        case .digest: try composeDigest(mail, to: to)
        }
    }

    private func composeAccountMail(_ mail: QueuedMail, to: MailAddress) throws -> MailMessage? {
        let now = clock()
        let found = try database.write(.cluster) { db -> (User, String?, passkeyOnly: Bool)? in  // a link made as it is sent, once
            guard let user = try User.find(id: mail.userID, db) else { return nil }
            switch mail.kind {
            case .verify: return (user, "/email/verify/" + (try EmailTokens.make(.verify, userID: user.id, address: mail.address, now: now, db)), false)
            case .reset:
                // An account with only a passkey is told it is setting a password, not resetting one.
                let passkeyOnly = try db.one("SELECT CASE WHEN password_hash = '' THEN 1 ELSE 0 END FROM users WHERE id = ?", [user.id]) { $0.int(0) == 1 } ?? false
                return (user, "/password/reset/" + (try EmailTokens.make(.reset, userID: user.id, address: mail.address, now: now, db)), passkeyOnly)
            case .addressChanged, .digest, .notice: return (user, nil, false)
            }
        }
        guard let (user, path, passkeyOnly) = found else { return nil }
        let language = mail.language
        let link = path.map { settings.publicURL + $0 }
        let arguments = ["name": user.displayName, "username": user.username, "address": mail.address, "new": mail.detail,
                         "site": pages.string("site_name", language), "link": link ?? ""]
        let key = mail.kind == .addressChanged && mail.detail.isEmpty ? "mail_address_removed"
            : "mail_" + mail.kind.rawValue + (passkeyOnly ? "_passkey" : "")
        let paragraphs = pages.string(key + "_text", language, arguments).components(separatedBy: "\n\n").map { paragraph in
            paragraph == link ? MailParagraph.link(paragraph, paragraph) : .text(paragraph)
        }
        return message(to: to, subject: pages.string(key + "_subject", language, arguments), paragraphs, language)
    }

    /// A notice as the list says it, with a link to what it is about.
    private func composeNotice(_ mail: QueuedMail, to: MailAddress) throws -> MailMessage? {
        let found = try database.readStatement { db -> (User, NotificationStore.Notice)? in
            guard let user = try User.find(id: mail.userID, db), let id = Int64(mail.detail),
                  let notice = try NotificationStore.notice(id, of: user.id, db) else { return nil }
            return (user, notice)
        }
        guard let (user, notice) = found else { return nil }
        let language = mail.language, site = settings.publicURL
        let text = notice.text(pages, language)
        var paragraphs: [MailParagraph] = [.text(pages.string("mail_hello", language, ["name": user.displayName])), .link(text, site + notice.href)]
        if !notice.excerpt.isEmpty { paragraphs.append(.text(pages.string("mail_quoted", language, ["excerpt": notice.excerpt]))) }
        paragraphs.append(.link(pages.string("mail_notice_settings", language), site + "/settings/notifications"))
        return message(to: to, subject: text, paragraphs, language)
    }

    /// The digest as it stands now, with a one-click unsubscribe link of its own (RFC 8058).
    private func composeDigest(_ mail: QueuedMail, to: MailAddress) throws -> MailMessage? {
        guard let sources = digestSources, let since = Double(mail.detail).map(Date.init(timeIntervalSince1970:)) else { return nil }
        let now = clock(), language = mail.language, site = settings.publicURL
        guard let user = try database.readStatement({ try User.find(id: mail.userID, $0) }) else { return nil }
        let content = try DigestContent.make(for: user.id, since: since, language: language, site: site, pages: pages,
                                             cities: sources.cities, weather: sources.weather, now: now, database)
        guard content.unread > 0 || !content.agreed.isEmpty else { return nil } // read meanwhile: nothing to say
        let token = Tokens.random()
        let every = try database.write(.cluster) { db in  // one digest a period across nodes
            try db.execute("INSERT INTO unsubscribe_links (token_hash, user_id, created_at) VALUES (?, ?, ?)", Tokens.digest(token), user.id, now)
            return try db.one("SELECT digest FROM users WHERE id = ?", [user.id]) { $0.string(0) } ?? "daily"
        }
        let unsubscribe = site + "/digest/unsubscribe/" + token
        var paragraphs: [MailParagraph] = [.text(pages.string("mail_hello", language, ["name": user.displayName]))]
        if content.unread > 0 {
            paragraphs.append(.heading(pages.string("digest_unread", language, ["n": String(content.unread)])))
            paragraphs += content.notices.map { .link($0.text, $0.href) }
        }
        if !content.cities.isEmpty {
            paragraphs.append(.heading(pages.string("digest_cities", language)))
            paragraphs += content.cities.map { .link($0.text, $0.href) }
        }
        if !content.agreed.isEmpty {
            paragraphs.append(.heading(pages.string("digest_agreed_heading", language)))
            paragraphs += content.agreed.map { .link($0.text, $0.href) }
        }
        paragraphs.append(.text(pages.string(every == "weekly" ? "digest_why_weekly" : "digest_why_daily", language)))
        paragraphs.append(.link(pages.string("digest_unsubscribe", language), unsubscribe))
        var message = message(to: to, subject: pages.string("digest_subject", language, ["site": pages.string("site_name", language)]),
                              paragraphs, language)
        message.headers = [("List-Unsubscribe", "<\(unsubscribe)>"), ("List-Unsubscribe-Post", "List-Unsubscribe=One-Click")]
        return message
    }

    /// A plain-text part and an HTML part saying the same paragraphs.
    private func message(to: MailAddress, subject: String, _ paragraphs: [MailParagraph], _ language: Language) -> MailMessage {
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

/// What the digest reads besides the database.
struct DigestSources: Sendable {
    let cities: CityIndex
    let weather: WeatherService
}
