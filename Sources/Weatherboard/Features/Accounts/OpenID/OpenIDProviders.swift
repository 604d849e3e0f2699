import Foundation
import Logging
import Synchronization

/// The OpenID Connect providers an operator configured (`--oidc-provider NAME=ISSUER`, its client
/// id and secret), each with what its discovery document says (RFC 8414 / OpenID Discovery 1.0),
/// read at start, again every hour, and every minute while it could not be read: a provider
/// that cannot be reached is left off the pages until it can, and the site still starts.
final class OpenIDProviders: Sendable, BackgroundWork {
    struct Provider: Sendable {
        let name: String
        let issuer: String
        let clientID: String
        let clientSecret: String
        /// Apple's: a JWT made from the team's key for each exchange, instead of `clientSecret`.
        var apple: AppleClientSecret? = nil

        func secret(now: Date) throws -> String {
            try apple?.secret(clientID: clientID, now: now) ?? clientSecret
        }
    }

    /// What the discovery document says, checked: the issuer exactly the configured one, every
    /// endpoint `https` (or `http` on loopback, like the issuer).
    struct Endpoints: Sendable {
        let authorization: String
        let token: String
        let keys: String
    }

    private struct State {
        var endpoints: Endpoints?
        var readAt: Date?
        var failedAt: Date?
        /// The issuer's signing keys, their string members (read by `IDToken.Key`), and when fetched.
        var keys: [[String: String]] = []
        var keysAt: Date?
    }

    let providers: [Provider]
    private let states: Mutex<[String: State]>
    private let logger: Logger
    private let clock: @Sendable () -> Date
    /// Fetches the bytes at a URL (`Curl` in the site; bounded in size and time).
    private let fetch: @Sendable (String) throws -> [UInt8]
    private let stopped = Atomic(false)

    static let documentLimit = 65_536
    /// A key set past this many keys, or bytes, is refused (a provider's has a handful).
    static let keysLimit = 32, keySetBytes = 131_072
    /// An unknown `kid` fetches the keys again at most this often.
    static let keysRefetch: TimeInterval = 60

    init(_ providers: [Provider], logger: Logger, clock: @escaping @Sendable () -> Date,
         fetch: @escaping @Sendable (String) throws -> [UInt8]) {
        self.providers = providers
        states = Mutex(Dictionary(uniqueKeysWithValues: providers.map { ($0.name, State()) }))
        self.logger = logger
        self.clock = clock
        self.fetch = fetch
    }

    /// An issuer is `https`, or `http` on this machine (development and tests).
    static func isAcceptable(_ url: String) -> Bool {
        guard let parsed = URL(string: url), let scheme = parsed.scheme, let host = parsed.host, parsed.user == nil else { return false }
        return scheme == "https" || (scheme == "http" && ["127.0.0.1", "localhost", "::1"].contains(host))
    }

    func provider(named name: String) -> Provider? { providers.first { $0.name == name } }

    /// The state of one provider (configured, so present), under the lock.
    private func withState<T>(_ name: String, _ body: (inout State) -> T) -> T {
        states.withLock { states in body(&states[name, default: State()]) }
    }

    /// The provider's endpoints when its document has been read (else nil: not offered now).
    func endpoints(_ name: String) -> Endpoints? { withState(name) { $0.endpoints } }

    /// The providers offered on the pages now, in the order configured.
    var offered: [Provider] { providers.filter { endpoints($0.name) != nil } }

    /// Reads every document, then keeps them fresh, from a thread of its own: a provider that
    /// does not answer does not hold up the start.
    func start() {
        guard !providers.isEmpty else { return }
        let thread = Thread { [self] in
            for provider in providers { refresh(provider) }
            while !stopped.load(ordering: .relaxed) {
                Thread.sleep(forTimeInterval: 5)
                let now = clock()
                for provider in providers {
                    let (readAt, failedAt) = withState(provider.name) { ($0.readAt, $0.failedAt) }
                    let due = failedAt.map { now.timeIntervalSince($0) >= 60 } ?? readAt.map { now.timeIntervalSince($0) >= 3600 } ?? true
                    if due { refresh(provider) }
                }
            }
        }
        thread.name = "oidc-discovery"
        thread.start()
    }

    func stop() { stopped.store(true, ordering: .relaxed) }

    /// Reads the provider's discovery document; on failure says so once and keeps what it had.
    func refresh(_ provider: Provider) {
        do {
            let endpoints = try Self.read(document: try fetch(provider.issuer + "/.well-known/openid-configuration"), issuer: provider.issuer)
            let was = withState(provider.name) { state -> Endpoints? in
                defer { state.endpoints = endpoints; state.readAt = clock(); state.failedAt = nil }
                return state.endpoints
            }
            if was == nil { logger.notice("oidc \(provider.name): offered (\(provider.issuer))") }
        } catch {
            let first = withState(provider.name) { state -> Bool in
                defer { state.failedAt = clock() }
                return state.failedAt == nil
            }
            if first { logger.warning("oidc \(provider.name): its discovery document could not be used (\(error)); trying again every minute") }
        }
    }

    struct Refused: Error, CustomStringConvertible {
        let description: String
    }

    static func read(document bytes: [UInt8], issuer: String) throws -> Endpoints {
        guard let json = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any] else { throw Refused(description: "not JSON") }
        // OpenID Discovery §4.3: the issuer in the document is exactly the one asked.
        guard json["issuer"] as? String == issuer else { throw Refused(description: "it names another issuer (\(json["issuer"] ?? "none"))") }
        guard let authorization = json["authorization_endpoint"] as? String, let token = json["token_endpoint"] as? String,
              let keys = json["jwks_uri"] as? String, [authorization, token, keys].allSatisfy(isAcceptable) else {
            throw Refused(description: "an endpoint missing, or not https")
        }
        return Endpoints(authorization: authorization, token: token, keys: keys)
    }

    /// The issuer's key named `keyID` (the only one when the token names none), fetching the set
    /// when it is not known yet or the key is not in it (at most once a minute).
    func key(_ provider: Provider, id keyID: String?) throws -> IDToken.Key {
        func find(_ keys: [[String: String]]) -> IDToken.Key? {
            let candidates = keys.compactMap { IDToken.Key($0) }
            if let keyID { return candidates.first { $0.id == keyID } }
            return candidates.count == 1 ? candidates[0] : nil
        }
        let (known, fetchedAt) = withState(provider.name) { ($0.keys, $0.keysAt) }
        if let found = find(known) { return found }
        guard let endpoints = endpoints(provider.name) else { throw Refused(description: "the provider is not offered now") }
        if let fetchedAt, clock().timeIntervalSince(fetchedAt) < Self.keysRefetch {
            throw Refused(description: "no key \(keyID ?? "(unnamed)") in the issuer's set, fetched \(Int(clock().timeIntervalSince(fetchedAt))) s ago")
        }
        withState(provider.name) { $0.keysAt = clock() }
        let bytes = try fetch(endpoints.keys)
        guard bytes.count <= Self.keySetBytes, let json = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any],
              let list = json["keys"] as? [[String: Any]] else { throw Refused(description: "the key set is not a JSON key set") }
        guard list.count <= Self.keysLimit else { throw Refused(description: "a key set of \(list.count) keys") }
        let keys = list.map { $0.compactMapValues { $0 as? String } }
        withState(provider.name) { $0.keys = keys }
        guard let found = find(keys) else { throw Refused(description: "no key \(keyID ?? "(unnamed)") in the issuer's set") }
        return found
    }
}
