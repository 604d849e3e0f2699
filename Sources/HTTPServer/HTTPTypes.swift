import Foundation

/// An HTTP status code with its reason phrase.
public struct HTTPStatus: Equatable, Hashable, Sendable, CustomStringConvertible {
    public let code: Int
    public let reason: String

    public init(code: Int, reason: String) {
        self.code = code
        self.reason = reason
    }

    public var description: String { "\(code) \(reason)" }

    public static let `continue` = HTTPStatus(code: 100, reason: "Continue")
    public static let ok = HTTPStatus(code: 200, reason: "OK")
    public static let created = HTTPStatus(code: 201, reason: "Created")
    public static let noContent = HTTPStatus(code: 204, reason: "No Content")
    public static let partialContent = HTTPStatus(code: 206, reason: "Partial Content")
    public static let movedPermanently = HTTPStatus(code: 301, reason: "Moved Permanently")
    public static let found = HTTPStatus(code: 302, reason: "Found")
    public static let seeOther = HTTPStatus(code: 303, reason: "See Other")
    public static let notModified = HTTPStatus(code: 304, reason: "Not Modified")
    public static let badRequest = HTTPStatus(code: 400, reason: "Bad Request")
    public static let unauthorized = HTTPStatus(code: 401, reason: "Unauthorized")
    public static let forbidden = HTTPStatus(code: 403, reason: "Forbidden")
    public static let notFound = HTTPStatus(code: 404, reason: "Not Found")
    public static let methodNotAllowed = HTTPStatus(code: 405, reason: "Method Not Allowed")
    public static let requestTimeout = HTTPStatus(code: 408, reason: "Request Timeout")
    public static let conflict = HTTPStatus(code: 409, reason: "Conflict")
    public static let contentTooLarge = HTTPStatus(code: 413, reason: "Content Too Large")
    public static let rangeNotSatisfiable = HTTPStatus(code: 416, reason: "Range Not Satisfiable")
    public static let uriTooLong = HTTPStatus(code: 414, reason: "URI Too Long")
    public static let unsupportedMediaType = HTTPStatus(code: 415, reason: "Unsupported Media Type")
    public static let expectationFailed = HTTPStatus(code: 417, reason: "Expectation Failed")
    public static let gone = HTTPStatus(code: 410, reason: "Gone")
    public static let unprocessableContent = HTTPStatus(code: 422, reason: "Unprocessable Content")
    public static let tooManyRequests = HTTPStatus(code: 429, reason: "Too Many Requests")
    public static let requestHeaderFieldsTooLarge = HTTPStatus(code: 431, reason: "Request Header Fields Too Large")
    public static let internalServerError = HTTPStatus(code: 500, reason: "Internal Server Error")
    public static let notImplemented = HTTPStatus(code: 501, reason: "Not Implemented")
    public static let serviceUnavailable = HTTPStatus(code: 503, reason: "Service Unavailable")
    public static let insufficientStorage = HTTPStatus(code: 507, reason: "Insufficient Storage")
    public static let httpVersionNotSupported = HTTPStatus(code: 505, reason: "HTTP Version Not Supported")
}

/// Header fields in the order received or set; names compare case-insensitively.
public struct HTTPHeaders: Sendable, Sequence {
    public private(set) var fields: [(name: String, value: String)]

    public init(_ fields: [(String, String)] = []) {
        self.fields = fields.map { (name: $0.0, value: $0.1) }
    }

    /// The first value of `name`, if any.
    public subscript(name: String) -> String? {
        for field in fields where field.name.caseInsensitiveEquals(name) { return field.value }
        return nil
    }

    /// Every value of `name`, in order.
    public func values(_ name: String) -> [String] {
        fields.filter { $0.name.caseInsensitiveEquals(name) }.map(\.value)
    }

    public func contains(_ name: String) -> Bool { self[name] != nil }

    public mutating func add(_ name: String, _ value: String) { fields.append((name: name, value: value)) }

    /// Replaces every value of `name` with one.
    public mutating func set(_ name: String, _ value: String) {
        remove(name)
        add(name, value)
    }

    public mutating func remove(_ name: String) { fields.removeAll { $0.name.caseInsensitiveEquals(name) } }

    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> { fields.makeIterator() }
}

extension String {
    /// ASCII case-insensitive comparison, which is what HTTP field names and tokens need.
    @inlinable
    func caseInsensitiveEquals(_ other: String) -> Bool {
        // Most comparisons (a field name against another) differ in length: O(1) for native strings.
        guard utf8.count == other.utf8.count else { return false }
        var a = self.utf8.makeIterator()
        var b = other.utf8.makeIterator()
        while true {
            switch (a.next(), b.next()) {
            case (nil, nil): return true
            case let (x?, y?):
                if x == y { continue }
                if asciiLower(x) != asciiLower(y) { return false }
            default: return false
            }
        }
    }
}

@inlinable
func asciiLower(_ byte: UInt8) -> UInt8 { byte >= 65 && byte <= 90 ? byte | 0x20 : byte }

