import Foundation

/// Web Push: subscriptions, and the queue sent from a thread of its own.
enum PushFeature {
    /// `settings`: nil without a contact (`--push-contact`): no pushes, no subscribing.
    /// `wording`: what each push says (the notifications feature's).
    static func install(_ site: Site, settings: PushSender.Settings?, wording: @escaping PushWording) -> PushSender? {
        guard let settings else { return nil }
        let sender = PushSender(settings: settings, store: PushStore(database: site.database), pages: site.pages, wording: wording,
                                clock: site.clock, logger: site.logger)
        // A notice told anywhere (any node) may have pushes waiting.
        site.database.changes.subscribe { change, _ in if case .notice = change { sender.wake() } }
        PushController(pages: site.pages, store: PushStore(database: site.database), sender: sender, clock: site.clock).addRoutes(to: site.router)
        site.run("push", sender)
        return sender
    }
}
