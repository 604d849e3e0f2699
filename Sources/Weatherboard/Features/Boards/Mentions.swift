import Foundation

/// `@username` in a post's text: an `@` at the start or after a character that cannot be part of
/// a username, then a username's characters (ASCII letters, digits, `_`; 3 to 20 of them, not
/// followed by another). Notices and the links in a shown post both find them here.
enum Mentions {
    /// The mentioned usernames, as written, each once (whatever the case), in order.
    static func usernames(in body: String) -> [String] {
        var text = body // `withUTF8` needs a mutable string
        return text.withUTF8 { bytes in
            var found: [String] = []
            var index = 0
            while index < bytes.count {
                guard let length = length(at: index, in: bytes) else { index += 1; continue }
                let name = String(decoding: UnsafeBufferPointer(rebasing: bytes[index + 1 ..< index + length]), as: UTF8.self)
                if !found.contains(where: { $0.lowercased() == name.lowercased() }) { found.append(name) }
                index += length
            }
            return found
        }
    }

    /// The length of the mention (with its `@`) that starts at `index`, if one does.
    static func length(at index: Int, in bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        guard bytes[index] == UInt8(ascii: "@"), index == 0 || !isNameByte(bytes[index - 1]) else { return nil }
        var end = index + 1
        while end < bytes.count, end - index <= 21, isNameByte(bytes[end]) { end += 1 }
        let name = end - index - 1
        guard (3...20).contains(name), end == bytes.count || !isNameByte(bytes[end]) else { return nil }
        return end - index
    }

    private static func isNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"): true
        default: false
        }
    }
}
