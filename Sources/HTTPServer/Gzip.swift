import CZlib

/// gzip (RFC 1952) through zlib, including what it takes to make one gzip body of parts
/// compressed ahead of time: raw deflate runs that end on a byte boundary, stored blocks, and
/// CRC-32 combination.
public enum Gzip {
    /// `bytes` as one gzip member.
    /// zlib's memLevel: a hash table of 2^(memoryLevel + 7) entries. Its default, 8, is sized for
    /// long inputs; for a page (a few to a few hundred kilobytes) 6 gives the same output at
    /// level 6 while a stream allocates and clears a quarter of the table (starting a stream
    /// cost about 65 µs against 20, measured on a page with Python's zlib; docs/performance.md).
    static let memoryLevel: Int32 = 6

    public static func compress(_ bytes: [UInt8], level: Int32 = 6) -> [UInt8] {
        var out = header
        out += deflateRun(bytes, final: true, level: level)
        appendTrailer(&out, crc: crc32(bytes), length: bytes.count)
        return out
    }

    /// The fixed 10-byte gzip header: deflate, no name, no time, unknown OS.
    public static let header: [UInt8] = [0x1F, 0x8B, 0x08, 0x00, 0, 0, 0, 0, 0x00, 0xFF]

    /// Raw deflate data for `bytes` with its own window. Not `final`: ends with a sync flush, on a
    /// byte boundary, so that more deflate data can follow. `final`: ends the stream.
    public static func deflateRun(_ bytes: [UInt8], final: Bool, level: Int32 = 6) -> [UInt8] {
        var stream = z_stream()
        guard deflateInit2_(&stream, level, Z_DEFLATED, -15, memoryLevel, Z_DEFAULT_STRATEGY, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK
        else { return storedBlocks(bytes[...], final: final) }
        defer { deflateEnd(&stream) }
        var out: [UInt8] = []
        out.reserveCapacity(Int(deflateBound(&stream, UInt(bytes.count))) + 16)
        let deflated = bytes.withUnsafeBufferPointer { deflateInto(&out, &stream, $0, 0..<$0.count, flush: final ? Z_FINISH : Z_SYNC_FLUSH) }
        return deflated ? out : storedBlocks(bytes[...], final: final)
    }

    /// An uncompressed deflate block, starting on a byte boundary and ending on one. At most
    /// 65,535 bytes.
    public static func storedBlock(_ bytes: [UInt8], final: Bool) -> [UInt8] {
        let length = UInt16(min(bytes.count, 65_535))
        var out: [UInt8] = [final ? 0x01 : 0x00, UInt8(length & 0xFF), UInt8(length >> 8), UInt8(~length & 0xFF), UInt8(~length >> 8)]
        out += bytes.prefix(Int(length))
        return out
    }

    public static func crc32(_ bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBufferPointer { UInt32(CZlib.crc32(0, $0.baseAddress, UInt32($0.count))) }
    }

    /// The CRC-32 of A followed by B, from the CRCs of each and B's length.
    public static func crc32Combine(_ first: UInt32, _ second: UInt32, secondLength: Int) -> UInt32 {
        UInt32(CZlib.crc32_combine(UInt(first), UInt(second), off_t(secondLength)))
    }

    /// The gzip trailer: CRC-32 and length modulo 2^32, little-endian.
    public static func appendTrailer(_ out: inout [UInt8], crc: UInt32, length: Int) {
        let size = UInt32(truncatingIfNeeded: length)
        for shift in stride(from: 0, to: 32, by: 8) { out.append(UInt8(truncatingIfNeeded: crc >> UInt32(shift))) }
        for shift in stride(from: 0, to: 32, by: 8) { out.append(UInt8(truncatingIfNeeded: size >> UInt32(shift))) }
    }

    /// Whether a response of this type is worth compressing (text, not images already compressed).
    public static func isCompressible(contentType: String) -> Bool {
        let type = contentType.lowercased()
        return type.hasPrefix("text/") || type.hasPrefix("image/svg+xml") || type.hasPrefix("application/javascript")
            || type.hasPrefix("application/json") || type.hasPrefix("application/atom+xml") || type.hasPrefix("application/xml")
    }
}

extension Gzip {
    /// Bytes deflated once, ahead of time, to be spliced into many responses: raw deflate data with
    /// a window of its own (it refers to nothing before it), ending with a sync flush on a byte
    /// boundary and not final, so that any deflate data may follow it.
    public struct DeflatedRun: Sendable {
        /// The plain bytes' length and CRC-32, which the gzip trailer needs.
        public let length: Int
        public let crc: UInt32
        public let deflated: [UInt8]
        public init(_ bytes: [UInt8], level: Int32 = 9) {
            length = bytes.count
            crc = Gzip.crc32(bytes)
            deflated = Gzip.deflateRun(bytes, final: false, level: level)
        }
    }

    /// A `DeflatedRun` found at `offset` in a body: a compressor splices its deflated form in
    /// instead of compressing those bytes again.
    public struct Piece: Sendable {
        public let offset: Int
        public let run: DeflatedRun

        public init(offset: Int, run: DeflatedRun) {
            self.offset = offset
            self.run = run
        }
    }

