import Crypto
import CryptoExtras
import Foundation

/// The relying party's side of WebAuthn Level 2 (https://www.w3.org/TR/webauthn-2/): checking
/// what a browser's authenticator returns when a passkey is made (§7.1) and when it signs in
/// (§7.2). Attestation is not asked for ("none"): a passkey is trusted for what it proves, that
/// whoever signs holds the key made here, not for who made the device.
enum WebAuthn {
    struct Failure: Error, Equatable, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// Who the credentials are for: the site's origin and its RP ID (the origin's host).
    struct RelyingParty: Sendable, Equatable {
        let origin: String
        let id: String

        /// From an origin like `https://weather.example` (a path, if any, is not part of it).
        init?(origin text: String) {
            guard let parts = URLComponents(string: text), let scheme = parts.scheme, ["http", "https"].contains(scheme),
                  let host = parts.host, !host.isEmpty else { return nil }
            origin = "\(scheme)://\(host)" + (parts.port.map { ":\($0)" } ?? "")
            id = host
        }
    }

    /// COSE algorithm identifiers offered, in order (RFC 9053 §2.1, RFC 8812 §2).
    static let es256 = -7, rs256 = -257

    // MARK: - Pieces

    /// `clientDataJSON` (§5.8.1): what the browser says it was asked.
    struct ClientData {
        var type: String
        var challenge: String
        var origin: String
        var crossOrigin: Bool

        init(_ json: [UInt8]) throws {
            guard json.count <= 4096, let object = try? JSONSerialization.jsonObject(with: Data(json)) as? [String: Any],
                  let type = object["type"] as? String, let challenge = object["challenge"] as? String,
                  let origin = object["origin"] as? String else {
                throw Failure("clientDataJSON is not the object WebAuthn defines")
            }
            self.type = type
            self.challenge = challenge
            self.origin = origin
            crossOrigin = object["crossOrigin"] as? Bool ?? false
        }

        func check(type expected: String, challenge: String, _ party: RelyingParty) throws {
            guard type == expected else { throw Failure("the ceremony is \(type), not \(expected)") }
            guard constantTimeEquals(Array(self.challenge.utf8), Array(challenge.utf8)) else { throw Failure("the challenge is not the one given") }
            guard origin == party.origin else { throw Failure("made on \(LogText.oneLine(origin)), not \(party.origin)") }
            guard !crossOrigin else { throw Failure("made inside another site's frame") }
        }
    }

    /// Authenticator data (§6.1): the RP ID's hash, flags, the signature counter, and, when a
    /// credential is made, its id and public key.
    struct AuthenticatorData {
        var rpIDHash: [UInt8]
        var flags: UInt8
        var signCount: UInt32
        var credentialID: [UInt8]?
        var publicKey: [UInt8]?

        var userPresent: Bool { flags & 0x01 != 0 }
        var userVerified: Bool { flags & 0x04 != 0 }
        var backedUp: Bool { flags & 0x10 != 0 }

        init(_ bytes: [UInt8]) throws {
            guard bytes.count >= 37, bytes.count <= 16_384 else { throw Failure("authenticator data of \(bytes.count) bytes") }
            rpIDHash = Array(bytes[0..<32])
            flags = bytes[32]
            signCount = bytes[33..<37].reduce(0) { $0 << 8 | UInt32($1) }
            var rest = bytes[37...]
            if flags & 0x40 != 0 { // attested credential data: AAGUID, id length, id, COSE key
                guard rest.count >= 18 else { throw Failure("attested credential data cut short") }
                let length = Int(rest[rest.startIndex + 16]) << 8 | Int(rest[rest.startIndex + 17])
                rest = rest.dropFirst(18)
                guard length >= 16, length <= 1023, rest.count >= length else { throw Failure("a credential id of \(length) bytes") }
                credentialID = Array(rest.prefix(length))
                rest = rest.dropFirst(length)
                let (_, keyLength) = try CBORDecoder().decode(rest)
                publicKey = Array(rest.prefix(keyLength))
                rest = rest.dropFirst(keyLength)
            }
            if flags & 0x80 != 0, !rest.isEmpty { // extensions: one map, read and left alone
                rest = rest.dropFirst(try CBORDecoder().decode(rest).length)
            }
            guard rest.isEmpty else { throw Failure("\(rest.count) bytes after the authenticator data") }
        }

