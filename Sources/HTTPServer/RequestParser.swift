/// Limits on what a client may send; each breach has its own status (RFC 9110 §15.5).
public struct ParserLimits: Sendable {
    /// Longest request target accepted; longer → 414.
    public var maxRequestTargetLength = 8 * 1024
    /// Largest header section (field lines, excluding the request line); larger → 431.
    /// Field lines of the head, their line endings included (nginx's default admits 32 KiB).
    public var maxHeaderBytes = 32 * 1024
    /// Most header fields accepted; more → 431.
    public var maxHeaderCount = 100
    /// Largest request body, by Content-Length or chunked; larger → 413.
    public var maxBodyBytes = 1 << 20
    /// Most chunks in one chunked body; more → 413. Each chunk costs a size line's work however
    /// small it is: without a bound, a megabyte of one-byte chunks is 300,000 such steps on the
    /// event loop for one request (RFC 9112 §7.1 sets no limit; a server may refuse content it
    /// is unwilling to process, RFC 9110 §15.5.14). 4,096 chunks keep a 1 MiB body's average
    /// chunk at 256 bytes, far smaller than any real uploader writes.
    public var maxChunkCount = 4_096
    /// A larger (or smaller) body limit for some requests, decided from the head before any of
    /// the body is read: an upload address can take megabytes while every other request keeps
    /// `maxBodyBytes`. Nil: `maxBodyBytes` for all.
    public var bodyLimit: (@Sendable (RequestHead) -> Int)?

    public init() {}

    /// The body limit of the request `head` opens.
    public func maxBodyBytes(for head: RequestHead) -> Int {
        bodyLimit?(head) ?? maxBodyBytes
    }
}

/// How the request's body is delimited (RFC 9112 §6.3).
public enum BodyFraming: Sendable, Equatable {
    case none
    case length(Int)
    case chunked
}

/// A parsed request line and header section, before the body arrives.
public struct RequestHead: Sendable {
    public var method: String
    public var target: String
    public var version: HTTPVersion
    public var headers: HTTPHeaders
    public var framing: BodyFraming
    public var expectsContinue: Bool

    /// The path part of the target, still percent-encoded.
    public var path: Substring {
        target.firstIndex(of: "?").map { target[..<$0] } ?? target[...]
    }
}

/// What the parser found in the bytes it was given.
public enum ParseEvent {
    /// The buffer holds no complete element yet.
    case needMore
    /// A head whose body has not been read yet (the moment to answer `100 Continue`).
    case head(RequestHead)
    /// A complete request, head and body.
    case request(Request)
    /// The request is invalid: answer with this status and close the connection.
    case error(HTTPStatus)
}

/// An incremental HTTP/1.1 request parser (RFC 9112). Bytes may arrive split anywhere: the parser
/// remembers how far it has scanned and never looks at a byte twice while searching for the end of
/// the head. It never "repairs" a request: anything ambiguous is an error, and errors are final.
public struct RequestParser {
    private enum State {
        case head(scanned: Int, firstLineFound: Bool)
        case fixedBody(RequestHead, length: Int)
        case chunkSize(RequestHead, body: [UInt8], chunks: Int)
        case chunkData(RequestHead, body: [UInt8], remaining: Int, chunks: Int)
        case chunkDataEnd(RequestHead, body: [UInt8], chunks: Int)
        case trailers(RequestHead, body: [UInt8], bytes: Int)
        case failed(HTTPStatus)
    }

    public let limits: ParserLimits
    private var state: State = .head(scanned: 0, firstLineFound: false)
    /// The body limit of the request being read (`ParserLimits.maxBodyBytes(for:)`).
    public private(set) var bodyLimit: Int

    public init(limits: ParserLimits = ParserLimits()) {
        self.limits = limits
        self.bodyLimit = limits.maxBodyBytes
    }

    /// True while no byte of the next request has been consumed (the connection is idle).
    public var isBetweenRequests: Bool {
        if case .head(let scanned, _) = state { return scanned == 0 }
        return false
    }

