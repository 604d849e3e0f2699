import Foundation

/// Ten one-time codes a member writes down to get back into the account without the password:
/// 16 characters of Crockford's base32 (80 bits each), shown once, stored as SHA-256 digests.
/// With that much randomness a plain digest is enough: no guess list reaches a code.
enum RecoveryCodes {
    static let count = 10
    /// Crockford's base32: no I, L, O or U, so that a code read off paper is read right.
    private static let alphabet = Array("0123456789abcdefghjkmnpqrstvwxyz".utf8)

    /// A new code as shown: four groups of four ("7k2m-…").
    static func make() -> String {
        let characters = randomBytes(16).map { alphabet[Int($0 & 31)] }
        return stride(from: 0, to: 16, by: 4).map { String(decoding: characters[$0..<$0 + 4], as: UTF8.self) }.joined(separator: "-")
    }

    /// A code as typed, in the form it was made: case, spaces and dashes ignored, the letters
    /// people confuse with digits read as those digits; nil for anything that cannot be a code.
    static func normalised(_ typed: String) -> String? {
        var out: [UInt8] = []
        for byte in typed.lowercased().utf8.prefix(64) {
            switch byte {
            case UInt8(ascii: " "), UInt8(ascii: "-"): continue
            case UInt8(ascii: "o"): out.append(UInt8(ascii: "0"))
            case UInt8(ascii: "i"), UInt8(ascii: "l"): out.append(UInt8(ascii: "1"))
            case _ where alphabet.contains(byte): out.append(byte)
            default: return nil
            }
        }
        return out.count == 16 ? String(decoding: out, as: UTF8.self) : nil
    }

    /// What is stored for `code` (as made or typed) of `userID`.
    static func digest(_ code: String, userID: Int64) -> String? {
        normalised(code).map { Tokens.digest("recovery:\(userID):\($0)") }
    }

    // MARK: - Queries

    /// Replaces the member's codes with `codes` (the old ones stop working).
    static func replace(userID: Int64, with codes: [String], now: Date, _ db: any SQLConnection) throws {
        try db.execute("DELETE FROM recovery_codes WHERE user_id = ?", userID)
        for code in codes {
            try db.execute("INSERT INTO recovery_codes (user_id, code_hash, created_at) VALUES (?, ?, ?)",
                           userID, digest(code, userID: userID) ?? "", now)
        }
    }

    /// How many unused codes the member has, and when they were made.
    static func summary(userID: Int64, _ db: any SQLConnection) throws -> (left: Int, madeAt: Date?) {
        try db.one("SELECT count(*), max(created_at) FROM recovery_codes WHERE user_id = ?", [userID]) {
            ($0.int(0), $0.optionalDate(1))
        } ?? (0, nil)
    }

    /// Uses `code`: true (and the code gone) when it was one of the member's.
    static func use(_ code: String, userID: Int64, _ db: any SQLConnection) throws -> Bool {
        guard let hash = digest(code, userID: userID) else { return false }
        return try db.execute("DELETE FROM recovery_codes WHERE user_id = ? AND code_hash = ?", userID, hash) == 1
    }
}
