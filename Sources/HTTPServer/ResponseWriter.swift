import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Serialises responses to bytes: status line, the handler's fields, then `Server`, `Date`,
/// `Content-Length` and `Connection` as the server decides them.
struct ResponseWriter {
    let serverName: String

    /// - Parameters:
    ///   - omitBody: for `HEAD`: the same fields as `GET`, no body.
    ///   - close: whether the connection closes after this response.
    ///   - keepAliveHTTP10: an HTTP/1.0 client asked for keep-alive, which must be confirmed.
    /// - Returns: the head, and the body to write after it. A body of a few kilobytes rides in the
    ///   head's buffer; a larger one (a page) is handed on as the handler made it, not copied.
    ///   - chunked: a streamed body on HTTP/1.1 (`Transfer-Encoding: chunked`); a streamed body
    ///     on HTTP/1.0 has neither field and ends with the connection.
    func serialize(_ response: Response, omitBody: Bool, close: Bool, keepAliveHTTP10: Bool,
                   date: String, chunked: Bool = false) -> (head: [UInt8], body: ResponseBody) {
        let status = response.status
        let body = response.bodyParts
        let bodyAllowed = status.code >= 200 && status.code != 204 && status.code != 304
        let sendsBody = bodyAllowed && !omitBody && !body.isEmpty
        let bodyInHead = sendsBody && body.count <= Self.bodyCopiedIntoHead
        var out: [UInt8] = []
        out.reserveCapacity(160 + response.headers.fields.count * 40 + (bodyInHead ? body.count : 0))
        // Bytes appended directly: string interpolation made this a quarter of a bare request.
        out.append(contentsOf: "HTTP/1.1 ".utf8)
        appendDecimal(status.code, to: &out)
        out.append(0x20)
        out.append(contentsOf: status.reason.utf8)
        out.append(contentsOf: "\r\n".utf8)
        for field in response.headers.fields {
            if field.name.caseInsensitiveEquals("Content-Length") || field.name.caseInsensitiveEquals("Connection")
                || field.name.caseInsensitiveEquals("Date") || field.name.caseInsensitiveEquals("Transfer-Encoding") {
                continue
            }
            out.append(contentsOf: field.name.utf8)
            out.append(contentsOf: ": ".utf8)
            // A handler's value never ends the header section early (response splitting).
            for byte in field.value.utf8 where byte != CR && byte != LF { out.append(byte) }
            out.append(contentsOf: "\r\n".utf8)
        }
        out.append(contentsOf: "Server: ".utf8)
        out.append(contentsOf: serverName.utf8)
        out.append(contentsOf: "\r\nDate: ".utf8)
        out.append(contentsOf: date.utf8)
        if chunked {
            out.append(contentsOf: "\r\nTransfer-Encoding: chunked".utf8)
        } else if bodyAllowed && response.stream == nil {
            out.append(contentsOf: "\r\nContent-Length: ".utf8)
            appendDecimal(body.count, to: &out)
        }
        if close {
            out.append(contentsOf: "\r\nConnection: close".utf8)
        } else if keepAliveHTTP10 {
            out.append(contentsOf: "\r\nConnection: keep-alive".utf8)
        }
        out.append(contentsOf: "\r\n\r\n".utf8)
        if bodyInHead {
            if body.isOneArray { out += body.joined() } else { body.forEachStretch(in: 0..<body.count) { out.append(contentsOf: $0) } }
        }
        return (out, sendsBody && !bodyInHead ? body : ResponseBody())
    }

    /// A non-negative number's ASCII digits.
    private func appendDecimal(_ number: Int, to out: inout [UInt8]) {
        var divisor = 1
        while divisor <= number / 10 { divisor *= 10 }
        var rest = max(0, number)
        while divisor > 0 {
            out.append(0x30 + UInt8(rest / divisor))
            rest %= divisor
            divisor /= 10
        }
    }

    /// Below this a body is cheaper copied than written as a second chunk.
    static let bodyCopiedIntoHead = 4096

    /// A minimal response for errors found before any handler runs (parse errors, timeouts).
    func errorBytes(_ status: HTTPStatus, date: String) -> [UInt8] {
        // Small enough to come back whole in the head.
        let body = "\(status.code) \(status.reason)\n"
        let response = Response(status: status, headers: HTTPHeaders([("Content-Type", "text/plain; charset=utf-8"),
                                                                     ("X-Content-Type-Options", "nosniff")]),
                                body: Array(body.utf8))
        return serialize(response, omitBody: false, close: true, keepAliveHTTP10: false, date: date).head
    }
}

/// The `Date` field value, formatted once per second per thread (RFC 9110 §5.6.7 IMF-fixdate).
final class DateCache {
    private var second: Int = -1
    private var value = ""

    func current() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        if now.tv_sec != second {
            second = now.tv_sec
            value = httpDate(secondsSince1970: now.tv_sec)
        }
        return value
    }
}

/// Formats a time as an IMF-fixdate, e.g. `Sun, 06 Nov 1994 08:49:37 GMT`.
public func httpDate(secondsSince1970 seconds: Int) -> String {
    var t = time_t(seconds)
    var parts = tm()
    gmtime_r(&t, &parts)
    let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
    return "\(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(parts.tm_year + 1900) "
        + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
}

/// Parses an IMF-fixdate (the only form servers generate); nil for anything else.
public func parseHTTPDate(_ text: String) -> Int? {
    let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    let parts = text.split(separator: " ")
    guard parts.count == 6, parts[5] == "GMT", let day = Int(parts[1]), let month = months.firstIndex(of: String(parts[2])),
          let year = Int(parts[3]) else { return nil }
    let clock = parts[4].split(separator: ":").compactMap { Int($0) }
    guard clock.count == 3 else { return nil }
    var t = tm()
    t.tm_year = Int32(year - 1900)
    t.tm_mon = Int32(month)
    t.tm_mday = Int32(day)
    t.tm_hour = Int32(clock[0])
    t.tm_min = Int32(clock[1])
    t.tm_sec = Int32(clock[2])
    return Int(timegm(&t))
}