        func check(_ party: RelyingParty) throws {
            guard constantTimeEquals(rpIDHash, Array(SHA256.hash(data: Array(party.id.utf8)))) else {
                throw Failure("made for another RP ID than \(party.id)")
            }
            guard userPresent else { throw Failure("no user presence") }
        }
    }

    /// A credential's public key as COSE_Key (RFC 9052 §7): ES256 on P-256, or RS256.
    struct PublicKey {
        let algorithm: Int
        private let p256: P256.Signing.PublicKey?
        private let rsa: _RSA.Signing.PublicKey?

        init(cose bytes: [UInt8]) throws {
            let key: CBOR
            do { key = try CBORDecoder().decodeWhole(bytes) } catch { throw Failure("the public key is not CBOR: \(error)") }
            switch (key[1]?.int, key[3]?.int) {
            case (2, es256):
                guard key[-1]?.int == 1, let x = key[-2]?.byteString, let y = key[-3]?.byteString, x.count == 32, y.count == 32,
                      let point = try? P256.Signing.PublicKey(x963Representation: [0x04] + x + y) else {
                    throw Failure("not a P-256 point")
                }
                (algorithm, p256, rsa) = (es256, point, nil)
            case (3, rs256):
                guard let n = key[-1]?.byteString, let e = key[-2]?.byteString, let modulus = try? _RSA.Signing.PublicKey(n: n, e: e) else {
                    throw Failure("not an RSA key of 2048 bits or more")
                }
                (algorithm, p256, rsa) = (rs256, nil, modulus)
            default:
                throw Failure("an algorithm not offered (kty \(key[1]?.int ?? 0), alg \(key[3]?.int ?? 0))")
            }
        }

        func isValidSignature(_ signature: [UInt8], for data: [UInt8]) -> Bool {
            if let p256, let parsed = try? P256.Signing.ECDSASignature(derRepresentation: signature) {
                return p256.isValidSignature(parsed, for: data)
            }
            if let rsa {
                return rsa.isValidSignature(_RSA.Signing.RSASignature(rawRepresentation: signature), for: data, padding: .insecurePKCS1v1_5)
            }
            return false
        }
    }

    // MARK: - Ceremonies

    /// A passkey as made (§7.1), checked; what is stored of it.
    struct NewCredential: Equatable {
        var id: [UInt8]
        var publicKey: [UInt8]
        var algorithm: Int
        var signCount: UInt32
        var userVerified: Bool
    }

    static func register(clientDataJSON: [UInt8], attestationObject: [UInt8], challenge: String,
                         _ party: RelyingParty) throws -> NewCredential {
        try ClientData(clientDataJSON).check(type: "webauthn.create", challenge: challenge, party)
        let attestation: CBOR
        do { attestation = try CBORDecoder().decodeWhole(attestationObject) } catch { throw Failure("the attestation object is not CBOR: \(error)") }
        guard attestation["fmt"]?.string != nil, let authData = attestation["authData"]?.byteString else {
            throw Failure("the attestation object has no fmt or authData")
        }
        let data = try AuthenticatorData(authData)
        try data.check(party)
        guard let id = data.credentialID, let key = data.publicKey else { throw Failure("no credential was made") }
        let publicKey = try PublicKey(cose: key)
        return NewCredential(id: id, publicKey: key, algorithm: publicKey.algorithm, signCount: data.signCount,
                             userVerified: data.userVerified)
    }

    /// A sign-in (§7.2), checked against the stored key and counter; the new counter.
    static func authenticate(clientDataJSON: [UInt8], authenticatorData: [UInt8], signature: [UInt8], challenge: String,
                             publicKey: [UInt8], storedCount: UInt32, _ party: RelyingParty) throws -> UInt32 {
        try ClientData(clientDataJSON).check(type: "webauthn.get", challenge: challenge, party)
        let data = try AuthenticatorData(authenticatorData)
        try data.check(party)
        let signed = authenticatorData + Array(SHA256.hash(data: clientDataJSON))
        guard try PublicKey(cose: publicKey).isValidSignature(signature, for: signed) else { throw Failure("the signature does not verify") }
        // §6.1.1: a counter that does not move forward (when either side counts) means two
        // devices hold the key: a clone.
        if data.signCount != 0 || storedCount != 0, data.signCount <= storedCount {
            throw Failure("the signature counter went from \(storedCount) to \(data.signCount): a cloned authenticator")
        }
        return data.signCount
    }
}
