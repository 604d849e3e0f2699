import Foundation

/// The accounts' mail: "confirm this address" and "reset your password" with a link made as the
/// message is sent (once), and the note to an old address that another was asked for.
struct AccountMail: MailComposer {
    func compose(_ mail: QueuedMail, to: MailAddress, _ writer: MailWriter) throws -> MailMessage? {
        let now = writer.now, pages = writer.pages
        let found = try writer.database.write(.cluster) { db -> (User, String?, passkeyOnly: Bool)? in  // a link made as it is sent, once
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
        let link = path.map { writer.site + $0 }
        let arguments = ["name": user.displayName, "username": user.username, "address": mail.address, "new": mail.detail,
                         "site": pages.string("site_name", language), "link": link ?? ""]
        let key = mail.kind == .addressChanged && mail.detail.isEmpty ? "mail_address_removed"
            : "mail_" + mail.kind.rawValue + (passkeyOnly ? "_passkey" : "")
        let paragraphs = pages.string(key + "_text", language, arguments).split(separator: "\n\n", omittingEmptySubsequences: false).map { part in
            let paragraph = String(part)
            return paragraph == link ? MailParagraph.link(paragraph, paragraph) : .text(paragraph)
        }
        return writer.message(to: to, subject: pages.string(key + "_subject", language, arguments), paragraphs, language)
    }
}
