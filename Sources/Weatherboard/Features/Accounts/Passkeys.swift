import Foundation

/// A member's passkey as stored.
struct Passkey: Sendable {
    var id: Int64
    var userID: Int64
    /// base64url, as browsers name it.
    var credentialID: String
    /// The COSE_Key, base64url.
    var publicKey: String
    var signCount: UInt32
    var name: String
    var createdAt: Date
    var lastUsedAt: Date?

    static let columns = "id, user_id, credential_id, public_key, sign_count, name, created_at, last_used_at"

    init(row: any SQLRow) {
        self.init(id: row.int64(0), userID: row.int64(1), credentialID: row.string(2), publicKey: row.string(3),
                  signCount: UInt32(clamping: row.int64(4)), name: row.string(5), createdAt: row.date(6), lastUsedAt: row.optionalDate(7))
    }

    init(id: Int64, userID: Int64, credentialID: String, publicKey: String, signCount: UInt32, name: String, createdAt: Date,
         lastUsedAt: Date?) {
        (self.id, self.userID, self.credentialID, self.publicKey, self.signCount, self.name, self.createdAt, self.lastUsedAt) =
            (id, userID, credentialID, publicKey, signCount, name, createdAt, lastUsedAt)
    }
}

/// A challenge as given to a browser, and what the ceremony it starts needs at its end.
struct WebAuthnChallenge: Sendable {
    static let keeping = Keeping("webauthn_challenges", "expires_at")

    enum Purpose: String, Sendable { case register, authenticate, signup }

    var challenge: String
    var purpose: Purpose
    var userID: Int64?
    /// For a sign-up: the account it makes.
    var username: String?
    var displayName: String?
    var email: String?
    var userHandle: String?
    /// For a passkey added in settings: the name chosen.
    var name: String?

    /// Single-use, five minutes (WebAuthn's recommended timeout for a ceremony).
    static let validFor: TimeInterval = 300
}

extension AccountStore {
    /// Stores a new challenge for `binding` (a session's or a ceremony cookie's digest),
    /// replacing any earlier one of the same purpose.
    func begin(_ ceremony: WebAuthnChallenge, binding: String, now: Date) throws {
        try database.write(.subjects) { db in  // a challenge by its binding, replaced whole
            try db.execute("DELETE FROM webauthn_challenges WHERE binding = ? AND purpose = ?", binding, ceremony.purpose.rawValue)
            try db.execute("""
                INSERT INTO webauthn_challenges (challenge_hash, binding, purpose, user_id, username, display_name, email, user_handle, name, expires_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """, Tokens.digest(ceremony.challenge), binding, ceremony.purpose.rawValue, ceremony.userID, ceremony.username,
                           ceremony.displayName, ceremony.email, ceremony.userHandle, ceremony.name,
                           now.addingTimeInterval(WebAuthnChallenge.validFor))
        }
    }

    /// Takes the challenge a browser answered (gone once taken), if it was given to `binding`
    /// for `purpose` and has not expired.
    static func take(_ challenge: String, _ purpose: WebAuthnChallenge.Purpose, binding: String, now: Date,
                     _ db: any SQLConnection) throws -> WebAuthnChallenge? {
        try db.one("""
            DELETE FROM webauthn_challenges WHERE challenge_hash = ? AND binding = ? AND purpose = ? AND expires_at > ?
            RETURNING user_id, username, display_name, email, user_handle, name
            """, [Tokens.digest(challenge), binding, purpose.rawValue, now]) { row in
            WebAuthnChallenge(challenge: challenge, purpose: purpose, userID: row.optionalInt64(0), username: row.optionalString(1),
                              displayName: row.optionalString(2), email: row.optionalString(3), userHandle: row.optionalString(4),
                              name: row.optionalString(5))
        }
    }

    func passkeys(userID: Int64) throws -> [Passkey] {
        try database.readStatement { try $0.all("SELECT \(Passkey.columns) FROM passkeys WHERE user_id = ? ORDER BY id", [userID], Passkey.init(row:)) }
    }

