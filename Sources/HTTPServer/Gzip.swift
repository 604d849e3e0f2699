import CZlib
import Synchronization

/// gzip (RFC 1952) through zlib, with the building blocks for a body made of parts compressed
/// at different times: raw deflate runs that end on a byte boundary, stored blocks, and CRC-32
/// combination.
public enum Gzip {
    /// zlib's memLevel: a hash table of 2^(memoryLevel + 7) entries. Its default, 8, is sized for
    /// long inputs; for a page (a few to a few hundred kilobytes) 6 gives the same output at
    /// level 6 while a stream allocates and clears a quarter of the table.
    public static let memoryLevel: Int32 = 6

    /// `bytes` as one gzip member.

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
        let deflated = withDeflateStream(level: level) { stream -> [UInt8]? in
            var out: [UInt8] = []
            out.reserveCapacity(Int(deflateBound(&stream, UInt(bytes.count))) + 16)
            let done = bytes.withUnsafeBufferPointer { deflateInto(&out, &stream, $0, 0..<$0.count, flush: final ? Z_FINISH : Z_SYNC_FLUSH) }
            return done ? out : nil
        }
        return deflated.flatMap { $0 } ?? storedBlocks(bytes[...], final: final)
    }

    /// Runs `body` with a raw deflate stream at `level` (no zlib header, `memoryLevel`), fresh
    /// as if just made; nil when zlib cannot make one. Streams are kept and reset for the next
    /// use: making one allocates a quarter of a megabyte, which costs more than deflating a few
    /// kilobytes and, freed at once, makes the allocator consolidate its free lists.
    package static func withDeflateStream<T>(level: Int32, _ body: (inout z_stream) -> T) -> T? {
        guard let stream = DeflateStream.take(level: level) else { return nil }
        defer { DeflateStream.give(stream) }
        return body(&stream.pointer.pointee)
    }

    /// A z_stream at a fixed address (zlib's state points back at it), kept between uses.
    private final class DeflateStream: @unchecked Sendable {
        // Safe to share: a stream is used by the one thread that took it from `idle`.
        let pointer = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        let level: Int32
        private var started = false
        /// Idle streams by level, at most a few per worker (the rest are ended).
        private static let idle = Mutex<[Int32: [DeflateStream]]>([:])

        private init?(level: Int32) {
            self.level = level
            pointer.initialize(to: z_stream())
            guard deflateInit2_(pointer, level, Z_DEFLATED, -15, memoryLevel, Z_DEFAULT_STRATEGY, ZLIB_VERSION,
                                Int32(MemoryLayout<z_stream>.size)) == Z_OK else { return nil }
            started = true
        }

        deinit {
            if started { deflateEnd(pointer) }
            pointer.deallocate()
        }

        static func take(level: Int32) -> DeflateStream? { idle.withLock { $0[level]?.popLast() } ?? DeflateStream(level: level) }

        static func give(_ stream: DeflateStream) {
            guard deflateReset(stream.pointer) == Z_OK else { return }
            let extra = idle.withLock { idle -> DeflateStream? in
                guard idle[stream.level, default: []].count < 32 else { return stream }
                idle[stream.level, default: []].append(stream)
                return nil
            }
            _ = extra // ended here, outside the lock
        }
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
    /// Deflates `input[range]` with `flush` into `out`, growing it until zlib has said everything.
    /// False when zlib reports an error or stops making progress: the caller sends the bytes
    /// uncompressed rather than loop.
    public static func deflateInto(_ out: inout [UInt8], _ stream: inout z_stream, _ input: UnsafeBufferPointer<UInt8>, _ range: Range<Int>,
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

    /// `bytes` in stored blocks of up to 65,535 bytes each, whatever their number (what is left
    /// when zlib cannot start or fails).
    public static func storedBlocks(_ bytes: ArraySlice<UInt8>, final: Bool) -> [UInt8] {
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
