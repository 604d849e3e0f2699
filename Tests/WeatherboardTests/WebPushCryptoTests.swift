import Crypto
import Foundation
import Testing
@testable import Weatherboard

/// Issue 41 #3: Web Push's cryptography against the RFCs.
struct WebPushCryptoTests {
    static func b(_ text: String) -> [UInt8] { Tokens.base64URLDecoded(text)! }

    /// RFC 8291 Appendix A: its keys, salt and record size encrypt its message to its bytes.
    @Test func theRFC8291ExampleEncryptsToItsPublishedBytes() throws {
        let sender = try P256.KeyAgreement.PrivateKey(rawRepresentation: Self.b("yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw"))
        #expect(Tokens.base64URL(Array(sender.publicKey.x963Representation))
                == "BP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A8")
        let body = try WebPush.encrypt(Array("When I grow up, I want to be a watermelon".utf8),
                                       p256dh: Self.b("BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4"),
                                       auth: Self.b("BTBZMqHH6r4Tts7J_aSIgg"), salt: Self.b("DGv6ra1nlYgDCS1FRnbzlw"), sender: sender)
        #expect(Tokens.base64URL(body) == "DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A_yl95bQpu6cVPTpK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulcy4a-fN")
        // Without the fixed values, every message has its own salt and sender key.
        let p256dh = Self.b("BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4")
        #expect(try WebPush.encrypt([1], p256dh: p256dh, auth: Array(repeating: 7, count: 16))
                != WebPush.encrypt([1], p256dh: p256dh, auth: Array(repeating: 7, count: 16)))
        #expect(throws: WebPush.Failure.self) { try WebPush.encrypt([1], p256dh: [4, 1, 2], auth: Array(repeating: 7, count: 16)) }
    }

    /// RFC 8292: the token is an ES256 JWT for the push service's origin, verifiable with the
    /// public key the site gives browsers.
    @Test func theVAPIDTokenVerifiesWithThePublicKey() throws {
        let vapid = WebPush.VAPID(key: P256.Signing.PrivateKey())
        let expires = Date(timeIntervalSince1970: 1_800_000_000)
        let header = try vapid.authorization(audience: "https://fcm.googleapis.com", contact: "mailto:ops@example.org", expires: expires)
        let parts = header.components(separatedBy: ", k=")
        #expect(parts.count == 2 && parts[1] == vapid.publicKey)
        let token = String(parts[0].dropFirst("vapid t=".count)).split(separator: ".").map(String.init)
        #expect(token.count == 3)
        let claims = try #require(try JSONSerialization.jsonObject(with: Data(Self.b(token[1]))) as? [String: Any])
        #expect(claims["aud"] as? String == "https://fcm.googleapis.com")
        #expect(claims["exp"] as? Int == 1_800_000_000)
        #expect(claims["sub"] as? String == "mailto:ops@example.org")
        let key = try P256.Signing.PublicKey(x963Representation: Self.b(vapid.publicKey))
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: Self.b(token[2]))
        #expect(key.isValidSignature(signature, for: Array((token[0] + "." + token[1]).utf8)))
    }
}