    /// Raw deflate data (a run that need not be final) inflated, if it makes exactly `length` bytes.
    public static func inflateRaw(_ deflated: [UInt8], expecting length: Int) -> [UInt8]? {
        var stream = z_stream()
        guard inflateInit2_(&stream, -15, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else { return nil }
        defer { inflateEnd(&stream) }
        var out = [UInt8](repeating: 0, count: length + 1)
        var input = deflated
        let (status, produced) = input.withUnsafeMutableBufferPointer { inBuffer in
            out.withUnsafeMutableBufferPointer { outBuffer -> (Int32, Int) in
                stream.next_in = inBuffer.baseAddress
                stream.avail_in = UInt32(inBuffer.count)
                stream.next_out = outBuffer.baseAddress
                stream.avail_out = UInt32(outBuffer.count)
                let status = inflate(&stream, Z_SYNC_FLUSH)
                return (status, outBuffer.count - Int(stream.avail_out))
            }
        }
        guard status == Z_OK || status == Z_STREAM_END || status == Z_BUF_ERROR, stream.avail_in == 0, produced == length else { return nil }
        out.removeLast()
        return out
    }

    /// Deflates `input[range]` with `flush` into `out`, growing it until zlib has said everything.
    /// False when zlib reports an error or stops making progress: the caller sends the bytes
    /// uncompressed rather than loop.
    static func deflateInto(_ out: inout [UInt8], _ stream: inout z_stream, _ input: UnsafeBufferPointer<UInt8>, _ range: Range<Int>,
                            flush: Int32) -> Bool {
        stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress.map { $0 + range.lowerBound })
        stream.avail_in = UInt32(range.count)
        repeat {
            let room = Int(deflateBound(&stream, UInt(stream.avail_in))) + 64
            let start = out.count
            let unread = stream.avail_in
            out.append(contentsOf: repeatElement(0, count: room))
            let status = out.withUnsafeMutableBufferPointer { buffer in
                stream.next_out = buffer.baseAddress! + start
                stream.avail_out = UInt32(room)
                return CZlib.deflate(&stream, flush)
            }
            out.removeLast(Int(stream.avail_out))
            // Z_BUF_ERROR is "nothing left to do"; any other error leaves the stream unusable.
            guard status == Z_OK || status == Z_STREAM_END || status == Z_BUF_ERROR else { return false }
            let moved = stream.avail_in != unread || out.count > start
            if !moved && (stream.avail_out == 0 || stream.avail_in > 0) { return false }
        } while stream.avail_out == 0 || stream.avail_in > 0
        return true
    }

    /// `body` as one gzip member, splicing in `pieces` (offsets into `body`) and compressing
    /// only what lies between them, at `level`. The result holds the pieces' deflated bytes
    /// where they are kept (parts of its own between them), not copies.
    public static func compress(_ body: ResponseBody, reusing pieces: [Piece], level: Int32, storingGapsUnder: Int = 0) -> ResponseBody {
        var out = ResponseBody(header)
        let (deflated, crc) = deflate(body, reusing: pieces, final: true, level: level, storingGapsUnder: storingGapsUnder)
        out.append(deflated)
        var trailer: [UInt8] = []
        appendTrailer(&trailer, crc: crc, length: body.count)
        out.append(trailer)
        return out
    }

    /// `bytes` as one gzip member, splicing in `pieces`, in one array.
    public static func compress(_ bytes: [UInt8], reusing pieces: [Piece], level: Int32, storingGapsUnder: Int = 0) -> [UInt8] {
        compress(ResponseBody(bytes), reusing: pieces, level: level, storingGapsUnder: storingGapsUnder).joined()
    }

    /// Raw deflate data for `body` with `pieces` (offsets into `body`) spliced in, and the CRC-32
    /// of `body`. The stretches between pieces go through one stream, fully flushed before each
    /// piece: after a full flush the stream refers to nothing before it, so what follows a piece
    /// cannot point into bytes the decoder got from the piece. A piece that overlaps another or
    /// runs past the end is compressed like the rest.
    ///
    /// A stretch shorter than `storingGapsUnder` goes out as a stored block instead: each
    /// stretch ends a block, and zlib builds its Huffman trees for every block whatever its size
    /// (about 78 K instructions under callgrind), which for the few hundred bytes between two
    /// pieces costs more than the page's own render. Nothing compressed refers across it: the
    /// stream was fully flushed before, and the bytes never enter zlib's history.
    public static func deflate(_ body: ResponseBody, reusing pieces: [Piece], final: Bool, level: Int32,
                               storingGapsUnder: Int = 0) -> (deflated: ResponseBody, crc: UInt32) {
        var crc: UInt32 = 0
        func addCRC(_ range: Range<Int>) {
            body.forEachStretch(in: range) { crc = UInt32(CZlib.crc32(UInt(crc), $0.baseAddress, UInt32($0.count))) }
        }
        var stream = z_stream()
        guard deflateInit2_(&stream, level, Z_DEFLATED, -15, memoryLevel, Z_DEFAULT_STRATEGY, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK
        else {
            addCRC(0..<body.count)
            return (ResponseBody(storedBlocks(body.bytes(in: 0..<body.count)[...], final: final)), crc)
        }
        defer { deflateEnd(&stream) }
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

    /// `bytes` in stored blocks of up to 65,535 bytes each, whatever their number (what is left
    /// when zlib cannot start or fails).
    static func storedBlocks(_ bytes: ArraySlice<UInt8>, final: Bool) -> [UInt8] {
        var out: [UInt8] = []
        var rest = bytes
        repeat {
            let chunk = rest.prefix(65_535)
            rest = rest.dropFirst(chunk.count)
            out += storedBlock(Array(chunk), final: final && rest.isEmpty)
        } while !rest.isEmpty
        return out
    }
}
