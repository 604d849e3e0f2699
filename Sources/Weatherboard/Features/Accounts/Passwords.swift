import Crypto
import CryptoExtras
import Foundation

/// scrypt password hashes. The stored form carries its parameters
/// (`scrypt$N$r$p$salt$hash`, salt and hash in base64), so they can be raised later: old
/// hashes still verify with the parameters they were made with.
public struct PasswordHasher: Sendable {
    /// CPU/memory cost (a power of two), block size and parallelism. The default, N = 2^15,
    /// r = 8, p = 1, uses 32 MiB and about 0.1 s per hash on this machine (OWASP's minimum
    /// recommendation for scrypt is N = 2^17 with r = 8 at 128 MiB; we trade some of that for
    /// memory on a small server, and can raise it without a migration).
    public var cost = 1 << 15
    public var blockSize = 8
    public var parallelism = 1
    /// Bounds how many hashes run at once (see `ConcurrencyLimit`): past it, 503.
    let limit: ConcurrencyLimit

    public init(cost: Int = 1 << 15) {
        self.cost = cost
        limit = .forCPUWork()
    }

    init(cost: Int, limit: ConcurrencyLimit) {
        self.cost = cost
        self.limit = limit
    }

    public func hash(_ password: String) throws -> String {
        let salt = randomBytes(16)
        let key = try limit.run { try derive(password, salt: salt, cost: cost, blockSize: blockSize, parallelism: parallelism) }
        return "scrypt$\(cost)$\(blockSize)$\(parallelism)$\(Data(salt).base64EncodedString())$\(Data(key).base64EncodedString())"
    }

    /// Checks `password` against a stored hash in constant time; throws (503) when too many
    /// checks are already running.
    public func verify(_ password: String, against stored: String) throws -> Bool {
        let parts = stored.split(separator: "$").map(String.init)
        guard parts.count == 6, parts[0] == "scrypt", let n = Int(parts[1]), let r = Int(parts[2]), let p = Int(parts[3]),
              let salt = Data(base64Encoded: parts[4]), let expected = Data(base64Encoded: parts[5])
        else { return false }
        guard let key = try limit.run({ try? derive(password, salt: [UInt8](salt), cost: n, blockSize: r, parallelism: p) }) else { return false }
        return constantTimeEquals(key, [UInt8](expected))
    }

    private func derive(_ password: String, salt: [UInt8], cost: Int, blockSize: Int, parallelism: Int) throws -> [UInt8] {
        let key = try KDF.Scrypt.deriveKey(from: Array(password.utf8), salt: salt, outputByteCount: 32,
                                           rounds: cost, blockSize: blockSize, parallelism: parallelism)
        return key.withUnsafeBytes { Array($0) }
    }
}

/// Compares byte strings without stopping at the first difference.
func constantTimeEquals(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    guard a.count == b.count else { return false }
    var difference: UInt8 = 0
    for i in a.indices { difference |= a[i] ^ b[i] }
    return difference == 0
}

/// Random tokens for sessions and CSRF: 256 bits from the system's secure generator.
enum Tokens {
    static func random() -> String {
        Data(randomBytes(32)).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
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

/// Bytes from the system's cryptographically secure generator (getrandom on Linux).
func randomBytes(_ count: Int) -> [UInt8] {
    var generator = SystemRandomNumberGenerator()
    return (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
}
