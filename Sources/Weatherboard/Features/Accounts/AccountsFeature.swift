import Foundation
import HTTPServer

/// Accounts: sign-up and sign-in by password, passkey, provider or recovery code, sessions, and
/// e-mail addresses with their links where mail is set up.
enum AccountsFeature {
    /// Ports: `bookmarks` (a guest's move into the new account), `mail` (nil without a relay),
    /// `pushEnabled` (settings offer pushes), `openID` (the providers), `party` (passkeys' origin).
    static func install(_ site: Site, bookmarks: Bookmarks, mail: MailSender?, pushEnabled: Bool, openID: OpenIDProviders,
                        party: PasskeyParty, passwordCost: Int) {
        let router = site.router, database = site.database, pages = site.pages, clock = site.clock, limits = site.limits
        let identity = Identity(sessions: SessionStore(database: database), unstated: UnstatedPosts(database: database, pages: pages, clock: clock),
                                secureCookies: site.secureCookies, clock: clock, routeExists: { [unowned router] in router.hasRoute(for: $0) })
        // The innermost middleware: every feature's handlers see the member it finds.
        router.use(identity.middleware)
        let accounts = AccountStore(database: database), hasher = PasswordHasher(cost: passwordCost), clientAddress = site.clientAddress
        let controller = AccountsController(pages: pages, store: accounts, identity: identity, hasher: hasher, bookmarks: bookmarks,
                                            limits: limits, clientAddress: clientAddress, mail: mail, party: party,
                                            pushEnabled: pushEnabled, openID: openID, clock: clock)
        controller.addRoutes(to: router)
        OpenIDController(pages: pages, store: accounts, identity: identity, accounts: controller, providers: openID, limits: limits,
                         clientAddress: clientAddress, publicURL: site.publicURL, logger: site.logger, clock: clock,
                         post: OpenIDProviders.postForm).addRoutes(to: router)
        PasskeysController(pages: pages, store: accounts, identity: identity, accounts: controller, party: party, limits: limits,
                           clientAddress: clientAddress, logger: site.logger, clock: clock).addRoutes(to: router)
        if let mail {
            EmailController(pages: pages, store: accounts, hasher: hasher, mail: mail, limits: limits, clientAddress: clientAddress,
                            clock: clock).addRoutes(to: router)
            PasswordResetController(pages: pages, store: accounts, identity: identity, hasher: hasher, mail: mail,
                                    clientAddress: clientAddress, clock: clock).addRoutes(to: router)
        }
        RecoveryController(pages: pages, store: accounts, identity: identity, hasher: hasher, limits: limits,
                           clientAddress: clientAddress, party: party, clock: clock).addRoutes(to: router)
        site.run("openid", openID)
        site.keep(RateLimit.keeping, SessionStore.keeping, KnownDevices.keeping, EmailTokens.keeping, UnstatedPosts.keeping,
                  WebAuthnChallenge.keeping)
        site.keep(OpenIDController.keeping)
    }
}
