import Foundation

/// The mail queue, sent through the relay from a thread of its own.
enum MailFeature {
    /// `settings`: nil without a relay (`--smtp-url`). `composers`: each kind's words, from the
    /// feature that queues it.
    static func install(_ site: Site, settings: MailSender.Settings?, composers: [QueuedMail.Kind: any MailComposer]) -> MailSender? {
        guard let settings else { return nil }
        site.logger.notice("mail: relay \(settings.relay), from \(settings.from.text), links to \(settings.publicURL)")
        let sender = MailSender(settings: settings, database: site.database, pages: site.pages, composers: composers,
                                clock: site.clock, logger: site.logger)
        // A notice told anywhere (any node) may have an e-mail waiting.
        site.database.changes.subscribe { change, _ in if case .notice = change { sender.wake() } }
        site.run("mail", sender)
        return sender
    }
}
