import Foundation

/// The digest as it stands when it is sent, with a one-click unsubscribe link of its own (RFC 8058).
struct DigestMail: MailComposer {
    let cities: CityIndex
    let weather: WeatherService

    func compose(_ mail: QueuedMail, to: MailAddress, _ writer: MailWriter) throws -> MailMessage? {
        guard let since = Double(mail.detail).map(Date.init(timeIntervalSince1970:)) else { return nil }
        let now = writer.now, language = mail.language, site = writer.site, pages = writer.pages, database = writer.database
        guard let user = try database.readStatement({ try User.find(id: mail.userID, $0) }) else { return nil }
        let content = try DigestContent.make(for: user.id, since: since, language: language, site: site, pages: pages,
                                             cities: cities, weather: weather, now: now, database)
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
        var message = writer.message(to: to, subject: pages.string("digest_subject", language, ["site": pages.string("site_name", language)]),
                                     paragraphs, language)
        message.headers = [("List-Unsubscribe", "<\(unsubscribe)>"), ("List-Unsubscribe-Post", "List-Unsubscribe=One-Click")]
        return message
    }
}
