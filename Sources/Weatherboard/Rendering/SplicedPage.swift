import Foundation
import CSystem
import HTTPServer

/// A rendered page with holes where each visitor's own value goes (the CSRF token), kept both as
/// bytes and as gzip pieces: each run between holes deflated once, ahead of time; per response
/// only the value is added, as a stored block, and the CRCs are combined.
struct SplicedPage: Sendable {
    /// The page's bytes between the holes.
    let runs: [[UInt8]]
    /// Each run deflated with a sync flush (the last one ends the stream).
    let deflatedRuns: [[UInt8]]
    let runCRCs: [UInt32]
    /// Byte for byte the page it replaced (`init`'s `previous`), whose deflated runs it reuses.
    let isUnchanged: Bool

    /// The bytes it holds, plain and deflated (what a cache counts it as).
    var byteCount: Int {
        runs.reduce(0) { $0 + $1.count } + deflatedRuns.reduce(0) { $0 + $1.count }
    }

    /// `previous`: the page this one replaces; when the render came out byte for byte the same
    /// (a board whose times read the same, a city with no posts), its deflated runs are reused
    /// instead of deflating the page again.
    init(_ page: RenderedPage, hole: [UInt8], previous: SplicedPage? = nil) {
        let bytes = page.body.joined()
        var runs: [[UInt8]] = []
        var starts: [Int] = []
        var start = 0
        // memmem: a byte-by-byte comparison cost ten instructions a byte of every kept page.
        bytes.withUnsafeBytes { page in
            hole.withUnsafeBytes { hole in
                guard let base = page.baseAddress, !hole.isEmpty else { return }
                while start + hole.count <= page.count,
                      let found = csystem_memmem(base + start, page.count - start, hole.baseAddress!, hole.count) {
                    let index = base.distance(to: UnsafeRawPointer(found))
                    runs.append(Array(bytes[start..<index]))
                    starts.append(start)
                    start = index + hole.count
                }
            }
        }
        // Copied even when it is the whole page (no hole): `Array` of a whole array's slice is
        // that array, and a render's array has room to spare that the cache would hold.
        runs.append([UInt8](unsafeUninitializedCapacity: bytes.count - start) { buffer, initialized in
            initialized = buffer.initialize(fromContentsOf: bytes[start...])
        })
        starts.append(start)
        self.runs = runs
        if let previous, previous.runs.count == runs.count, zip(previous.runs, runs).allSatisfy(sameBytes) {
            deflatedRuns = previous.deflatedRuns
            runCRCs = previous.runCRCs
            isUnchanged = true
            return
        }
        isUnchanged = false
        // Each run deflated once, with the fragments deflated ahead of time spliced in.
        var deflatedRuns: [[UInt8]] = []
        var runCRCs: [UInt32] = []
        for (index, run) in runs.enumerated() {
            let pieces = page.deflatedPieces.compactMap { piece -> Gzip.Piece? in
                let offset = piece.offset - starts[index]
                return offset >= 0 && offset + piece.run.length <= run.count ? Gzip.Piece(offset: offset, run: piece.run) : nil
            }
            let (deflated, crc) = Gzip.deflate(ResponseBody(run), reusing: pieces, final: index == runs.count - 1, level: Self.level)
            deflatedRuns.append(deflated.joined())
            runCRCs.append(crc)
        }
        self.deflatedRuns = deflatedRuns
        self.runCRCs = runCRCs
    }

    /// The level the rest of a kept page is deflated at (its weather part was deflated at 9
    /// when it was rendered). Level 1 saved an eighth of an expired page's instructions and cost
    /// 7 % more bytes of what it deflates, on every response that page then serves
    /// (docs/performance.md, 2026-11-25).
    static let level: Int32 = 6

    /// The page with `value` in every hole: its runs as they are kept, the value between them.
    func body(filling value: [UInt8]) -> ResponseBody {
        var body = ResponseBody()
        let filling = body.add(storage: value)
        for (index, run) in runs.enumerated() {
            if index > 0 { body.append(storage: filling, 0..<value.count) }
            body.append(storage: body.add(storage: run), 0..<run.count)
        }
        return body
    }

    /// The page with `value` in every hole, as gzip: the deflated runs as they are kept, the
    /// value between them as a stored block.
    func gzip(filling value: [UInt8]) -> ResponseBody {
        var body = ResponseBody(Gzip.header)
        let valueBlock = Gzip.storedBlock(value, final: false)
        let filling = body.add(storage: valueBlock)
        let valueCRC = Gzip.crc32(value)
        var crc: UInt32 = 0
        var length = 0
        for index in runs.indices {
            if index > 0 {
                body.append(storage: filling, 0..<valueBlock.count)
                crc = Gzip.crc32Combine(crc, valueCRC, secondLength: value.count)
                length += value.count
            }
            body.append(storage: body.add(storage: deflatedRuns[index]), 0..<deflatedRuns[index].count)
            crc = index == 0 ? runCRCs[0] : Gzip.crc32Combine(crc, runCRCs[index], secondLength: runs[index].count)
            length += runs[index].count
        }
        var trailer: [UInt8] = []
        Gzip.appendTrailer(&trailer, crc: crc, length: length)
        body.append(trailer)
        return body
    }
}
