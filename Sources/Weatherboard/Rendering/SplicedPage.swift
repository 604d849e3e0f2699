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

    /// The bytes it holds, plain and deflated (what a cache counts it as).
    var byteCount: Int {
        runs.reduce(0) { $0 + $1.count } + deflatedRuns.reduce(0) { $0 + $1.count }
    }

    init(_ page: RenderedPage, hole: [UInt8]) {
        let bytes = page.bytes
        var runs: [[UInt8]] = []
        var starts: [Int] = []
        var start = 0
        var index = 0
        while index + hole.count <= bytes.count {
            if bytes[index] == hole[0] && bytes[index..<(index + hole.count)].elementsEqual(hole) {
                runs.append(Array(bytes[start..<index]))
                starts.append(start)
                index += hole.count
                start = index
            } else {
                index += 1
            }
        }
        runs.append(Array(bytes[start...]))
        starts.append(start)
        self.runs = runs
        // Each run deflated once, with the fragments deflated ahead of time spliced in.
        var deflatedRuns: [[UInt8]] = []
        var runCRCs: [UInt32] = []
        for (index, run) in runs.enumerated() {
            let pieces = page.deflatedPieces.compactMap { piece -> Gzip.Piece? in
                let offset = piece.offset - starts[index]
                return offset >= 0 && offset + piece.run.length <= run.count ? Gzip.Piece(offset: offset, run: piece.run) : nil
            }
            let (deflated, crc) = Gzip.deflate(run[...], reusing: pieces, final: index == runs.count - 1, level: 6)
            deflatedRuns.append(deflated)
            runCRCs.append(crc)
        }
        self.deflatedRuns = deflatedRuns
        self.runCRCs = runCRCs
    }

    /// The page with `value` in every hole.
    func bytes(filling value: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(runs.reduce(0) { $0 + $1.count } + value.count * (runs.count - 1))
        for (index, run) in runs.enumerated() {
            if index > 0 { out += value }
            out += run
        }
        return out
    }

    /// The page with `value` in every hole, as gzip.
    func gzip(filling value: [UInt8]) -> [UInt8] {
        var out = Gzip.header
        out.reserveCapacity(deflatedRuns.reduce(32) { $0 + $1.count } + (value.count + 5) * (runs.count - 1))
        let valueBlock = Gzip.storedBlock(value, final: false)
        let valueCRC = Gzip.crc32(value)
        var crc: UInt32 = 0
        var length = 0
        for index in runs.indices {
            if index > 0 {
                out += valueBlock
                crc = Gzip.crc32Combine(crc, valueCRC, secondLength: value.count)
                length += value.count
            }
            out += deflatedRuns[index]
            crc = index == 0 ? runCRCs[0] : Gzip.crc32Combine(crc, runCRCs[index], secondLength: runs[index].count)
            length += runs[index].count
        }
        Gzip.appendTrailer(&out, crc: crc, length: length)
        return out
    }
}
