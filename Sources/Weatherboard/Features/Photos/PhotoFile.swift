import Foundation

/// What an upload really is, read from its bytes (never from its name or declared type): one of
/// the four formats a phone sends, each container walked to its end. Anything else, or anything
/// more (a ZIP or HTML after a JPEG's end: a polyglot), is refused before a decoder sees it.
/// The walks look at each byte at most once.
enum PhotoFormat: Int32, Sendable {
    case jpeg = 1, png = 2, webp = 3, heif = 4

    /// What is wrong with a file that is not taken.
    enum Problem: Error {
        /// Not one of the four formats, whatever its name says.
        case notAPhoto
        /// Cut short or corrupt.
        case damaged
        /// Something else rides after the picture (a polyglot).
        case moreThanAPhoto
    }

    /// The format of `bytes`, or why it is not a photo we take.
    static func recognise(_ bytes: ArraySlice<UInt8>) -> Result<PhotoFormat, PhotoFormat.Problem> {
        bytes.withUnsafeBufferPointer { buffer in
            if buffer.starts(with: [0xFF, 0xD8, 0xFF]) {
                return checkJPEG(buffer).map { .jpeg }
            }
            if buffer.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) {
                return checkPNG(buffer).map { .png }
            }
            if buffer.count >= 12 && buffer.starts(with: Array("RIFF".utf8)) && buffer[8..<12].elementsEqual("WEBP".utf8) {
                return checkWebP(buffer).map { .webp }
            }
            if buffer.count >= 12 && buffer[4..<8].elementsEqual("ftyp".utf8) {
                return checkHEIF(buffer).map { .heif }
            }
            return .failure(.notAPhoto)
        }
    }

    /// Bytes after a container's end that are tolerated: padding some cameras write.
    private static func onlyPadding(_ buffer: UnsafeBufferPointer<UInt8>, from: Int) -> Bool {
        buffer.count - from <= 64 && buffer[from...].allSatisfy { $0 == 0 || $0 == 0xFF }
    }

    private static func uint32(_ buffer: UnsafeBufferPointer<UInt8>, _ at: Int) -> Int {
        Int(buffer[at]) << 24 | Int(buffer[at + 1]) << 16 | Int(buffer[at + 2]) << 8 | Int(buffer[at + 3])
    }

    /// Marker segments (ITU T.81 B.1) to EOI; entropy-coded data after each SOS is skipped to the
    /// next marker (`FF` followed by neither `00`, a restart marker nor fill).
    private static func checkJPEG(_ buffer: UnsafeBufferPointer<UInt8>) -> Result<Void, PhotoFormat.Problem> {
        var i = 2
        while i + 1 < buffer.count {
            guard buffer[i] == 0xFF else { return .failure(.damaged) }
            let marker = buffer[i + 1]
            if marker == 0xFF { i += 1; continue } // fill byte
            i += 2
            switch marker {
            case 0xD9: // EOI
                return onlyPadding(buffer, from: i) ? .success(()) : .failure(.moreThanAPhoto)
            case 0xD0...0xD7, 0x01:
                continue
            default:
                guard i + 1 < buffer.count else { return .failure(.damaged) }
                let length = Int(buffer[i]) << 8 | Int(buffer[i + 1])
                guard length >= 2, i + length <= buffer.count else { return .failure(.damaged) }
                i += length
                if marker == 0xDA { // SOS: scan data up to the next real marker
                    while i + 1 < buffer.count {
                        if buffer[i] == 0xFF, buffer[i + 1] != 0, !(0xD0...0xD7).contains(buffer[i + 1]), buffer[i + 1] != 0xFF { break }
                        i += 1
                    }
                }
            }
        }
        return .failure(.damaged) // no EOI: truncated
    }

    /// Chunks (PNG §5.3) to IEND.
    private static func checkPNG(_ buffer: UnsafeBufferPointer<UInt8>) -> Result<Void, PhotoFormat.Problem> {
        var i = 8
        while i + 12 <= buffer.count {
            let length = uint32(buffer, i)
            guard length <= buffer.count - i - 12 else { return .failure(.damaged) }
            let isEnd = buffer[(i + 4)..<(i + 8)].elementsEqual("IEND".utf8)
            i += 12 + length
            if isEnd { return onlyPadding(buffer, from: i) ? .success(()) : .failure(.moreThanAPhoto) }
        }
        return .failure(.damaged)
    }

    /// A RIFF file's declared size must be the file (RFC 9649 §2.5).
    private static func checkWebP(_ buffer: UnsafeBufferPointer<UInt8>) -> Result<Void, PhotoFormat.Problem> {
        let size = Int(buffer[4]) | Int(buffer[5]) << 8 | Int(buffer[6]) << 16 | Int(buffer[7]) << 24
        if size + 8 > buffer.count { return .failure(.damaged) }
        return onlyPadding(buffer, from: size + 8) ? .success(()) : .failure(.moreThanAPhoto)
    }

    /// ISO BMFF boxes (ISO/IEC 14496-12 §4.2) covering the file, the first an `ftyp` naming a
    /// HEIF brand.
    private static let heifBrands: Set<String> = ["heic", "heix", "heim", "heis", "hevc", "hevx", "mif1", "msf1"]
    private static func checkHEIF(_ buffer: UnsafeBufferPointer<UInt8>) -> Result<Void, PhotoFormat.Problem> {
        let ftypSize = uint32(buffer, 0)
        guard ftypSize >= 16, ftypSize <= buffer.count else { return .failure(.damaged) }
        var brands: [String] = [String(decoding: buffer[8..<12], as: UTF8.self)]
        var b = 16
        while b + 4 <= ftypSize {
            brands.append(String(decoding: buffer[b..<(b + 4)], as: UTF8.self))
            b += 4
        }
        guard brands.contains(where: heifBrands.contains) else { return .failure(.notAPhoto) }
        var i = 0
        while i < buffer.count {
            guard buffer.count - i >= 8 else { return .failure(.moreThanAPhoto) }
            var size = uint32(buffer, i)
            if size == 1 { // a 64-bit size follows the type
                guard buffer.count - i >= 16 else { return .failure(.damaged) }
                size = uint32(buffer, i + 8) << 32 | uint32(buffer, i + 12)
                guard size >= 16 else { return .failure(.damaged) }
            } else if size == 0 { // to the end of the file
                size = buffer.count - i
            }
            guard size >= 8, size <= buffer.count - i else { return .failure(.damaged) }
            i += size
        }
        return .success(())
    }
}

