import CZlib

/// gzip (RFC 1952) through zlib, including the pieces needed to splice a gzip body from parts
/// compressed ahead of time: raw deflate runs that end on a byte boundary, stored blocks, and
/// CRC-32 combination.
public enum Gzip {
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
        var stream = z_stream()
        guard deflateInit2_(&stream, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK
        else { return final ? storedBlock(bytes, final: true) : storedBlock(bytes, final: false) }
        defer { deflateEnd(&stream) }
        var out = [UInt8](repeating: 0, count: Int(deflateBound(&stream, UInt(bytes.count))) + 16)
        var input = bytes
        let produced = input.withUnsafeMutableBufferPointer { inBuffer in
            out.withUnsafeMutableBufferPointer { outBuffer -> Int in
                stream.next_in = inBuffer.baseAddress
                stream.avail_in = UInt32(inBuffer.count)
                stream.next_out = outBuffer.baseAddress
                stream.avail_out = UInt32(outBuffer.count)
                _ = deflate(&stream, final ? Z_FINISH : Z_SYNC_FLUSH)
                return outBuffer.count - Int(stream.avail_out)
            }
        }
        out.removeSubrange(produced...)
        return out
    }

    /// An uncompressed deflate block (what is spliced in per response: a token), starting on a
    /// byte boundary and ending on one. At most 65,535 bytes.
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