    /// True while the body of a request is being read.
    public var isReadingBody: Bool {
        switch state {
        case .fixedBody, .chunkSize, .chunkData, .chunkDataEnd, .trailers: return true
        default: return false
        }
    }

    /// Bytes of a chunked body decoded so far and held here (a fixed-length body stays in the
    /// caller's buffer until it is whole).
    public var bufferedBodyBytes: Int {
        switch state {
        case .chunkSize(_, let body, _), .chunkData(_, let body, _, _), .chunkDataEnd(_, let body, _), .trailers(_, let body, _):
            return body.count
        default: return 0
        }
    }

    /// Parses from `buffer[index...]`, advancing `index` past what was consumed.
    public mutating func next(_ buffer: [UInt8], _ index: inout Int) -> ParseEvent {
        switch state {
        case .failed(let status):
            return .error(status)
        case .head(let scanned, let firstLineFound):
            return parseHead(buffer, &index, scanned: scanned, firstLineFound: firstLineFound)
        case .fixedBody(let head, let length):
            guard buffer.count - index >= length else { return .needMore }
            let body = Array(buffer[index..<(index + length)])
            index += length
            return finish(head, body: body)
        case .chunkSize, .chunkData, .chunkDataEnd, .trailers:
            return parseChunked(buffer, &index)
        }
    }

    private mutating func fail(_ status: HTTPStatus) -> ParseEvent {
        state = .failed(status)
        return .error(status)
    }

    private mutating func finish(_ head: RequestHead, body: [UInt8]) -> ParseEvent {
        state = .head(scanned: 0, firstLineFound: false)
        return .request(Request(method: head.method, target: head.target, version: head.version,
                                headers: head.headers, body: body))
    }

    // MARK: - Head

    private mutating func parseHead(_ buffer: [UInt8], _ index: inout Int, scanned: Int, firstLineFound: Bool) -> ParseEvent {
        // RFC 9112 §2.2: ignore at least one empty line before the request line.
        if scanned == 0 {
            while index < buffer.count, buffer[index] == CR {
                guard index + 1 < buffer.count else { return .needMore }
                guard buffer[index + 1] == LF else { break }
                index += 2
            }
        }
        let available = buffer.count - index
        let requestLineLimit = limits.maxRequestTargetLength + 64
        let headLimit = requestLineLimit + limits.maxHeaderBytes + 4

        // Search for CRLF CRLF, starting a little before where the last search stopped.
        // A bare LF (not after a CR) is refused at once: read as a line end by some parsers and
        // not by others, it is a smuggling vector, and waiting for a CRLF CRLF would never end.
        var end = -1
        var bareLF = false
        var firstLineEnd = firstLineFound ? index : -1
        buffer.withUnsafeBufferPointer { raw in
            let base = index
            var i = max(base, base + scanned - 3)
            let limit = buffer.count
            while i < limit {
                if raw[i] == LF {
                    if i == base || raw[i - 1] != CR {
                        bareLF = true
                        return
                    }
                    if firstLineEnd < 0 { firstLineEnd = i }
                    if i >= base + 3, raw[i - 1] == CR, raw[i - 2] == LF, raw[i - 3] == CR {
                        end = i + 1
                        return
                    }
                }
                i += 1
            }
        }
        if bareLF { return fail(.badRequest) }
        if end < 0 {
            // A request line longer than any acceptable target is a 414; a long head otherwise a 431.
            if firstLineEnd < 0 && available > requestLineLimit { return fail(.uriTooLong) }
            if firstLineEnd - index > requestLineLimit { return fail(.uriTooLong) }
            if available > headLimit { return fail(.requestHeaderFieldsTooLarge) }
            state = .head(scanned: available, firstLineFound: firstLineEnd >= 0)
            return .needMore
        }
        let start = index
        index = end
        let result = buffer.withUnsafeBufferPointer { raw in
            HeadParser(bytes: UnsafeBufferPointer(rebasing: raw[start..<(end - 2)]), limits: limits).parse()
        }
        switch result {
        case .failure(let status):
            return fail(status)
        case .success(let head):
            bodyLimit = limits.maxBodyBytes(for: head)
            switch head.framing {
            case .none:
                return finish(head, body: [])
            case .length(let length):
                if length > bodyLimit { return fail(.contentTooLarge) }
                if length == 0 { return finish(head, body: []) }
                state = .fixedBody(head, length: length)
                return .head(head)
            case .chunked:
                state = .chunkSize(head, body: [], chunks: 0)
                return .head(head)
            }
        }
    }

