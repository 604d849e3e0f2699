import Foundation
import HTTPServer
import Synchronization

/// Deflated forms of fragments that many responses repeat byte for byte, with holes for each
/// response's token: a city's board as every member sees it who has not posted, agreed or
/// reported on it. Each response still renders its fragment (what differs per reader is decided
/// there, in one place); when the render is the same bytes as a form kept for its key, that form
/// is reused. Nothing goes stale: a kept form is used only for exactly the bytes it was made from.
///
/// A form is made (at a high level, once) when the same bytes are rendered a second time: a
/// board only its author sees costs no more than it did. Two forms are kept per key, so that an
/// author reading their own board between others does not push out everyone else's.
final class SharedDeflates: Sendable {
    private struct Kept {
        let bytes: [UInt8]
        let run: Gzip.DeflatedRun
    }

    private struct Forms {
        var kept: [Kept] = []
        /// The last render that matched no form, waiting to be seen again.
        var candidate: [UInt8]?
        var cost: Int { kept.reduce(0) { $0 + $1.bytes.count + $1.run.deflated.count } + (candidate?.count ?? 0) }
    }

    private let forms: Mutex<LRUCache<String, Forms>>
    /// What the kept forms hold now, in bytes (for the operator).
    var keptBytes: Int { forms.withLock { $0.totalCost } }
    /// Reused, made (tests count them).
    let reused = Atomic<Int>(0)
    let made = Atomic<Int>(0)
    static let formsPerKey = 2

    /// The budget counts every form and candidate; a board of 20 posts is about 80 KB plain.
    init(maximumEntries: Int = 2_000, maximumBytes: Int = 32 << 20) {
        forms = Mutex(LRUCache(maximumCount: maximumEntries, maximumCost: maximumBytes))
    }

    /// The kept deflated form of `fragment` (whose holes hold `HTMLFragment.Hole`'s placeholder),
    /// made now if these bytes were rendered for `key` before; nil the first time (the response
    /// compresses the fragment with the rest of its page).
    func run(for fragment: HTMLFragment, key: String) -> Gzip.DeflatedRun? {
        enum Found { case form(Gzip.DeflatedRun), secondTime, firstTime }
        let found = forms.withLock { forms -> Found in
            var entry = forms.value(for: key) ?? Forms()
            if let same = entry.kept.first(where: { sameBytes($0.bytes, fragment.bytes) }) { return .form(same.run) }
            if let candidate = entry.candidate, sameBytes(candidate, fragment.bytes) { return .secondTime }
            entry.candidate = fragment.bytes // the kept board's own array (`Renderer.fragment` sizes it exactly)
            forms.set(entry, for: key, cost: entry.cost)
            return .firstTime
        }
        switch found {
        case .form(let run):
            reused.add(1, ordering: .relaxed)
            return run
        case .firstTime:
            return nil
        case .secondTime:
            guard let run = Gzip.DeflatedRun(fragment.bytes, holes: fragment.holes, holeLength: HTMLFragment.Hole.length, level: 6)
            else { return nil }
            made.add(1, ordering: .relaxed)
            forms.withLock { forms in
                var entry = forms.value(for: key) ?? Forms()
                entry.kept.insert(Kept(bytes: fragment.bytes, run: run), at: 0)
                entry.kept = Array(entry.kept.prefix(Self.formsPerKey))
                entry.candidate = nil
                forms.set(entry, for: key, cost: entry.cost)
            }
            return run
        }
    }
}

/// Byte for byte, as `memcmp` compares (a board or a page is tens of kilobytes; comparing them
/// element by element cost several instructions a byte). One array against itself (a kept
/// board shown again) is not compared at all.
func sameBytes(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    guard a.count == b.count else { return false }
    return a.withUnsafeBufferPointer { x in b.withUnsafeBufferPointer { y in
        x.count == 0 || x.baseAddress == y.baseAddress || memcmp(x.baseAddress!, y.baseAddress!, x.count) == 0
    } }
}
