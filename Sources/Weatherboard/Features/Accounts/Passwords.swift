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

    /// - Parameter client: who asks (a `ClientKey`), for a fair share of the hashing slots.
    public func hash(_ password: String, client: String = "command line") throws -> String {
        let salt = randomBytes(16)
        let key = try limit.run(for: client) { try derive(password, salt: salt, cost: cost, blockSize: blockSize, parallelism: parallelism) }
        return "scrypt$\(cost)$\(blockSize)$\(parallelism)$\(Data(salt).base64EncodedString())$\(Data(key).base64EncodedString())"
    }

    /// A stored hash that cannot be checked: the fault is ours (a damaged row, parameters no
    /// hash of ours has), never the person's password, and it is reported as ours.
    public struct UnusableHash: Error, CustomStringConvertible {
        public let description: String
    }

    /// Checks `password` against a stored hash in constant time; false only for a wrong
    /// password. Throws `UnusableHash` for a hash it cannot check, and 503 when too many checks
    /// are already running. `priority` places the check among those waiting (`ConcurrencyLimit`).
    func verify(_ password: String, against stored: String, client: String = "command line",
                priority: ConcurrencyLimit.Priority = .other) throws -> Bool {
        let parts = stored.split(separator: "$").map(String.init)
        guard parts.count == 6, parts[0] == "scrypt", let n = Int(parts[1]), let r = Int(parts[2]), let p = Int(parts[3]),
              let salt = Data(base64Encoded: parts[4]), let expected = Data(base64Encoded: parts[5])
        else { throw UnusableHash(description: "the stored password hash is not in the scrypt$N$r$p$salt$hash form") }
        // Parameters far past ours would make one check take the machine's memory or minutes.
        guard n > 1, n <= 1 << 20, n & (n - 1) == 0, (1...32).contains(r), (1...16).contains(p) else {
            throw UnusableHash(description: "the stored password hash has parameters out of range (N=\(n), r=\(r), p=\(p))")
        }
        let key = try limit.run(for: client, priority: priority) { try derive(password, salt: [UInt8](salt), cost: n, blockSize: r, parallelism: p) }
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

/// Bytes from the system's cryptographically secure generator (getrandom on Linux).
/// Eight bytes per draw (one `getrandom` call each): a byte per draw cost a system call a byte.
func randomBytes(_ count: Int) -> [UInt8] {
    var generator = SystemRandomNumberGenerator()
    var bytes: [UInt8] = []
    bytes.reserveCapacity(count + 8)
    while bytes.count < count {
        withUnsafeBytes(of: generator.next() as UInt64) { bytes.append(contentsOf: $0) }
    }
    bytes.removeLast(bytes.count - count)
    return bytes
}
