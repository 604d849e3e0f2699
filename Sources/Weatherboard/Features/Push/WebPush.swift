import Crypto
import Foundation

/// Web Push's two pieces of cryptography: the message encrypted for one browser (RFC 8291, with
/// the `aes128gcm` content coding of RFC 8188), and the site's VAPID signature (RFC 8292).
enum WebPush {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// The body a push service carries: `plaintext` encrypted for the subscription's key
    /// (`p256dh`, an uncompressed P-256 point) and `auth` secret, as one record. `salt` and
    /// `sender` are fresh for every message; tests fix them to the RFC's example.
    static func encrypt(_ plaintext: [UInt8], p256dh: [UInt8], auth: [UInt8], salt: [UInt8] = randomBytes(16),
                        sender: P256.KeyAgreement.PrivateKey = .init()) throws -> [UInt8] {
        guard auth.count == 16, salt.count == 16 else { throw Failure(description: "auth and salt are 16 bytes") }
        guard let receiver = try? P256.KeyAgreement.PublicKey(x963Representation: p256dh) else {
            throw Failure(description: "p256dh is not a P-256 point")
        }
        let senderPublic = Array(sender.publicKey.x963Representation)
        let shared = try sender.sharedSecretFromKeyAgreement(with: receiver).withUnsafeBytes { Array($0) }
        // RFC 8291 §3.4: the key and nonce from the shared secret, the auth secret and both keys.
        let prkKey = HKDF<SHA256>.extract(inputKeyMaterial: SymmetricKey(data: shared), salt: auth)
        let ikm = HKDF<SHA256>.expand(pseudoRandomKey: prkKey, info: Array("WebPush: info".utf8) + [0] + p256dh + senderPublic,
                                      outputByteCount: 32)
        let prk = HKDF<SHA256>.extract(inputKeyMaterial: ikm, salt: salt)
        let cek = HKDF<SHA256>.expand(pseudoRandomKey: prk, info: Array("Content-Encoding: aes128gcm".utf8) + [0], outputByteCount: 16)
        let nonce = HKDF<SHA256>.expand(pseudoRandomKey: prk, info: Array("Content-Encoding: nonce".utf8) + [0], outputByteCount: 12)
        // One record, the last: the plaintext and the delimiter 0x02 (RFC 8188 §2).
        let sealed = try AES.GCM.seal(plaintext + [2], using: cek, nonce: AES.GCM.Nonce(data: nonce.withUnsafeBytes { Array($0) }))
        let recordSize = UInt32(4096)
        let header = salt + withUnsafeBytes(of: recordSize.bigEndian, Array.init) + [UInt8(senderPublic.count)] + senderPublic
        return header + Array(sealed.ciphertext) + Array(sealed.tag)
    }

    /// The site's VAPID key (RFC 8292): one for every node, kept in the database.
    struct VAPID: Sendable {
        let key: P256.Signing.PrivateKey
        /// The public key as browsers take it (`applicationServerKey`): an uncompressed point, base64url.
        var publicKey: String { Tokens.base64URL(Array(key.publicKey.x963Representation)) }

        /// `Authorization: vapid t=…, k=…` for a push service at `audience` (its origin), valid
        /// until `expires` (at most 24 hours ahead, RFC 8292 §2).
        func authorization(audience: String, contact: String, expires: Date) throws -> String {
            let header = Tokens.base64URL(Array(#"{"typ":"JWT","alg":"ES256"}"#.utf8))
            let claims = try JSONSerialization.data(withJSONObject: ["aud": audience, "exp": Int(clampedSeconds: expires.timeIntervalSince1970),
                                                                     "sub": contact], options: [.sortedKeys, .withoutEscapingSlashes])
            let signed = header + "." + Tokens.base64URL(Array(claims))
            let signature = try key.signature(for: Array(signed.utf8))
            return "vapid t=\(signed).\(Tokens.base64URL(Array(signature.rawRepresentation))), k=\(publicKey)"
        }
    }
}
