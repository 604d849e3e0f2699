import CCurl
import Foundation
import Synchronization

/// Blocking HTTP requests through libcurl, for the site's calls out (weather providers, push
/// services) from threads of their own, never a request's. While an answer is awaited the
/// thread sleeps in the kernel (curl polls its socket): a slow provider costs time, not CPU.
/// Transfers reuse a pool of easy handles, and with them their connections (keep-alive, TLS
/// sessions). TLS is verified; redirects are never followed here (callers decide).
enum Curl {
    /// A URL's scheme, host and port as libcurl itself reads it when it sends (its URL API), so
    /// that what a check accepted is what a transfer reaches; nil when libcurl would not take it.
    static func parts(of url: String) -> (scheme: String, host: String, port: Int?)? {
        guard url.utf8.count <= 2048, let handle = curl_url() else { return nil }
        defer { curl_url_cleanup(handle) }
        guard curl_url_set(handle, CURLUPART_URL, url, 0) == CURLUE_OK else { return nil }
        func part(_ which: CURLUPart) -> String? {
            var out: UnsafeMutablePointer<CChar>?
            guard curl_url_get(handle, which, &out, 0) == CURLUE_OK, let out else { return nil }
            defer { curl_free(out) }
            return String(cString: out)
        }
        guard let scheme = part(CURLUPART_SCHEME), let host = part(CURLUPART_HOST), part(CURLUPART_USER) == nil else { return nil }
        return (scheme.lowercased(), host.lowercased(), part(CURLUPART_PORT).flatMap { Int($0) })
    }

    struct Answer {
        var status: Int
        var body: [UInt8]
        /// `Location` and `Retry-After` (seconds), when given.
        var location: String?
        var retryAfter: Int?
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
        /// The answer came but was longer than allowed: asking again gets the same.
        var isTooLarge = false
    }

    /// Handles with their connection caches, for the next transfer (at most `pooled` kept).
    private struct Handle: @unchecked Sendable { let pointer: UnsafeMutableRawPointer }
    private static let pool = Mutex<[Handle]>([])
    private static let pooled = 16

