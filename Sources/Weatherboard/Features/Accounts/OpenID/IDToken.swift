import Crypto
import CryptoExtras
import Foundation

/// An OpenID Connect ID token (a JWS, RFC 7515, compact form) checked as OpenID Connect Core
/// §3.1.3.7 asks: signed with RS256 or ES256 by a key of the issuer's set whose type matches the
/// algorithm (no `none`, no HMAC: a public key is never taken as a shared secret), `iss` the
/// issuer, `aud` this client (and `azp` it when there are several), `exp` and `iat` within a
/// minute's skew, `nonce` the one this attempt sent.
///
/// Not vapor/jwt-kit: its verification is `async` (its key collection is an actor) and these
/// handlers run on request threads; the signatures are swift-crypto's, as in `WebAuthn`, and only
/// the two algorithms above are read at all.
struct IDToken {
    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    let subject: String
    let name: String?
    /// Set only when the provider says it verified the address.
    let verifiedEmail: String?

    /// What a token's header names, before any key is looked for.
    struct Header {
        let algorithm: String
        let keyID: String?
    }

    /// A key of the issuer's set (RFC 7517), for the algorithm it can check.
    struct Key {
        let id: String?
        let es256: P256.Signing.PublicKey?
        let rs256: _RSA.Signing.PublicKey?

        /// nil for a key of another type or use, or one that is not a usable public key.
        init?(_ json: [String: String]) {
            id = json["kid"]
            if let use = json["use"], use != "sig" { return nil }
            switch json["kty"] {
            case "EC":
                // RFC 7518 wants each coordinate at its full 32 bytes; some libraries (Authlib among
                // them) drop a leading zero byte, one key in about a hundred: padded back, not refused.
                func coordinate(_ name: String) -> [UInt8]? {
                    guard let bytes = json[name].flatMap({ Tokens.base64URLDecoded($0, limit: 64) }), (30...32).contains(bytes.count) else { return nil }
                    return [UInt8](repeating: 0, count: 32 - bytes.count) + bytes
                }
                guard json["crv"] == "P-256", let x = coordinate("x"), let y = coordinate("y"),
                      let point = try? P256.Signing.PublicKey(x963Representation: [0x04] + x + y) else { return nil }
                (es256, rs256) = (point, nil)
            case "RSA":
                guard let n = json["n"].flatMap({ Tokens.base64URLDecoded($0, limit: 1024) }),
                      let e = json["e"].flatMap({ Tokens.base64URLDecoded($0, limit: 8) }),
                      let key = try? _RSA.Signing.PublicKey(n: n, e: e) else { return nil }
                (es256, rs256) = (nil, key)
            default:
                return nil
            }
        }

        func verifies(_ signature: [UInt8], of data: [UInt8], algorithm: String) -> Bool {
            switch algorithm {
            case "ES256":
                guard let es256, signature.count == 64, let parsed = try? P256.Signing.ECDSASignature(rawRepresentation: signature) else { return false }
                return es256.isValidSignature(parsed, for: SHA256.hash(data: data))
            case "RS256":
                guard let rs256 else { return false }
                return rs256.isValidSignature(_RSA.Signing.RSASignature(rawRepresentation: signature), for: SHA256.hash(data: data),
                                              padding: .insecurePKCS1v1_5)
            default:
                return false
            }
        }
    }

    /// The header of `token` (at most 16 KiB), or why it is not a token to check further.
    static func header(of token: String) throws -> Header {
        guard token.utf8.count <= 16_384 else { throw Failure("a token of \(token.utf8.count) bytes") }
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let bytes = Tokens.base64URLDecoded(String(parts[0]), limit: 2048),
              let json = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any],
              let algorithm = json["alg"] as? String else { throw Failure("not a signed token") }
        guard ["RS256", "ES256"].contains(algorithm) else { throw Failure("signed with \(algorithm), not RS256 or ES256") }
        return Header(algorithm: algorithm, keyID: json["kid"] as? String)
    }

    /// Checks `token` with `key` against what this attempt expects.
    init(_ token: String, key: Key, issuer: String, clientID: String, nonce: String, now: Date, skew: TimeInterval = 60) throws {
        let header = try Self.header(of: token)
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard let signature = Tokens.base64URLDecoded(String(parts[2]), limit: 1024),
              key.verifies(signature, of: Array((parts[0] + "." + parts[1]).utf8), algorithm: header.algorithm) else {
            throw Failure("the signature does not verify with the issuer's key")
        }
        guard let bytes = Tokens.base64URLDecoded(String(parts[1]), limit: 12_288),
              let claims = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any] else { throw Failure("its claims are not JSON") }
        guard claims["iss"] as? String == issuer else { throw Failure("issued by \(claims["iss"] ?? "nobody"), not \(issuer)") }
        let audiences = (claims["aud"] as? String).map { [$0] } ?? (claims["aud"] as? [String]) ?? []
        guard audiences.contains(clientID) else { throw Failure("meant for another client") }
        if audiences.count > 1 { guard claims["azp"] as? String == clientID else { throw Failure("several audiences and not authorised for this one") } }
        guard let expires = (claims["exp"] as? NSNumber)?.doubleValue, expires > now.timeIntervalSince1970 - skew else { throw Failure("expired") }
        guard let issued = (claims["iat"] as? NSNumber)?.doubleValue, issued < now.timeIntervalSince1970 + skew else { throw Failure("issued in the future") }
        guard let sent = claims["nonce"] as? String, constantTimeEquals(Array(sent.utf8), Array(nonce.utf8)) else {
            throw Failure("its nonce is not this attempt's")
        }
        guard let subject = claims["sub"] as? String, !subject.isEmpty, subject.utf8.count <= 255 else { throw Failure("no subject") }
        self.subject = subject
        name = (claims["name"] as? String).map { String($0.prefix(200)) }
        let verified = (claims["email_verified"] as? Bool) ?? ((claims["email_verified"] as? String) == "true")
        verifiedEmail = verified ? (claims["email"] as? String).map { String($0.prefix(320)) } : nil
    }
}