/// A complete request: head and body. Handlers receive it on a worker thread.
///
/// A value: the event loop sets `remoteAddress` and the router `parameters` and `route` (only
/// inside this library) on their own copies before the context, any middleware or a handler
/// sees it; what they are handed nobody changes.
public struct Request: Sendable {
    public let method: String
    /// The request target as sent (`/path?query`).
    public let target: String
    /// The path part of the target, still percent-encoded.
    public let path: String
    /// The query part after `?`, still percent-encoded.
    public let query: String?
    public let version: HTTPVersion
    public let headers: HTTPHeaders
    public let body: [UInt8]
    /// The peer's address, e.g. `127.0.0.1` or `::1`.
    public internal(set) var remoteAddress: String
    /// Path parameters filled by the router (`/city/{slug}` → `slug`).
    public internal(set) var parameters: [String: String] = [:]
    /// The route that answered, as registered (`/city/{slug}`), set by the router with
    /// `parameters`; nil when none matched. A bounded name for a request (logs, metrics).
    public internal(set) var route: String?
    /// The path with the router's secret parameters (`Router(secretParameters:)`) named instead of
    /// given (`/password/reset/{token}`); nil when the path holds none.
    public internal(set) var redactedPath: String?
    /// What a log line may say of the path: a secret a path carries (a reset link's token) never.
    public var pathForLogs: String { redactedPath ?? path }
    /// When the request was read whole (monotonic milliseconds; 0 for one made by hand).
    public internal(set) var arrival: UInt64 = 0
    /// How long ago the request was read whole: its wait in the workers' queue, and its work so far.
    public var millisecondsSinceArrival: UInt64 { arrival == 0 ? 0 : monotonicMilliseconds() &- arrival }

    public init(method: String, target: String, version: HTTPVersion = .http11, headers: HTTPHeaders = HTTPHeaders(),
                body: [UInt8] = [], remoteAddress: String = "") {
        self.method = method
        self.target = target
        // On bytes: a `Character` search walks grapheme clusters (docs/performance.md, "Measured choices").
        if let q = target.utf8.firstIndex(of: UInt8(ascii: "?")) {
            path = String(Substring(target.utf8[..<q]))
            query = String(Substring(target.utf8[target.utf8.index(after: q)...]))
        } else {
            path = target
            query = nil
        }
        self.version = version
        self.headers = headers
        self.body = body
        self.remoteAddress = remoteAddress
    }

    /// Whether the client asked to keep the connection open (RFC 9112 §9.3).
    public var wantsKeepAlive: Bool {
        // Most requests have no Connection field: no token lists to build.
        guard headers.contains("Connection") else { return version == .http11 }
        let tokens = headers.values("Connection").flatMap { $0.split(separator: ",") }
            .map { $0.trimmingCharacters(in: .whitespaces).asciiLowercased() }
        if tokens.contains("close") { return false }
        if version == .http10 { return tokens.contains("keep-alive") }
        return true
    }
}

public enum HTTPVersion: Sendable, Equatable {
    case http10, http11
    var text: String { self == .http10 ? "HTTP/1.0" : "HTTP/1.1" }
}

/// A response built by a handler. Bodies are complete: pages here are small, and a known length
/// lets every response carry `Content-Length`. A streamed response (`streaming`) has no body
/// here: its handler writes it later to a `ResponseStream`.
public struct Response: Sendable {
    public var status: HTTPStatus
    public var headers: HTTPHeaders
    /// The body as the slices it was assembled from, which the server writes without joining.
    public var bodyParts: ResponseBody
    /// The body in one array (joined from its parts when it has several: a copy).
    public var body: [UInt8] {
        get { bodyParts.joined() }
        set { bodyParts = ResponseBody(newValue) }
    }
    /// For a streamed response: called (on a worker) once the stream is open, with the stream
    /// to write the body to. Not called for a HEAD request, or when the stream is refused.
    public var stream: (@Sendable (ResponseStream) -> Void)?
    /// Whom a stream counts against for `maxStreamsPerAddress`: by default the peer's address;
    /// a handler behind a proxy knows the client better.
    public var streamClient: String?
    /// The request moves to the main lane (`Lane.Moved` was thrown): this answer is not sent.
    var movedToMainLane = false
    /// The request's `redactedPath`, for the server's access log (it sees the request as parsed, before routing).
    var redactedPath: String?

    /// A response whose body `start` writes to the stream it is given, for as long as it likes.
    public static func streaming(status: HTTPStatus = .ok, headers: HTTPHeaders, client: String? = nil,
                                 start: @escaping @Sendable (ResponseStream) -> Void) -> Response {
        var response = Response(status: status, headers: headers)
        response.stream = start
        response.streamClient = client
        return response
    }

    public init(status: HTTPStatus = .ok, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.bodyParts = ResponseBody(body)
    }

    public static func text(_ text: String, status: HTTPStatus = .ok) -> Response {
        Response(status: status, headers: HTTPHeaders([("Content-Type", "text/plain; charset=utf-8")]),
                 body: Array(text.utf8))
    }

    public static func html(_ bytes: [UInt8], status: HTTPStatus = .ok) -> Response {
        Response(status: status, headers: HTTPHeaders([("Content-Type", "text/html; charset=utf-8")]), body: bytes)
    }

    /// A redirect to `location`; 303 by default, the answer to a successful form POST.
    public static func redirect(to location: String, status: HTTPStatus = .seeOther) -> Response {
        Response(status: status, headers: HTTPHeaders([("Location", location)]))
    }

    public mutating func setCookie(_ cookie: SetCookie) { headers.add("Set-Cookie", cookie.headerValue) }
}

/// An error that carries the status it should be answered with.
public struct HTTPError: Error, Sendable, Equatable {
    public let status: HTTPStatus
    public let message: String?
    public var headers: HTTPHeaders

    public init(_ status: HTTPStatus, message: String? = nil, headers: HTTPHeaders = HTTPHeaders()) {
        self.status = status
        self.message = message
        self.headers = headers
    }

    public static func == (lhs: HTTPError, rhs: HTTPError) -> Bool {
        lhs.status == rhs.status && lhs.message == rhs.message
    }
}
