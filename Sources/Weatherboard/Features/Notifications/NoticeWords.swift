import Foundation

/// A notice as the list says it, mailed with a link to what it is about.
struct NoticeMail: MailComposer {
    func compose(_ mail: QueuedMail, to: MailAddress, _ writer: MailWriter) throws -> MailMessage? {
        let found = try writer.database.read { db -> (User, NotificationStore.Notice)? in
            guard let user = try User.find(id: mail.userID, db), let id = Int64(mail.detail),
                  let notice = try NotificationStore.notice(id, of: user.id, db) else { return nil }
            return (user, notice)
        }
        guard let (user, notice) = found else { return nil }
        let language = mail.language, site = writer.site, pages = writer.pages
        let text = notice.text(pages, language)
        var paragraphs: [MailParagraph] = [.text(pages.string("mail_hello", language, ["name": user.displayName])), .link(text, site + notice.href)]
        if !notice.excerpt.isEmpty { paragraphs.append(.text(pages.string("mail_quoted", language, ["excerpt": notice.excerpt]))) }
        paragraphs.append(.link(pages.string("mail_notice_settings", language), site + "/settings/notifications"))
        return writer.message(to: to, subject: text, paragraphs, language)
    }
}

/// A notice as a push says it: the list's words and the address it links to.
struct NoticePush: Sendable {
    let database: AppDatabase
    let pages: Pages

    func message(notification: Int64, of userID: Int64, in language: Language) throws -> PushMessage? {
        try database.readStatement({ try NotificationStore.notice(notification, of: userID, $0) }).map { notice in
            PushMessage(body: notice.text(pages, language), url: notice.href, tag: "notice-\(notice.id)")
        }
    }
}
