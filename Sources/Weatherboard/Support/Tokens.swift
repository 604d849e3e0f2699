import Crypto
import Foundation

/// Random tokens for sessions and CSRF: 256 bits from the system's secure generator.
enum Tokens {
    static func random() -> String { base64URL(randomBytes(32)) }

    /// The length of `random()`'s tokens: 32 bytes in unpadded base64url.
    static let length = 43

    /// Whether `token` has the form `random()` makes: exactly 43 characters of the base64url
    /// alphabet. Anything else a cookie carries (a planted `<meta …>`) is not a token.
    static func isWellFormed(_ token: String) -> Bool {
        token.utf8.count == length && token.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "_"): return true
            default: return false
            }
        }
    }

    /// Unpadded base64url (RFC 4648 §5), on bytes: Foundation's encoder with three
    /// `replacingOccurrences` cost more than the rest of a page's token handling.
    static func base64URL(_ bytes: [UInt8]) -> String {
        let alphabet: StaticString = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
        let table = alphabet.utf8Start
        return String(unsafeUninitializedCapacity: (bytes.count * 4 + 2) / 3) { out in
            var o = 0
            var i = 0
            while i + 2 < bytes.count {
                let n = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2])
                out[o] = table[Int(n >> 18)]; out[o + 1] = table[Int(n >> 12 & 63)]
                out[o + 2] = table[Int(n >> 6 & 63)]; out[o + 3] = table[Int(n & 63)]
                o += 4
                i += 3
            }
            let rest = bytes.count - i
            if rest > 0 {
                let n = UInt32(bytes[i]) << 16 | (rest == 2 ? UInt32(bytes[i + 1]) << 8 : 0)
                out[o] = table[Int(n >> 18)]; out[o + 1] = table[Int(n >> 12 & 63)]
                o += 2
                if rest == 2 { out[o] = table[Int(n >> 6 & 63)]; o += 1 }
            }
            return o
        }
    }

    /// SHA-256, hex: what the database keeps of a session token.
    static func digest(_ token: String) -> String {
        SHA256.hash(data: Array(token.utf8)).withUnsafeBytes(hex)
    }

    /// Lower-case hexadecimal, two digits a byte (done on every signed-in request: no `String(format:)`).
    static func hex(_ bytes: UnsafeRawBufferPointer) -> String {
        let digits: StaticString = "0123456789abcdef"
        return String(unsafeUninitializedCapacity: bytes.count * 2) { out in
            for (index, byte) in bytes.enumerated() {
                out[2 * index] = digits.utf8Start[Int(byte >> 4)]
                out[2 * index + 1] = digits.utf8Start[Int(byte & 0x0F)]
            }
            return bytes.count * 2
        }
    }
}
