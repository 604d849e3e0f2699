import Foundation

/// The daily or weekly digest by e-mail, and its one-click unsubscribe.
enum DigestFeature {
    /// `mail`: the queue it goes out by; without a relay the pages stay (a link in an old
    /// digest still unsubscribes) and nothing is scheduled.
    static func install(_ site: Site, mail: MailSender?, interval: TimeInterval) {
        DigestController(pages: site.pages, database: site.database, clock: site.clock).addRoutes(to: site.router)
        site.keep(DigestController.keeping)
        guard let mail else { return }
        let digests = Digests(database: site.database, mail: mail, interval: interval, clock: site.clock, logger: site.logger)
        site.run("digest", digests)
    }
}
