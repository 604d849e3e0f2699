/// What kept values really hold in memory, so that caches' budgets bound the process's memory
/// rather than a proxy for it (issue 39 #5: caches counted their arrays' lengths and forecasts'
/// JSON, and resident memory was 1.7 times what they reported).
enum ResidentBytes {
    /// A malloc block for `bytes`: glibc adds an 8-byte header and rounds to 16.
    static func block(_ bytes: Int) -> Int { (bytes + 8 + 15) & ~15 }

    /// A Swift array's buffer: its 32-byte header and its whole capacity.
    static func array<T>(_ array: [T]) -> Int { array.capacity == 0 ? 0 : block(32 + array.capacity * MemoryLayout<T>.stride) }

    /// A native string's buffer, if it has one (up to 15 UTF-8 bytes are kept inline).
    static func string(_ string: String?) -> Int {
        guard let count = string?.utf8.count, count > 15 else { return 0 }
        return block(32 + count + 1)
    }
}

extension Array where Element == UInt8 {
    /// The same bytes in a buffer of exactly their size: arrays grown by appending keep up to
    /// twice their length, which a cache holding them for minutes would pay for.
    func compacted() -> [UInt8] {
        guard capacity > count + 64 else { return self }
        return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            _ = buffer.initialize(fromContentsOf: self)
            initialized = count
        }
    }
}