    /// - Parameters:
    ///   - maximumBytes: an answer whose body is longer is a failure, read no further.
    ///   - timeout: for the whole transfer, connecting included.
    static func perform(_ url: String, method: String = "GET", headers: [(String, String)] = [], body: [UInt8] = [],
                        maximumBytes: Int, timeout: TimeInterval) throws -> Answer {
        guard let handle = pool.withLock({ $0.popLast() })?.pointer ?? curl_easy_init() else {
            throw Failure(description: "libcurl could not start a transfer")
        }
        var reusable = false
        defer {
            if reusable {
                curl_easy_reset(handle) // options go; connections, TLS sessions and the DNS cache stay
                let kept = pool.withLock { handles in
                    guard handles.count < pooled else { return false }
                    handles.append(Handle(pointer: handle))
                    return true
                }
                if !kept { curl_easy_cleanup(handle) }
            } else {
                curl_easy_cleanup(handle)
            }
        }
        var list: UnsafeMutablePointer<curl_slist>?
        for (name, value) in headers where !(name + value).contains(where: { $0 == "\r" || $0 == "\n" }) {
            list = curl_slist_append(list, "\(name): \(value)")
        }
        defer { curl_slist_free_all(list) }
        let received = Received(limit: maximumBytes)
        var failures: [CURLcode] = []
        func set(_ code: CURLcode) { if code != CURLE_OK { failures.append(code) } }
        set(wb_curl_set_string(handle, CURLOPT_URL, url))
        set(wb_curl_set_string(handle, CURLOPT_PROTOCOLS_STR, "https,http"))
        set(wb_curl_set_string(handle, CURLOPT_USERAGENT, "Weatherboard/1.0"))
        set(wb_curl_set_string(handle, CURLOPT_ACCEPT_ENCODING, "")) // gzip and deflate, decoded before the limit counts
        set(wb_curl_set_pointer(handle, CURLOPT_HTTPHEADER, list))
        set(wb_curl_set_long(handle, CURLOPT_NOSIGNAL, 1))
        set(wb_curl_set_long(handle, CURLOPT_TIMEOUT_MS, Int(clampedSeconds: timeout * 1000)))
        set(wb_curl_set_long(handle, CURLOPT_CONNECTTIMEOUT_MS, Int(clampedSeconds: max(0.5, timeout / 2) * 1000)))
        set(wb_curl_set_long(handle, CURLOPT_FOLLOWLOCATION, 0))
        if method == "POST" {
            set(wb_curl_set_long(handle, CURLOPT_POST, 1))
            set(wb_curl_set_long(handle, CURLOPT_POSTFIELDSIZE, body.count))
        } else if method != "GET" {
            set(wb_curl_set_string(handle, CURLOPT_CUSTOMREQUEST, method))
        }
        set(wb_curl_set_callback(handle, CURLOPT_WRITEFUNCTION) { buffer, size, count, userdata in
            guard let buffer, let userdata else { return 0 }
            let chunk = UnsafeRawBufferPointer(start: buffer, count: size * count)
            // Past the limit, answering less than was given stops the transfer.
            return Unmanaged<Received>.fromOpaque(userdata).takeUnretainedValue().append(chunk) ? size * count : 0
        })
        set(wb_curl_set_callback(handle, CURLOPT_HEADERFUNCTION) { buffer, size, count, userdata in
            guard let buffer, let userdata else { return 0 }
            Unmanaged<Received>.fromOpaque(userdata).takeUnretainedValue().header(UnsafeRawBufferPointer(start: buffer, count: size * count))
            return size * count
        })
        let result = body.withUnsafeBufferPointer { bytes in
            withExtendedLifetime(received) { () -> CURLcode in
                let opaque = Unmanaged.passUnretained(received).toOpaque()
                set(wb_curl_set_pointer(handle, CURLOPT_WRITEDATA, opaque))
                set(wb_curl_set_pointer(handle, CURLOPT_HEADERDATA, opaque))
                if method == "POST" { set(wb_curl_set_pointer(handle, CURLOPT_POSTFIELDS, UnsafeMutableRawPointer(mutating: bytes.baseAddress))) }
                guard failures.isEmpty else { return failures[0] }
                return curl_easy_perform(handle)
            }
        }
        if received.tooLarge { throw Failure(description: "the answer is larger than \(maximumBytes) bytes", isTooLarge: true) }
        if result == CURLE_OPERATION_TIMEDOUT { throw Failure(description: "timed out after \(Int(clampedSeconds: timeout * 1000)) ms") }
        guard result == CURLE_OK else { throw Failure(description: String(cString: curl_easy_strerror(result))) }
        reusable = true
        var status = 0
        _ = wb_curl_response_code(handle, &status)
        return Answer(status: status, body: received.body, location: received.location, retryAfter: received.retryAfter)
    }

    /// One transfer's answer as libcurl hands it over, on the transfer's thread.
    private final class Received {
        let limit: Int
        var body: [UInt8] = []
        var tooLarge = false
        var headerBytes = 0
        var location: String?
        var retryAfter: Int?

        init(limit: Int) { self.limit = limit }

        func append(_ chunk: UnsafeRawBufferPointer) -> Bool {
            guard body.count + chunk.count <= limit else {
                tooLarge = true
                body = []
                return false
            }
            body.append(contentsOf: chunk)
            return true
        }

        /// Header lines of every response in the transfer, 16 KiB of them at most; a new status
        /// line starts a response's afresh.
        func header(_ line: UnsafeRawBufferPointer) {
            headerBytes += line.count
            guard headerBytes <= 16_384 else { return }
            let text = String(decoding: line, as: UTF8.self)
            if text.hasPrefix("HTTP/") { (location, retryAfter) = (nil, nil) }
            guard let colon = text.firstIndex(of: ":") else { return }
            let value = text[text.index(after: colon)...].trimmingCharacters(in: .whitespacesAndNewlines)
            switch text[..<colon].lowercased() {
            case "location": location = value
            case "retry-after": retryAfter = Int(value).map { min(max($0, 0), 86_400) }
            default: break
            }
        }
    }
}
