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

    init(_ bytes: [UInt8], hole: [UInt8]) {
        var runs: [[UInt8]] = []
        var start = 0
        var index = 0
        while index + hole.count <= bytes.count {
            if bytes[index] == hole[0] && bytes[index..<(index + hole.count)].elementsEqual(hole) {
                runs.append(Array(bytes[start..<index]))
                index += hole.count
                start = index
            } else {
                index += 1
            }
        }
        runs.append(Array(bytes[start...]))
        self.runs = runs
        deflatedRuns = runs.indices.map { Gzip.deflateRun(runs[$0], final: $0 == runs.count - 1) }
        runCRCs = runs.map(Gzip.crc32)
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
