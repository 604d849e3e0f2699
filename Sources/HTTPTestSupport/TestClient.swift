import Foundation
import Synchronization
@_spi(Testing) import HTTPServer
#if canImport(Glibc)
import Glibc
#endif

/// A response as read off the wire by `TestClient`.
public struct WireResponse: Sendable {
    public var version: String
    public var status: Int
    public var headers: HTTPHeaders
    public var body: [UInt8]
    public var text: String { String(decoding: body, as: UTF8.self) }
}

public struct TestClientError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// A blocking TCP client that sends exactly the bytes it is given and parses responses itself,
/// so tests can send malformed requests, split writes and pipelines.
public final class TestClient {
    public let fd: Int32
    private var buffer: [UInt8] = []

    /// Connects to host:port with a receive timeout (seconds); from `source` (an IPv4 loopback
    /// address such as 127.0.0.2) when given, to act as another client address.
    public init(host: String = "127.0.0.1", port: Int, timeout: Double = 5, source: String? = nil) throws {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var info: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &info) == 0, let first = info else {
            throw TestClientError("cannot resolve \(host)")
        }
        defer { freeaddrinfo(info) }
        // Set up on a local descriptor, stored only once connected: a class whose stored
        // properties are all set runs its deinit when its init throws, so closing here and there
        // closed the same number twice, the second time another thread's new socket (EBADF).
        let socketFD = socket(first.pointee.ai_family, Int32(SOCK_STREAM.rawValue), 0)
        guard socketFD >= 0 else { throw TestClientError("socket: \(errno)") }
        var tv = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - Double(Int(timeout))) * 1_000_000))
        setsockopt(socketFD, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        if let source {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            guard inet_pton(AF_INET, source, &address.sin_addr) == 1 else {
                Glibc.close(socketFD)
                throw TestClientError("not an IPv4 address: \(source)")
            }
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socketFD, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard bound == 0 else {
                let code = errno
                Glibc.close(socketFD)
                throw TestClientError("bind \(source): \(String(cString: strerror(code)))")
            }
        }
        guard connect(socketFD, first.pointee.ai_addr, first.pointee.ai_addrlen) == 0 else {
            let code = errno
            Glibc.close(socketFD)
            throw TestClientError("connect: \(String(cString: strerror(code)))")
        }
        fd = socketFD
    }

    /// A client with no connection whose input is `received` (a response made in process).
    private init(received: [UInt8]) {
        fd = -1
        buffer = received
    }

    deinit { if fd >= 0 { Glibc.close(fd) } }

    public func send(_ text: String) throws { try send(Array(text.utf8)) }

    public func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw TestClientError("send failed: \(errno)") }
            offset += n
        }
    }

    /// Half-closes the connection (FIN), as a client that is done sending.
    public func shutdownWrite() { shutdown(fd, Int32(SHUT_WR)) }

    /// Makes the close at the end of this client a reset (RST), as a client that vanished.
    public func resetOnClose() {
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
    }

    /// Reads more bytes; false at EOF.
    private func fill() throws -> Bool {
        guard fd >= 0 else { return false }
        var chunk = [UInt8](repeating: 0, count: 65536)
        let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if n == 0 { return false }
        if n < 0 {
            if errno == EAGAIN || errno == EWOULDBLOCK { throw TestClientError("timed out waiting for the server") }
            if errno == ECONNRESET { return false }
            throw TestClientError("recv: \(errno)")
        }
        buffer.append(contentsOf: chunk[0..<n])
        return true
    }

    /// True when the server has closed the connection (EOF or reset) with nothing more to read.
    public func isClosedByServer() -> Bool {
        if !buffer.isEmpty { return false }
        return (try? fill()) == false
    }

    /// Reads one response. `head` says the request was HEAD (no body despite Content-Length).
    public func readResponse(head: Bool = false) throws -> WireResponse {
        var end: Int?
        while end == nil {
            if let range = findHeadEnd() { end = range; break }
            guard try fill() else { throw TestClientError("connection closed before a response head (\(buffer.count) bytes)") }
        }
        let headBytes = buffer[0..<end!]
        buffer.removeFirst(end! + 4)
        let lines = String(decoding: headBytes, as: UTF8.self).components(separatedBy: "\r\n")
        let statusParts = lines[0].split(separator: " ", maxSplits: 2)
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else { throw TestClientError("bad status line \(lines[0])") }
        var headers = HTTPHeaders()
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers.add(String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        var body: [UInt8] = []
        let noBody = head || status == 204 || status == 304 || (100..<200).contains(status)
        if !noBody {
            if let length = headers["Content-Length"].flatMap(Int.init) {
                while buffer.count < length {
                    guard try fill() else { throw TestClientError("connection closed in the body") }
                }
                body = Array(buffer[0..<length])
                buffer.removeFirst(length)
            } else if headers["Transfer-Encoding"]?.lowercased() == "chunked" {
                while true {
                    let sizeLine = try readUntil("\r\n")
                    guard let size = Int(sizeLine.dropLast(), radix: 16) else { throw TestClientError("bad chunk size line \(sizeLine)") }
                    if size == 0 {
                        while try readUntil("\r\n") != "\r\n" {} // trailers, then the empty line
                        break
                    }
                    body += try readBytes(size)
                    guard try readUntil("\r\n") == "\r\n" else { throw TestClientError("a chunk's data does not end with CRLF") }
                }
            } else {
                while try fill() {}
                body = buffer
                buffer = []
            }
        }
        return WireResponse(version: String(statusParts[0]), status: status, headers: headers, body: body)
    }

    /// The bytes up to and including the next `marker`, as text (a streamed body read as it comes).
    public func readUntil(_ marker: String) throws -> String {
        let needle = Array(marker.utf8)
        var searched = 0
        while true {
            if buffer.count >= needle.count {
                for i in max(0, searched - needle.count)...(buffer.count - needle.count) where Array(buffer[i..<(i + needle.count)]) == needle {
                    let text = String(decoding: buffer[0..<(i + needle.count)], as: UTF8.self)
                    buffer.removeFirst(i + needle.count)
                    return text
                }
                searched = buffer.count
            }
            guard try fill() else { throw TestClientError("connection closed before \(marker.debugDescription)") }
        }
    }

    /// Exactly `count` bytes.
    public func readBytes(_ count: Int) throws -> [UInt8] {
        while buffer.count < count {
            guard try fill() else { throw TestClientError("connection closed after \(buffer.count) of \(count) bytes") }
        }
        defer { buffer.removeFirst(count) }
        return Array(buffer[0..<count])
    }

    private func findHeadEnd() -> Int? {
        guard buffer.count >= 4 else { return nil }
        for i in 0...(buffer.count - 4) where buffer[i] == 13 && buffer[i + 1] == 10 && buffer[i + 2] == 13 && buffer[i + 3] == 10 {
            return i
        }
        return nil
    }

    /// One request on a fresh connection, for what only a socket shows (the server's own
    /// behaviour, streams, a smoke set of pages). `timeout` is how long to wait for each read
    /// (seconds); `headOnly` reads no body (a stream's never ends).
    public static func request(port: Int, _ method: String, _ target: String, headers: [(String, String)] = [],
                               body: [UInt8] = [], source: String? = nil, timeout: Double = 5, headOnly: Bool = false) throws -> WireResponse {
        let client = try TestClient(port: port, timeout: timeout, source: source)
        try client.send(requestBytes(method, target, host: "127.0.0.1:\(port)", headers: headers, body: body))
        return try client.readResponse(head: headOnly || method == "HEAD")
    }

    /// One request through `server` without a socket (`Server.exchange` below): the same bytes as
    /// `request(port:…)` sends, answered on this thread, the answer read as off the wire. The
    /// usual way application tests talk to the application.
    public static func exchange(with server: Server, _ method: String, _ target: String, headers: [(String, String)] = [],
                                body: [UInt8] = [], source: String? = nil) throws -> WireResponse {
        let bytes = requestBytes(method, target, host: "127.0.0.1:\(server.port)", headers: headers, body: body)
        let answer = TestClient(received: server.exchange(bytes, from: source ?? "127.0.0.1"))
        return try answer.readResponse(head: method == "HEAD")
    }

    private static func requestBytes(_ method: String, _ target: String, host: String, headers: [(String, String)],
                                     body: [UInt8]) -> [UInt8] {
        var text = "\(method) \(target) HTTP/1.1\r\nHost: \(host)\r\nConnection: close\r\n"
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        if !body.isEmpty || method == "POST" { text += "Content-Length: \(body.count)\r\n" }
        text += "\r\n"
        return Array(text.utf8) + body
    }
}