    // MARK: - Chunked body (RFC 9112 §7.1)

    /// Decodes as many chunks as the buffer holds. The body is moved out of `state` before it
    /// grows (`state = .failed` drops the enum's reference), so appending never copies what was
    /// already decoded, and it grows geometrically (no `reserveCapacity` per chunk, which would
    /// reallocate to the exact size each time): decoding is linear in the body's size.
    private mutating func parseChunked(_ buffer: [UInt8], _ index: inout Int) -> ParseEvent {
        while true {
            switch state {
            case .chunkSize(let head, let body, let chunks):
                guard let lineEnd = findCRLF(buffer, from: index, limit: 4096) else {
                    if buffer.count - index > 4096 { return fail(.badRequest) }
                    return .needMore
                }
                if lineEnd < 0 { return fail(.badRequest) }
                guard let size = parseChunkSize(buffer, from: index, to: lineEnd) else { return fail(.badRequest) }
                if size > bodyLimit - body.count { return fail(.contentTooLarge) }
                index = lineEnd + 2
                if size == 0 {
                    state = .trailers(head, body: body, bytes: 0)
                } else {
                    if chunks >= limits.maxChunkCount { return fail(.contentTooLarge) }
                    state = .chunkData(head, body: body, remaining: size, chunks: chunks + 1)
                }
            case .chunkData(let head, var body, let remaining, let chunks):
                let take = min(remaining, buffer.count - index)
                if take == 0 { return .needMore }
                state = .failed(.badRequest) // release `body`'s other reference before appending
                body.append(contentsOf: buffer[index..<(index + take)])
                index += take
                state = remaining == take ? .chunkDataEnd(head, body: body, chunks: chunks)
                    : .chunkData(head, body: body, remaining: remaining - take, chunks: chunks)
                if remaining != take { return .needMore }
            case .chunkDataEnd(let head, let body, let chunks):
                guard buffer.count - index >= 2 else { return .needMore }
                guard buffer[index] == CR, buffer[index + 1] == LF else { return fail(.badRequest) }
                index += 2
                state = .chunkSize(head, body: body, chunks: chunks)
            case .trailers(let head, let body, let bytes):
                // Trailer fields are read, checked for framing and ignored.
                guard let lineEnd = findCRLF(buffer, from: index, limit: limits.maxHeaderBytes) else {
                    if buffer.count - index + bytes > limits.maxHeaderBytes { return fail(.requestHeaderFieldsTooLarge) }
                    return .needMore
                }
                if lineEnd < 0 { return fail(.badRequest) }
                let length = lineEnd - index
                index = lineEnd + 2
                if length == 0 { return finish(head, body: body) }
                if bytes + length > limits.maxHeaderBytes { return fail(.requestHeaderFieldsTooLarge) }
                state = .trailers(head, body: body, bytes: bytes + length + 2)
            default:
                return .needMore
            }
        }
    }

    /// The index of the next CRLF at or after `from`; -1 for a bare CR/LF or a NUL before it;
    /// nil if none within the buffer.
    private func findCRLF(_ buffer: [UInt8], from: Int, limit: Int) -> Int? {
        var i = from
        let end = min(buffer.count, from + limit + 2)
        while i < end {
            let byte = buffer[i]
            if byte == CR {
                guard i + 1 < buffer.count else { return nil }
                return buffer[i + 1] == LF ? i : -1
            }
            if byte == LF || byte == 0 { return -1 }
            i += 1
        }
        return nil
    }

