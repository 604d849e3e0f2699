import CZlib
import Synchronization
import HTTPServer

/// A page's parts deflated ahead of time (a city's weather, a kept board), and the compressor
/// that puts them in a page's gzip body as they are, compressing only the rest.
extension Gzip {
    /// Bytes deflated once, ahead of time, to be spliced into many responses: raw deflate data with
    /// a window of its own (it refers to nothing before it), ending with a sync flush on a byte
    /// boundary and not final, so that any deflate data may follow it.
    struct DeflatedRun: Sendable {
        /// The plain bytes' length and CRC-32, which the gzip trailer needs.
        let length: Int
        let crc: UInt32
        let deflated: [UInt8]
        init(_ bytes: [UInt8], level: Int32 = 9) {
            length = bytes.count
            crc = Gzip.crc32(bytes)
            deflated = Gzip.deflateRun(bytes, final: false, level: level).compacted()
        }
    }

    /// A `DeflatedRun` found at `offset` in a body: a compressor splices its deflated form in
    /// instead of compressing those bytes again.
    struct Piece: Sendable {
        let offset: Int
        let run: DeflatedRun

        init(offset: Int, run: DeflatedRun) {
            self.offset = offset
            self.run = run
        }
    }

    /// `body` as one gzip member, splicing in `pieces` (offsets into `body`) and compressing
    /// only what lies between them, at `level`. The result holds the pieces' deflated bytes
    /// where they are kept (parts of its own between them), not copies.
    static func compress(_ body: ResponseBody, reusing pieces: [Piece], level: Int32, storingGapsUnder: Int = 0) -> ResponseBody {
        var out = ResponseBody(header)
        let (deflated, crc) = deflate(body, reusing: pieces, final: true, level: level, storingGapsUnder: storingGapsUnder)
        out.append(deflated)
        var trailer: [UInt8] = []
        appendTrailer(&trailer, crc: crc, length: body.count)
        out.append(trailer)
        return out
    }

    /// `bytes` as one gzip member, splicing in `pieces`, in one array.
    static func compress(_ bytes: [UInt8], reusing pieces: [Piece], level: Int32, storingGapsUnder: Int = 0) -> [UInt8] {
        compress(ResponseBody(bytes), reusing: pieces, level: level, storingGapsUnder: storingGapsUnder).joined()
    }

    /// Raw deflate data for `body` with `pieces` (offsets into `body`) spliced in, and the CRC-32
    /// of `body`. The stretches between pieces go through one stream, fully flushed before each
    /// piece: after a full flush the stream refers to nothing before it, so what follows a piece
    /// cannot point into bytes the decoder got from the piece. A piece that overlaps another or
    /// runs past the end is compressed like the rest.
    ///
    /// A stretch shorter than `storingGapsUnder` goes out as a stored block instead: each
    /// stretch ends a block, and zlib builds its Huffman trees for every block whatever its size,
    /// which for the few hundred bytes between two pieces costs more than the page's own render. Nothing compressed refers across it: the
    /// stream was fully flushed before, and the bytes never enter zlib's history.
    static func deflate(_ body: ResponseBody, reusing pieces: [Piece], final: Bool, level: Int32,
                               storingGapsUnder: Int = 0) -> (deflated: ResponseBody, crc: UInt32) {
        withDeflateStream(level: level) { deflate(body, reusing: pieces, final: final, storingGapsUnder: storingGapsUnder, through: &$0) }
            ?? (ResponseBody(storedBlocks(body.bytes(in: 0..<body.count)[...], final: final)), crc32(body.bytes(in: 0..<body.count)))
    }

