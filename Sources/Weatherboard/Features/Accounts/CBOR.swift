import Foundation

/// A CBOR value (RFC 8949) as WebAuthn uses it: attestation objects and COSE keys.
indirect enum CBOR: Equatable, Sendable {
    case unsigned(UInt64)
    /// The value -1 - n.
    case negative(UInt64)
    case bytes([UInt8])
    case text(String)
    case array([CBOR])
    case map([Pair])
    case bool(Bool)
    case null
    case undefined
    case float(Double)

    struct Pair: Equatable, Sendable {
        var key: CBOR
        var value: CBOR
    }

    /// The integer, when it is one that fits an `Int`.
    var int: Int? {
        switch self {
        case .unsigned(let n): return n <= UInt64(Int.max) ? Int(n) : nil
        case .negative(let n): return n <= UInt64(Int.max) ? -1 - Int(n) : nil
        default: return nil
        }
    }

    var byteString: [UInt8]? { if case .bytes(let b) = self { return b } else { return nil } }
    var string: String? { if case .text(let t) = self { return t } else { return nil } }

    /// A map's value for an integer key (COSE labels) or a text key (attestation objects).
    subscript(_ key: Int) -> CBOR? {
        guard case .map(let pairs) = self else { return nil }
        return pairs.first { $0.key.int == key }?.value
    }

    subscript(_ key: String) -> CBOR? {
        guard case .map(let pairs) = self else { return nil }
        return pairs.first { $0.key.string == key }?.value
    }
}

/// Reads CBOR with limits, so that no input, however built, costs more than its size: nesting
/// at most `maxDepth` deep, at most `maxItems` values in all, every length checked against
/// the bytes left before anything is allocated. Only definite lengths (CTAP2's canonical form);
/// tags, indefinite lengths and reserved values are refused.
struct CBORDecoder {
    struct Failure: Error, Equatable, CustomStringConvertible {
        let description: String
    }

    var maxDepth = 8
    var maxItems = 512

    /// The first value in `bytes` and how many bytes it took.
    func decode(_ bytes: ArraySlice<UInt8>) throws -> (value: CBOR, length: Int) {
        var reader = Reader(bytes: bytes, position: bytes.startIndex, items: 0, limits: self)
        let value = try reader.value(depth: 0)
        return (value, reader.position - bytes.startIndex)
    }

    /// `bytes` as exactly one value, with nothing after it.
    func decodeWhole(_ bytes: [UInt8]) throws -> CBOR {
        let (value, length) = try decode(bytes[...])
        guard length == bytes.count else { throw Failure(description: "\(bytes.count - length) bytes after the value") }
        return value
    }

    private struct Reader {
        let bytes: ArraySlice<UInt8>
        var position: Int
        var items: Int
        let limits: CBORDecoder

        mutating func byte() throws -> UInt8 {
            guard position < bytes.endIndex else { throw Failure(description: "truncated") }
            defer { position += 1 }
            return bytes[position]
        }

        mutating func take(_ count: UInt64) throws -> ArraySlice<UInt8> {
            guard count <= UInt64(bytes.endIndex - position) else { throw Failure(description: "a length of \(count) past the end") }
            defer { position += Int(count) }
            return bytes[position..<position + Int(count)]
        }

        /// The argument of a head whose additional information is `info` (RFC 8949 §3).
        mutating func argument(_ info: UInt8) throws -> UInt64 {
            switch info {
            case 0..<24: return UInt64(info)
            case 24: return UInt64(try byte())
            case 25: return try take(2).reduce(0) { $0 << 8 | UInt64($1) }
            case 26: return try take(4).reduce(0) { $0 << 8 | UInt64($1) }
            case 27: return try take(8).reduce(0) { $0 << 8 | UInt64($1) }
            default: throw Failure(description: "indefinite or reserved length (\(info))")
            }
        }

        mutating func value(depth: Int) throws -> CBOR {
            guard depth <= limits.maxDepth else { throw Failure(description: "nested deeper than \(limits.maxDepth)") }
            items += 1
            guard items <= limits.maxItems else { throw Failure(description: "more than \(limits.maxItems) values") }
            let head = try byte()
            let major = head >> 5, info = head & 0x1F
            if major == 7 { return try simple(info) }
            let argument = try argument(info)
            switch major {
            case 0: return .unsigned(argument)
            case 1: return .negative(argument)
            case 2: return .bytes(Array(try take(argument)))
            case 3:
                guard let text = String(validating: try take(argument), as: UTF8.self) else { throw Failure(description: "text that is not UTF-8") }
                return .text(text)
            case 4:
                // Each element takes at least a byte: a count past the bytes left is refused before any allocation.
                guard argument <= UInt64(bytes.endIndex - position) else { throw Failure(description: "an array longer than the input") }
                var elements: [CBOR] = []
                for _ in 0..<argument { elements.append(try value(depth: depth + 1)) }
                return .array(elements)
            case 5:
                guard argument <= UInt64(bytes.endIndex - position) / 2 else { throw Failure(description: "a map longer than the input") }
                var pairs: [CBOR.Pair] = []
                for _ in 0..<argument {
                    let key = try value(depth: depth + 1)
                    pairs.append(CBOR.Pair(key: key, value: try value(depth: depth + 1)))
                }
                return .map(pairs)
            default:
                throw Failure(description: "tags are not expected here")
            }
        }

        mutating func simple(_ info: UInt8) throws -> CBOR {
            switch info {
            case 20: return .bool(false)
            case 21: return .bool(true)
            case 22: return .null
            case 23: return .undefined
            case 25:
                let bits = try take(2).reduce(0) { $0 << 8 | UInt16($1) }
                return .float(Double(Float16(bitPattern: bits)))
            case 26: return .float(Double(Float(bitPattern: try take(4).reduce(0) { $0 << 8 | UInt32($1) })))
            case 27: return .float(Double(bitPattern: try take(8).reduce(0) { $0 << 8 | UInt64($1) }))
            default: throw Failure(description: "an unassigned simple value (\(info))")
            }
        }
    }
}