    /// `chunk-size [ chunk-ext ]`: hex digits, then optionally `;` extensions (ignored).
    private func parseChunkSize(_ buffer: [UInt8], from: Int, to end: Int) -> Int? {
        var i = from
        var size = 0
        var digits = 0
        while i < end, let digit = hexValue(buffer[i]) {
            if digits >= 15 { return nil } // overflow guard: 15 hex digits fit in Int
            size = size << 4 | digit
            digits += 1
            i += 1
        }
        guard digits > 0 else { return nil }
        while i < end, buffer[i] == SP || buffer[i] == HTAB { i += 1 }
        if i == end { return size }
        guard buffer[i] == UInt8(ascii: ";") else { return nil }
        while i < end {
            let byte = buffer[i]
            if byte < 0x20 && byte != HTAB || byte == 0x7F { return nil }
            i += 1
        }
        return size
    }
}

// MARK: - Bytes

let CR: UInt8 = 13
let LF: UInt8 = 10
let SP: UInt8 = 32
let HTAB: UInt8 = 9

@inline(__always)
func hexValue(_ byte: UInt8) -> Int? {
    switch byte {
    case 48...57: return Int(byte - 48)
    case 65...70: return Int(byte - 55)
    case 97...102: return Int(byte - 87)
    default: return nil
    }
}

/// `tchar` from RFC 9110 §5.6.2.
let isTokenByte: [Bool] = (0..<256).map { b in
    switch UInt8(b) {
    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
        return true
    default:
        return "!#$%&'*+-.^_`|~".utf8.contains(UInt8(b))
    }
}

/// Parses one complete head (request line and field lines, without the final empty line).
private struct HeadParser {
    let bytes: UnsafeBufferPointer<UInt8>
    let limits: ParserLimits

    enum Result { case success(RequestHead), failure(HTTPStatus) }

    func parse() -> Result {
        // Lines end in CRLF; any other CR or LF is a bare one, rejected.
        var lines: [Range<Int>] = []
        var lineStart = 0
        var i = 0
        let n = bytes.count
        while i < n {
            let byte = bytes[i]
            if byte == CR {
                guard i + 1 < n, bytes[i + 1] == LF else { return .failure(.badRequest) }
                lines.append(lineStart..<i)
                i += 2
                lineStart = i
                continue
            }
            if byte == LF { return .failure(.badRequest) }
            i += 1
        }
        if lineStart < n { lines.append(lineStart..<n) }
        guard let requestLine = lines.first else { return .failure(.badRequest) }

        // request-line = method SP request-target SP HTTP-version
        let line = requestLine
        var p = line.lowerBound
        while p < line.upperBound, isTokenByte[Int(bytes[p])] { p += 1 }
        guard p > line.lowerBound, p < line.upperBound, bytes[p] == SP else { return .failure(.badRequest) }
        let method = string(line.lowerBound..<p)
        let targetStart = p + 1
        var q = targetStart
        while q < line.upperBound, bytes[q] != SP {
            let byte = bytes[q]
            guard byte > 0x20, byte < 0x7F else { return .failure(.badRequest) }
            q += 1
        }
        if q - targetStart > limits.maxRequestTargetLength { return .failure(.uriTooLong) }
        guard q > targetStart, q < line.upperBound else { return .failure(.badRequest) }
        let versionRange = (q + 1)..<line.upperBound
        guard versionRange.count == 8,
              bytes[versionRange.lowerBound] == UInt8(ascii: "H"), bytes[versionRange.lowerBound + 1] == UInt8(ascii: "T"),
              bytes[versionRange.lowerBound + 2] == UInt8(ascii: "T"), bytes[versionRange.lowerBound + 3] == UInt8(ascii: "P"),
              bytes[versionRange.lowerBound + 4] == UInt8(ascii: "/"), bytes[versionRange.lowerBound + 6] == UInt8(ascii: "."),
              let major = decimal(bytes[versionRange.lowerBound + 5]),
              let minor = decimal(bytes[versionRange.lowerBound + 7])
        else { return .failure(.badRequest) }
        let version: HTTPVersion
        switch (major, minor) {
        case (1, 1): version = .http11
        case (1, 0): version = .http10
        default: return .failure(.httpVersionNotSupported)
        }
        var target = string(targetStart..<q)
        if target.utf8.first != UInt8(ascii: "/") {
            if target == "*" && method == "OPTIONS" {
                // asterisk-form
            } else if let originForm = Self.originForm(ofAbsolute: target) {
                target = originForm
            } else {
                return .failure(.badRequest)
            }
        }

        // field-line = field-name ":" OWS field-value OWS
        var headers: [(String, String)] = []
        headers.reserveCapacity(lines.count - 1)
        var headerBytes = 0
        for fieldLine in lines.dropFirst() {
            headerBytes += fieldLine.count + 2
            if headerBytes > limits.maxHeaderBytes { return .failure(.requestHeaderFieldsTooLarge) }
            if headers.count >= limits.maxHeaderCount { return .failure(.requestHeaderFieldsTooLarge) }
            guard !fieldLine.isEmpty else { return .failure(.badRequest) }
            let first = bytes[fieldLine.lowerBound]
            if first == SP || first == HTAB { return .failure(.badRequest) } // obs-fold
            var c = fieldLine.lowerBound
            while c < fieldLine.upperBound, bytes[c] != UInt8(ascii: ":") {
                guard isTokenByte[Int(bytes[c])] else { return .failure(.badRequest) }
                c += 1
            }
            guard c < fieldLine.upperBound, c > fieldLine.lowerBound else { return .failure(.badRequest) }
            var vStart = c + 1
            var vEnd = fieldLine.upperBound
            while vStart < vEnd, bytes[vStart] == SP || bytes[vStart] == HTAB { vStart += 1 }
            while vEnd > vStart, bytes[vEnd - 1] == SP || bytes[vEnd - 1] == HTAB { vEnd -= 1 }
            for k in vStart..<vEnd {
                let byte = bytes[k]
                if byte < 0x20 && byte != HTAB || byte == 0x7F { return .failure(.badRequest) }
            }
            headers.append((string(fieldLine.lowerBound..<c), string(vStart..<vEnd)))
        }
        let fields = HTTPHeaders(headers)
        return semantics(method: method, target: target, version: version, headers: fields)
    }

