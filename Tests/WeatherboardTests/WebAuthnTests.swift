import Foundation
import Testing
import HTTPTestSupport
@testable import Weatherboard

/// Issue 40 #1: WebAuthn verification against recorded messages (made by Fixtures/webauthn/make.py
/// with Python's `cryptography` and `cbor2`, an oracle independent of ours), and what it must
/// refuse; the CBOR reader's limits.
struct WebAuthnTests {
    struct Fixture: Decodable {
        struct Registration: Decodable { var challenge, clientDataJSON, attestationObject, credentialId, publicKey: String }
        struct Assertion: Decodable {
            var challenge, clientDataJSON, authenticatorData, signature: String
            var signCount: UInt32
        }
        struct Variant: Decodable { var clientDataJSON, authenticatorData, signature: String }
        struct Case: Decodable {
            var registration: Registration
            var assertion: Assertion
            var variants: [String: Variant]
        }
        var origin: String
        var rpId: String
        var cases: [String: Case]
    }

    static let fixture: Fixture = {
        let url = Bundle.module.url(forResource: "webauthn", withExtension: "json", subdirectory: "Fixtures/webauthn")!
        return try! JSONDecoder().decode(Fixture.self, from: Data(contentsOf: url))
    }()
    static let party = WebAuthn.RelyingParty(origin: "https://weather.example")!

    static func b(_ text: String) -> [UInt8] { Tokens.base64URLDecoded(text)! }

    @Test(arguments: ["es256", "rs256"]) func aRecordedRegistrationAndSignInVerify(_ name: String) throws {
        let c = try #require(Self.fixture.cases[name])
        let made = try WebAuthn.register(clientDataJSON: Self.b(c.registration.clientDataJSON),
                                         attestationObject: Self.b(c.registration.attestationObject),
                                         challenge: c.registration.challenge, Self.party)
        #expect(Tokens.base64URL(made.id) == c.registration.credentialId)
        #expect(Tokens.base64URL(made.publicKey) == c.registration.publicKey)
        #expect(made.algorithm == (name == "es256" ? -7 : -257))
        #expect(made.userVerified)
        let count = try WebAuthn.authenticate(clientDataJSON: Self.b(c.assertion.clientDataJSON),
                                              authenticatorData: Self.b(c.assertion.authenticatorData),
                                              signature: Self.b(c.assertion.signature), challenge: c.assertion.challenge,
                                              publicKey: made.publicKey, storedCount: 3, Self.party)
        #expect(count == 7)
    }