    /// The member's handle for authenticators, made the first time it is needed.
    func passkeyHandle(userID: Int64) throws -> String {
        try database.write(.subject(.member(userID))) { db in  // made once for the member
            if let handle = try db.one("SELECT passkey_handle FROM users WHERE id = ?", [userID], { $0.optionalString(0) }) ?? nil {
                return handle
            }
            let handle = Tokens.base64URL(randomBytes(32))
            try db.execute("UPDATE users SET passkey_handle = ? WHERE id = ?", handle, userID)
            return handle
        }
    }

    /// Whether the member has a password (a passkey-only account has '').
    func hasPassword(userID: Int64) throws -> Bool {
        try !(passwordHash(userID: userID) ?? "").isEmpty
    }

    /// A password check before a change only the member may make; an account with no password
    /// (passkeys only) has only its session to show.
    func reauthenticate(userID: Int64, password: String, hasher: PasswordHasher, client: String) throws -> Bool {
        let hash = try passwordHash(userID: userID) ?? ""
        return hash.isEmpty ? true : try hasher.verify(password, against: hash, client: client)
    }

    /// Removes a passkey of the member's, unless it is their last way in (no password, no other
    /// passkey): false then.
    /// Whether the member's passkey `id` was renamed (false: none of theirs).
    func renamePasskey(id: Int64, userID: Int64, to name: String) throws -> Bool {
        try database.write(.subject(.member(userID))) { db in  // the member's own passkey
            try db.one("UPDATE passkeys SET name = ? WHERE id = ? AND user_id = ? RETURNING 1", [name, id, userID]) { _ in true } ?? false
        }
    }

    func removePasskey(id: Int64, userID: Int64) throws -> Bool {
        try database.write(.subject(.member(userID))) { db in  // counts the member's ways in
            guard try Self.hasAnotherWayIn(userID, besidesPasskey: id, db) else { return false }
            try db.execute("DELETE FROM passkeys WHERE id = ? AND user_id = ?", id, userID)
            return true
        }
    }

    /// Whether the member can still sign in without the passkey `besidesPasskey` or the provider
    /// `besidesProvider`: a password, another passkey, another provider.
    static func hasAnotherWayIn(_ userID: Int64, besidesPasskey: Int64 = 0, besidesProvider: String = "", _ db: any SQLConnection) throws -> Bool {
        let others = try db.integer("SELECT count(*) FROM passkeys WHERE user_id = ? AND id <> ?", userID, besidesPasskey)
            + db.integer("SELECT count(*) FROM oidc_identities WHERE user_id = ? AND provider <> ?", userID, besidesProvider)
        let hash = try db.one("SELECT password_hash FROM users WHERE id = ?", [userID]) { $0.string(0) } ?? ""
        return others > 0 || !hash.isEmpty
    }

    static func insertPasskey(_ credential: WebAuthn.NewCredential, userID: Int64, name: String, now: Date,
                              _ db: any SQLConnection) throws -> Bool {
        let id = Tokens.base64URL(credential.id)
        guard try !db.exists("SELECT 1 FROM passkeys WHERE credential_id = ?", id) else { return false }
        try db.execute("""
            INSERT INTO passkeys (user_id, credential_id, public_key, algorithm, sign_count, name, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)
            """, userID, id, Tokens.base64URL(credential.publicKey), credential.algorithm, Int64(credential.signCount), name, now)
        return true
    }
}

extension Tokens {
    /// base64url without padding, decoded; nil for anything else or anything over `limit` bytes.
    static func base64URLDecoded(_ text: String, limit: Int = 65_536) -> [UInt8]? {
        guard text.utf8.count <= limit * 4 / 3 + 4 else { return nil }
        var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        guard !standard.contains("=") else { return nil }
        standard += String(repeating: "=", count: (4 - standard.utf8.count % 4) % 4)
        return Data(base64Encoded: standard).map { Array($0) }
    }
}