    /// Framing and the fields whose misuse enables request smuggling (RFC 9112 §6, §3.2).
    private func semantics(method: String, target: String, version: HTTPVersion, headers: HTTPHeaders) -> Result {
        // One pass over the fields (no array per name: this runs for every request).
        var hosts: [String] = [], lengths: [String] = [], codings: [String] = []
        var expect: String?
        for field in headers.fields {
            if field.name.caseInsensitiveEquals("Host") { hosts.append(field.value) }
            else if field.name.caseInsensitiveEquals("Content-Length") { lengths.append(field.value) }
            else if field.name.caseInsensitiveEquals("Transfer-Encoding") { codings.append(field.value) }
            else if expect == nil && field.name.caseInsensitiveEquals("Expect") { expect = field.value }
        }
        if hosts.count > 1 || (version == .http11 && hosts.isEmpty) { return .failure(.badRequest) }
        if let host = hosts.first, !Self.isValidHost(host) { return .failure(.badRequest) }

        var framing = BodyFraming.none
        if !codings.isEmpty {
            if !lengths.isEmpty || version == .http10 { return .failure(.badRequest) }
            let list = codings.flatMap { $0.split(separator: ",", omittingEmptySubsequences: false) }
                .map { $0.trimmingCharacters(in: [" ", "\t"]).asciiLowercased() }
            guard list.last == "chunked" else { return .failure(.badRequest) }
            for coding in list.dropLast() {
                if coding == "chunked" || coding.isEmpty { return .failure(.badRequest) }
            }
            if list.count > 1 { return .failure(.notImplemented) } // gzip, chunked: not supported
            framing = .chunked
        } else if !lengths.isEmpty {
            guard lengths.count == 1, let length = Self.contentLength(lengths[0]) else { return .failure(.badRequest) }
            framing = .length(length)
        }

        var expectsContinue = false
        if let expect {
            guard expect.asciiLowercased() == "100-continue" else { return .failure(.expectationFailed) }
            expectsContinue = version == .http11
        }
        return .success(RequestHead(method: method, target: target, version: version, headers: headers,
                                    framing: framing, expectsContinue: expectsContinue))
    }

