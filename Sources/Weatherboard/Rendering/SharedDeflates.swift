import Foundation
import HTTPServer
import Synchronization

/// Deflated forms of fragments that many responses repeat byte for byte, with holes for each
/// response's token: a city's board as every member sees it who has not posted, agreed or
/// reported on it. Each response still renders its fragment (what differs per reader is decided
/// there, in one place); when the render is the same bytes as the one kept for its key, its
/// deflated form is reused, and otherwise it is deflated now and kept in its place. Nothing goes
/// stale: a kept form is used only for exactly the bytes it was made from.
final class SharedDeflates: Sendable {
    private struct Kept {
        let bytes: [UInt8]
        let run: Gzip.DeflatedRun
    }

    private let kept: Mutex<LRUCache<String, Kept>>
    /// Reused, deflated anew (tests count them).
    let reused = Atomic<Int>(0)
    let deflated = Atomic<Int>(0)

    /// The budget counts both forms; a board of 20 posts is about 80 KB plain.
    init(maximumEntries: Int = 2_000, maximumBytes: Int = 24 << 20) {
        kept = Mutex(LRUCache(maximumCount: maximumEntries, maximumCost: maximumBytes))
    }

    /// The deflated form of `fragment` (whose holes hold `HTMLFragment.Hole`'s placeholder), at
    /// the level of a response compressed per request; nil if zlib refused.
    func run(for fragment: HTMLFragment, key: String) -> Gzip.DeflatedRun? {
        if let same = kept.withLock({ $0.value(for: key) }), Self.equal(same.bytes, fragment.bytes) {
            reused.add(1, ordering: .relaxed)
            return same.run
        }
        guard let run = Gzip.DeflatedRun(fragment.bytes, holes: fragment.holes, holeLength: HTMLFragment.Hole.length, level: 1) else { return nil }
        deflated.add(1, ordering: .relaxed)
        kept.withLock { $0.set(Kept(bytes: fragment.bytes, run: run), for: key, cost: fragment.bytes.count + run.deflated.count) }
        return run
    }

    /// Byte for byte, as `memcmp` compares (a board is tens of kilobytes).
    private static func equal(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        return a.withUnsafeBufferPointer { x in b.withUnsafeBufferPointer { y in
            x.count == 0 || memcmp(x.baseAddress!, y.baseAddress!, x.count) == 0
        } }
    }
}