extension Server {
    /// One request's bytes in, the response's bytes out, without a connection: parsed by the
    /// parser a connection uses and answered as a loop answers. Tests in the same process check
    /// pages and forms this way without a socket per request; the socket's own behaviour
    /// (pipelining, timeouts, limits on connections) is tested over sockets.
    public func exchange(_ bytes: [UInt8], from remoteAddress: String = "127.0.0.1") -> [UInt8] {
        var parser = RequestParser(limits: configuration.limits)
        var index = 0
        while true {
            switch parser.next(bytes, &index) {
            case .head: continue
            case .needMore: return errorBytes(.badRequest)
            case .error(let status): return errorBytes(status)
            case .request(let request): return answerInPlace(request, from: remoteAddress)
            }
        }
    }
}

/// Waits until `condition` holds, checking every few milliseconds; throws with `what` after
/// `timeout` seconds. Tests wait for what they need, not for a guessed time.
public func waitUntil(_ what: String, timeout: Double = 10, _ condition: () throws -> Bool) throws {
    let deadline = Date().addingTimeInterval(timeout)
    while try !condition() {
        guard Date() < deadline else { throw TestClientError("timed out waiting until \(what)") }
        usleep(5_000)
    }
}

/// A TCP port free on 127.0.0.1 now (bound to port 0 and released), for a server started in
/// another process; not a guessed number that something else may hold.
public func freeLoopbackPort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw TestClientError("socket: \(errno)") }
    defer { Glibc.close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
        }
    }
    guard bound else { throw TestClientError("bind: \(errno)") }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// A value shared between a test and the threads it starts, read and changed under a lock.
public final class Locked<Value>: Sendable {
    private let stored: Mutex<Value>

    public init(_ value: sending Value) { stored = Mutex(value) }

    public var value: Value { stored.withLock { $0 } }

    public func update(_ change: (inout Value) -> Void) { stored.withLock { change(&$0) } }
}
