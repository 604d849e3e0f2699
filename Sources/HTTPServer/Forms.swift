/// Percent-decoding with strict UTF-8: malformed input is rejected, never guessed at.
public enum PercentDecoding {
    /// Decodes `%XX` escapes (and `+` as space when `plusAsSpace`); nil for a bad escape or
    /// bytes that are not valid UTF-8.
    public static func decode<S: StringProtocol>(_ text: S, plusAsSpace: Bool) -> String? {
        let utf8 = text.utf8
        if !utf8.contains(where: { $0 == UInt8(ascii: "%") || (plusAsSpace && $0 == UInt8(ascii: "+")) }) {
            return String(text)
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count)
        var iterator = utf8.makeIterator()
        while let byte = iterator.next() {
            switch byte {
            case UInt8(ascii: "%"):
                guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else { return nil }
                bytes.append(UInt8(high << 4 | low))
            case UInt8(ascii: "+") where plusAsSpace:
                bytes.append(UInt8(ascii: " "))
            default:
                bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    /// The decoded segments of a path (`/a/b%20c` → `["a", "b c"]`), empty ones dropped; nil
    /// when a segment is malformed or decodes to a NUL.
    public static func pathSegments(_ path: String) -> [String]? {
        var segments: [String] = []
        for raw in path.split(separator: "/", omittingEmptySubsequences: true) {
            guard let segment = decode(raw, plusAsSpace: false), !segment.utf8.contains(0) else { return nil }
            segments.append(segment)
        }
        return segments
    }
}

/// Name–value pairs from a query string or an `application/x-www-form-urlencoded` body.
public struct URLEncodedForm: Sendable {
    public private(set) var fields: [(name: String, value: String)] = []

    public init() {}

    /// Throws a 400 `HTTPError` for bad escapes or invalid UTF-8.
    public init<S: StringProtocol>(parsing text: S) throws {
        for pair in Substring(text).splitASCII(UInt8(ascii: "&"), omittingEmpty: true) {
            let parts = pair.splitASCII(UInt8(ascii: "="), maxSplits: 1, omittingEmpty: false)
            guard let name = PercentDecoding.decode(parts[0], plusAsSpace: true),
                  let value = PercentDecoding.decode(parts.count > 1 ? parts[1] : "", plusAsSpace: true)
            else { throw HTTPError(.badRequest, message: "Malformed form encoding") }
            fields.append((name, value))
        }
    }

    /// Adds a field (a multipart form's text parts are gathered here).
    public mutating func append(_ name: String, _ value: String) {
        fields.append((name, value))
    }

    /// The first value of `name`.
    public mutating func removeAll(named name: String) {
        fields.removeAll { $0.name == name }
    }

    public subscript(name: String) -> String? { fields.first { $0.name == name }?.value }

    public func values(_ name: String) -> [String] { fields.filter { $0.name == name }.map(\.value) }
}

extension Request {
    /// The decoded query string (empty when there is none); throws 400 when malformed.
    public func queryItems() throws -> URLEncodedForm {
        guard let query else { return URLEncodedForm() }
        return try URLEncodedForm(parsing: query)
    }

    /// Whether the body is declared a URL-encoded form.
    public var isForm: Bool {
        headers["Content-Type"]?.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased()
            == "application/x-www-form-urlencoded"
    }

    /// The decoded form body; throws 415 for another content type and 400 when malformed.
    public func formBody() throws -> URLEncodedForm {
        guard isForm else {
            throw HTTPError(.unsupportedMediaType, message: "Expected application/x-www-form-urlencoded")
        }
        guard let text = String(validating: body, as: UTF8.self) else {
            throw HTTPError(.badRequest, message: "Form body is not UTF-8")
        }
        return try URLEncodedForm(parsing: text)
    }

    /// The value of the cookie called `name` in the `Cookie` fields (RFC 6265 §5.4), quotes
    /// removed; the first of a repeated name wins. Scanned in place: every request asks for two
    /// or three cookies, and a dictionary of all of them cost more than the scans.
    public func cookie(_ name: String) -> String? {
        for field in headers where field.name.caseInsensitiveEquals("Cookie") {
            var value = field.value
            if let found = value.withUTF8({ Self.cookie(name, in: $0) }) { return found }
        }
        return nil
    }

    private static func cookie(_ name: String, in field: UnsafeBufferPointer<UInt8>) -> String? {
        let semicolon = UInt8(ascii: ";"), equals = UInt8(ascii: "="), quote = UInt8(ascii: "\"")
        func trimmed(_ range: Range<Int>) -> Range<Int> {
            var lower = range.lowerBound, upper = range.upperBound
            while lower < upper && (field[lower] == 0x20 || field[lower] == 0x09) { lower += 1 }
            while upper > lower && (field[upper - 1] == 0x20 || field[upper - 1] == 0x09) { upper -= 1 }
            return lower..<upper
        }
        var pairStart = 0
        while pairStart < field.count {
            var pairEnd = pairStart
            while pairEnd < field.count && field[pairEnd] != semicolon { pairEnd += 1 }
            defer { pairStart = pairEnd + 1 }
            guard let sign = field[pairStart..<pairEnd].firstIndex(of: equals) else { continue }
            let nameRange = trimmed(pairStart..<sign)
            guard !nameRange.isEmpty, field[nameRange].elementsEqual(name.utf8) else { continue }
            var valueRange = trimmed((sign + 1)..<pairEnd)
            if valueRange.count >= 2 && field[valueRange.lowerBound] == quote && field[valueRange.upperBound - 1] == quote {
                valueRange = (valueRange.lowerBound + 1)..<(valueRange.upperBound - 1)
            }
            return String(decoding: field[valueRange], as: UTF8.self)
        }
        return nil
    }
}

/// A `Set-Cookie` field (RFC 6265 §4.1).
public struct SetCookie: Sendable {
    public enum SameSite: String, Sendable { case strict = "Strict", lax = "Lax", none = "None" }

    public var name: String
    public var value: String
    public var path: String? = "/"
    public var maxAge: Int?
    public var httpOnly = true
    public var secure = false
    public var sameSite: SameSite? = .lax

    public init(name: String, value: String, path: String? = "/", maxAge: Int? = nil, httpOnly: Bool = true,
                secure: Bool = false, sameSite: SameSite? = .lax) {
        self.name = name
        self.value = value
        self.path = path
        self.maxAge = maxAge
        self.httpOnly = httpOnly
        self.secure = secure
        self.sameSite = sameSite
    }

    /// A cookie that deletes `name` in the browser.
    public static func expired(_ name: String, path: String = "/") -> SetCookie {
        SetCookie(name: name, value: "", path: path, maxAge: 0)
    }

    public var headerValue: String {
        var parts = ["\(name)=\(value)"]
        if let path { parts.append("Path=\(path)") }
        if let maxAge { parts.append("Max-Age=\(maxAge)") }
        if httpOnly { parts.append("HttpOnly") }
        if secure { parts.append("Secure") }
        if let sameSite { parts.append("SameSite=\(sameSite.rawValue)") }
        return parts.joined(separator: "; ")
    }
}

extension Substring {
    /// Splits on one ASCII byte, working on UTF-8 rather than Characters (protocol text needs
    /// no grapheme breaking, and that was the cost of every query string and cookie).
    func splitASCII(_ separator: UInt8, maxSplits: Int = .max, omittingEmpty: Bool) -> [Substring] {
        var pieces: [Substring] = []
        let utf8 = self.utf8
        var start = utf8.startIndex
        var index = start
        var splits = 0
        while index < utf8.endIndex {
            if utf8[index] == separator && splits < maxSplits {
                if !(omittingEmpty && start == index) { pieces.append(Substring(utf8[start..<index])) }
                splits += 1
                start = utf8.index(after: index)
            }
            index = utf8.index(after: index)
        }
        if !(omittingEmpty && start == utf8.endIndex) { pieces.append(Substring(utf8[start..<utf8.endIndex])) }
        return pieces
    }
}