    /// `Host = uri-host [ ":" port ]` (RFC 9110 §7.2, RFC 3986 §3.2.2): a bracketed IP literal,
    /// or a reg-name of unreserved, percent-encoded and sub-delim characters; the port digits.
    /// No spaces, slashes, backslashes, userinfo (`@`), lists or second ports.
    static func isValidHost(_ value: String) -> Bool {
        var value = value
        return value.withUTF8 { isValidHost(bytes: $0) }
    }

    /// `isValidHost` on the value's bytes, indexed by integers (the `String.UTF8View` index
    /// walk cost more than the check).
    private static func isValidHost(bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        let end = bytes.count
        var i = 0
        if end > 0 && bytes[0] == UInt8(ascii: "[") {
            guard let close = bytes.firstIndex(of: UInt8(ascii: "]")), close > 1 else { return false }
            for k in 1..<close where !(isHex(bytes[k]) || bytes[k] == UInt8(ascii: ":") || bytes[k] == UInt8(ascii: ".")) {
                return false
            }
            i = close + 1
        } else {
            while i < end && bytes[i] != UInt8(ascii: ":") {
                if bytes[i] == UInt8(ascii: "%") {
                    guard i + 2 < end, isHex(bytes[i + 1]), isHex(bytes[i + 2]) else { return false }
                    i += 3
                    continue
                }
                guard isRegNameByte(bytes[i]) else { return false }
                i += 1
            }
        }
        guard i < end else { return true }
        guard bytes[i] == UInt8(ascii: ":") else { return false }
        for k in (i + 1)..<end where !(bytes[k] >= 48 && bytes[k] <= 57) { return false }
        return true
    }

    private static func isHex(_ byte: UInt8) -> Bool { hexValue(byte) != nil }

    /// `Content-Length = 1*DIGIT`, without signs, lists or overflow.
    static func contentLength(_ value: String) -> Int? {
        guard !value.isEmpty, value.utf8.count <= 18 else { return nil }
        var result = 0
        for byte in value.utf8 {
            guard let digit = decimal(byte) else { return nil }
            result = result * 10 + digit
        }
        return result
    }

    /// `http://host/path?q` → `/path?q` (absolute-form, RFC 9112 §3.2.2); nil when the target is
    /// not absolute-form or its authority is not a valid host (`http:///x` has none).
    static func originForm(ofAbsolute target: String) -> String? {
        let lower = target.asciiLowercased()
        let prefix = lower.hasPrefix("http://") ? 7 : lower.hasPrefix("https://") ? 8 : 0
        guard prefix > 0 else { return nil }
        let rest = target.dropFirst(prefix)
        let slash = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? rest.endIndex
        let authority = String(rest[..<slash])
        guard !authority.isEmpty, isValidHost(authority) else { return nil }
        guard slash < rest.endIndex else { return "/" }
        let tail = String(rest[slash...])
        return tail.hasPrefix("?") ? "/" + tail : tail
    }

    private func string(_ range: Range<Int>) -> String {
        String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
    }
}

@inline(__always)
private func decimal(_ byte: UInt8) -> Int? {
    byte >= 48 && byte <= 57 ? Int(byte - 48) : nil
}

/// unreserved / sub-delims of RFC 3986, the bytes of a reg-name besides percent-encodings.
@inline(__always)
private func isRegNameByte(_ byte: UInt8) -> Bool {
    switch byte {
    case 48...57, 65...90, 97...122: return true // DIGIT, ALPHA
    case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"): return true
    case UInt8(ascii: "!"), UInt8(ascii: "$"), UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "("), UInt8(ascii: ")"),
         UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: ","), UInt8(ascii: ";"), UInt8(ascii: "="):
        return true
    default: return false
    }
}

extension String {
    /// Lower case for ASCII letters only: protocol tokens are compared byte-wise, never with
    /// Unicode case mapping (which turns KELVIN SIGN into `k`).
    public func asciiLowercased() -> String {
        String(decoding: utf8.map { $0 >= 65 && $0 <= 90 ? $0 + 32 : $0 }, as: UTF8.self)
    }
}