    private static func deflate(_ body: ResponseBody, reusing pieces: [Piece], final: Bool, storingGapsUnder: Int,
                                through stream: inout z_stream) -> (deflated: ResponseBody, crc: UInt32) {
        var crc: UInt32 = 0
        func addCRC(_ range: Range<Int>) {
            body.forEachStretch(in: range) { crc = UInt32(CZlib.crc32(UInt(crc), $0.baseAddress, UInt32($0.count))) }
        }
        var result = ResponseBody()
        var out: [UInt8] = []
        var zlibFailed = false
        out.reserveCapacity(body.count / 3 + 64)
        /// What zlib wrote since the last piece, as a part of the result.
        func endOwnPart() {
            result.append(out)
            out = []
        }
        func run(_ range: Range<Int>, flush: Int32) {
            if range.count < storingGapsUnder, flush == Z_FULL_FLUSH || flush == Z_FINISH {
                out += storedBlocks(body.bytes(in: range)[...], final: flush == Z_FINISH)
            } else if range.isEmpty {
                if !deflateInto(&out, &stream, UnsafeBufferPointer(start: nil, count: 0), 0..<0, flush: flush) { zlibFailed = true }
            } else {
                var position = range.lowerBound
                body.forEachStretch(in: range) { stretch in
                    position += stretch.count
                    guard !zlibFailed else { return }
                    if !deflateInto(&out, &stream, stretch, 0..<stretch.count, flush: position == range.upperBound ? flush : Z_NO_FLUSH) {
                        zlibFailed = true
                    }
                }
            }
            addCRC(range)
        }
        var position = 0
        for piece in pieces.sorted(by: { $0.offset < $1.offset })
        where piece.offset >= position && piece.offset + piece.run.length <= body.count {
            if piece.offset > position { run(position..<piece.offset, flush: Z_FULL_FLUSH) }
            endOwnPart()
            result.append(storage: result.add(storage: piece.run.deflated), 0..<piece.run.deflated.count)
            crc = piece.offset == 0 ? piece.run.crc : crc32Combine(crc, piece.run.crc, secondLength: piece.run.length)
            position = piece.offset + piece.run.length
        }
        if final {
            run(position..<body.count, flush: Z_FINISH)
        } else if position < body.count {
            run(position..<body.count, flush: Z_SYNC_FLUSH)
        }
        endOwnPart()
        if zlibFailed {
            return (ResponseBody(storedBlocks(body.bytes(in: 0..<body.count)[...], final: final)), crc32(body.bytes(in: 0..<body.count)))
        }
        return (result, crc)
    }
}

/// Stretches many pages share (`HTML.endShared`: a layout's head for a page and language),
/// deflated once per content and kept, least recently used first out: deflating a stretch of
/// two kilobytes costs more than rendering the page (zlib's per-block work is most of it), and
/// every reader of a page in a language shows the same one. The content is the key, so no
/// kept run can be another page's. A head holds what a request chose (a search, a query in the
/// language links), so a stretch is kept only once it is seen again, or when a kept page shows
/// it: addresses made up one per request cost what they did before and push out nothing kept.
final class SharedStretches: Sendable {
    private struct Content: Hashable {
        let bytes: [UInt8]
        func hash(into hasher: inout Hasher) { bytes.withUnsafeBytes { hasher.combine(bytes: $0) } }
    }
    private struct State: ~Copyable {
        var kept = LRUCache<Content, Gzip.DeflatedRun>(maximumCount: 8_000, maximumCost: 16 << 20)
        /// Stretches seen once, by hash; forgotten all at once past `seenAtMost`.
        var seen = Set<Int>()
    }
    private let state = Mutex(State())
    static let seenAtMost = 32_768

    /// The stretch's run, made now if it is seen for the second time or `shared` says a kept
    /// page shows it; nil the first time (the caller compresses it with the rest).
    func run(for bytes: [UInt8], shared: Bool = false) -> Gzip.DeflatedRun? {
        let content = Content(bytes: bytes)
        let hash = content.hashValue
        let known = state.withLock { state -> (run: Gzip.DeflatedRun?, admit: Bool) in
            if let run = state.kept.value(for: content) { return (run, true) }
            if shared || state.seen.remove(hash) != nil { return (nil, true) }
            if state.seen.count >= Self.seenAtMost { state.seen.removeAll() }
            state.seen.insert(hash)
            return (nil, false)
        }
        guard known.run == nil else { return known.run }
        guard known.admit else { return nil }
        let run = Gzip.DeflatedRun(bytes, level: 6)
        state.withLock { $0.kept.set(run, for: content, cost: ResidentBytes.array(bytes) + ResidentBytes.array(run.deflated)) }
        return run
    }

    /// What the kept runs hold, in bytes.
    var keptBytes: Int { state.withLock { $0.kept.totalCost } }
    /// The most it may hold.
    var byteBound: Int { state.withLock { $0.kept.maximumCost } }
}