    /// Each refused for its own reason: a failure names it.
    @Test(arguments: ["es256", "rs256"]) func whatIsRefused(_ name: String) throws {
        let c = try #require(Self.fixture.cases[name])
        let key = Self.b(c.registration.publicKey)
        func signIn(_ clientData: String, _ data: String, _ signature: [UInt8], challenge: String? = nil, stored: UInt32 = 0,
                    party: WebAuthn.RelyingParty = WebAuthnTests.party) throws -> UInt32 {
            try WebAuthn.authenticate(clientDataJSON: Self.b(clientData), authenticatorData: Self.b(data), signature: signature,
                                      challenge: challenge ?? c.assertion.challenge, publicKey: key, storedCount: stored, party)
        }
        func reason(_ body: () throws -> Any) -> String {
            do { _ = try body(); return "accepted" } catch { return "\(error)" }
        }
        let a = c.assertion
        var badSignature = Self.b(a.signature)
        badSignature[badSignature.count / 2] ^= 0x01
        #expect(reason { try signIn(a.clientDataJSON, a.authenticatorData, badSignature) }.contains("the signature does not verify"))
        #expect(reason { try signIn(a.clientDataJSON, a.authenticatorData, Self.b(a.signature), challenge: "another") }.contains("challenge"))
        #expect(reason { try signIn(a.clientDataJSON, a.authenticatorData, Self.b(a.signature), stored: 7) }.contains("cloned"))
        #expect(reason { try signIn(a.clientDataJSON, a.authenticatorData, Self.b(a.signature), stored: 9) }.contains("cloned"))
        let elsewhere = WebAuthn.RelyingParty(origin: "https://weather.example:8443")!
        #expect(reason { try signIn(a.clientDataJSON, a.authenticatorData, Self.b(a.signature), party: elsewhere) }.contains("not https://weather.example:8443"))
        let variants = c.variants
        #expect(reason { try signIn(variants["otherOrigin"]!.clientDataJSON, variants["otherOrigin"]!.authenticatorData,
                                    Self.b(variants["otherOrigin"]!.signature)) }.contains("made on https://evil.example"))
        #expect(reason { try signIn(variants["otherRPID"]!.clientDataJSON, variants["otherRPID"]!.authenticatorData,
                                    Self.b(variants["otherRPID"]!.signature)) }.contains("another RP ID"))
        #expect(reason { try signIn(variants["noPresence"]!.clientDataJSON, variants["noPresence"]!.authenticatorData,
                                    Self.b(variants["noPresence"]!.signature)) }.contains("no user presence"))
        // A sign-in's data offered as a registration, and the other way round.
        let r = c.registration
        #expect(reason { try WebAuthn.register(clientDataJSON: Self.b(a.clientDataJSON), attestationObject: Self.b(r.attestationObject),
                                               challenge: a.challenge, Self.party) }.contains("webauthn.get, not webauthn.create"))
        #expect(reason { try signIn(r.clientDataJSON, a.authenticatorData, Self.b(a.signature), challenge: r.challenge) }.contains("webauthn.create"))
        // A registration cut anywhere is refused, never a crash.
        let attestation = Self.b(r.attestationObject)
        for cut in stride(from: 0, to: attestation.count, by: 7) {
            #expect(reason { try WebAuthn.register(clientDataJSON: Self.b(r.clientDataJSON), attestationObject: Array(attestation[..<cut]),
                                                   challenge: r.challenge, Self.party) } != "accepted")
        }
    }

    @Test func theCBORReaderHasLimits() throws {
        let decoder = CBORDecoder()
        #expect(try decoder.decodeWhole([0xA2, 0x01, 0x02, 0x20, 0x43, 1, 2, 3]) ==
                .map([.init(key: .unsigned(1), value: .unsigned(2)), .init(key: .negative(0), value: .bytes([1, 2, 3]))]))
        #expect(try decoder.decodeWhole([0x39, 0x01, 0x00]).int == -257)
        // Deeper than the limit: 100 nested arrays.
        #expect(throws: CBORDecoder.Failure.self) { try decoder.decodeWhole(Array(repeating: 0x81, count: 100) + [0x00]) }
        // Lengths past the input, however large, are refused before anything is allocated.
        #expect(throws: CBORDecoder.Failure.self) { try decoder.decodeWhole([0x5B, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]) }
        #expect(throws: CBORDecoder.Failure.self) { try decoder.decodeWhole([0x9B, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]) }
        #expect(throws: CBORDecoder.Failure.self) { try decoder.decodeWhole([0xBA, 0xFF, 0xFF, 0xFF, 0xFF]) }
        // More values than the limit, in a flat array that fits the input.
        #expect(throws: CBORDecoder.Failure.self) { try decoder.decodeWhole([0x99, 0x03, 0xE8] + Array(repeating: 0x00, count: 1000)) }
        // Indefinite lengths, tags, text that is not UTF-8, bytes after the value.
        for refused: [UInt8] in [[0x5F, 0x41, 0x00, 0xFF], [0xC1, 0x00], [0x62, 0xFF, 0xFE], [0x00, 0x00], [0xF8, 0x20]] {
            #expect(throws: CBORDecoder.Failure.self, "\(refused)") { try decoder.decodeWhole(refused) }
        }
    }
}

/// Issue 65 #3: passkeys are named after the browser and system that made them, and renamed by
/// their owner only.
@Suite(.onEveryEngine) struct PasskeyNameTests {
    @Test(arguments: [
        ("Mozilla/5.0 (Linux; Android 14; SM-S918N) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/25.0 Chrome/121.0 Mobile Safari/537.36", "Samsung Internet on Android"),
        ("Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1", "Safari on iPhone"),
        ("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36 Edg/126.0", "Edge on Windows"),
        ("Mozilla/5.0 (Macintosh; Intel Mac OS X 14_4) Gecko/20100101 Firefox/125.0", "Firefox on Mac"),
        ("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0 Safari/537.36", "Chrome on Linux"),
    ])
    func aPasskeyIsNamedAfterItsBrowserAndSystem(_ agent: String, _ name: String) {
        #expect(DeviceName.from(userAgent: agent) == name)
    }

    @Test func unknownAgentsGetNoName() {
        #expect(DeviceName.from(userAgent: "curl/8.5") == nil)
        #expect(DeviceName.from(userAgent: nil) == nil)
    }

    @Test func aMemberRenamesTheirOwnPasskeyOnly() throws {
        let app = try AppHarness()
        let owner = app.browser(), other = app.browser()
        try owner.signUp("owner")
        try other.signUp("other")
        try app.execute("""
            INSERT INTO passkeys (user_id, credential_id, public_key, algorithm, sign_count, name, created_at, last_used_at)
            SELECT id, 'q2W3bE1r', 'pQECAyYgASFYIA', -7, 0, 'Passkey', 1.5, NULL FROM users WHERE username = 'owner'
            """)
        let id = try app.count("SELECT id FROM passkeys")
        let (_, list) = try owner.get("/settings/passkeys")
        #expect(list.nodes("//form[@action='/settings/passkeys/\(id)/name']//input[@name='name']").first?["value"] == "Passkey")
        #expect(try other.post("/settings/passkeys/\(id)/name", [("name", "Mine now")]).0.status == 404)
        #expect(try owner.post("/settings/passkeys/\(id)/name", [("name", "  ")]).0.status == 422)
        #expect(try owner.post("/settings/passkeys/\(id)/name", [("name", "내 휴대폰")]).0.status == 303)
        #expect(try owner.get("/settings/passkeys").1.text("//li[@data-passkey='\(id)']/strong") == "내 휴대폰")
    }
}
