import Crypto
import Foundation

/// Sign in with Apple's client secret: not a fixed string but a short-lived JWT (ES256) the site
/// signs with the team's key (the `.p8` file Apple gives once), naming the team (`iss`), the
/// Services ID (`sub`, the client id) and Apple (`aud`). Made for each code exchange.
struct AppleClientSecret: Sendable {
    let key: P256.Signing.PrivateKey
    let keyID: String
    let teamID: String

    /// The `.p8` file's PEM (a PKCS#8 P-256 key).
    init(pem: String, keyID: String, teamID: String) throws {
        key = try P256.Signing.PrivateKey(pemRepresentation: pem)
        (self.keyID, self.teamID) = (keyID, teamID)
    }

    /// Good for five minutes from `now`.
    func secret(clientID: String, now: Date) throws -> String {
        func part(_ object: [String: Any]) throws -> String {
            Tokens.base64URL(Array(try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])))
        }
        let issued = Int(now.timeIntervalSince1970)
        let input = try part(["alg": "ES256", "kid": keyID]) + "." + part([
            "iss": teamID, "iat": issued, "exp": issued + 300, "aud": "https://appleid.apple.com", "sub": clientID,
        ])
        let signature = try key.signature(for: Array(input.utf8))
        return input + "." + Tokens.base64URL(Array(signature.rawRepresentation))
    }
}