/// A WebP's chunks (RFC 9649 §2.7) without its metadata: `EXIF`, `XMP ` and `ICCP` dropped and
/// their flags cleared in `VP8X`. libvips 8.14's WebP writer adds EXIF and XMP even when told to
/// strip them; what the site writes is checked here, not trusted to an option.
enum WebPMetadata {
    static func stripped(_ bytes: [UInt8]) -> [UInt8] {
        guard bytes.count >= 12, bytes.starts(with: Array("RIFF".utf8)), bytes[8..<12].elementsEqual("WEBP".utf8) else { return bytes }
        var chunks: [UInt8] = []
        var i = 12
        while i + 8 <= bytes.count {
            let type = String(decoding: bytes[i..<(i + 4)], as: UTF8.self)
            let size = Int(bytes[i + 4]) | Int(bytes[i + 5]) << 8 | Int(bytes[i + 6]) << 16 | Int(bytes[i + 7]) << 24
            let end = i + 8 + size + (size & 1)
            guard end <= bytes.count else { return bytes }
            switch type {
            case "EXIF", "XMP ", "ICCP":
                break
            case "VP8X":
                var chunk = Array(bytes[i..<end])
                chunk[8] &= ~UInt8(0x20 | 0x08 | 0x04) // ICC, EXIF, XMP
                chunks += chunk
            default:
                chunks += bytes[i..<end]
            }
            i = end
        }
        let size = UInt32(4 + chunks.count)
        return Array("RIFF".utf8) + withUnsafeBytes(of: size.littleEndian, Array.init) + Array("WEBP".utf8) + chunks
    }
}
