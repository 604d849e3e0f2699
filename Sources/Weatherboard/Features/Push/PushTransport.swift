import CCurl
import Foundation

/// One POST to a push service through libcurl (TLS, HTTP/2 where offered, timeouts), blocking
/// for at most `timeout` seconds: called by the push sender's thread, never by a request.
enum PushTransport {
    struct Answer {
        var status: Int
        /// `Retry-After` in seconds, when the service gave one.
        var retryAfter: Int?
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    static func post(_ url: String, headers: [(String, String)], body: [UInt8], timeout: Int) throws -> Answer {
        guard let curl = curl_easy_init() else { throw Failure(description: "libcurl could not start a transfer") }
        defer { curl_easy_cleanup(curl) }
        var list: UnsafeMutablePointer<curl_slist>?
        for (name, value) in headers { list = curl_slist_append(list, "\(name): \(value)") }
        defer { curl_slist_free_all(list) }
        let received = Received()
        var failures: [CURLcode] = []
        func set(_ code: CURLcode) { if code != CURLE_OK { failures.append(code) } }
        set(wb_curl_set_string(curl, CURLOPT_URL, url))
        set(wb_curl_set_string(curl, CURLOPT_PROTOCOLS_STR, "https,http"))
        set(wb_curl_set_long(curl, CURLOPT_POST, 1))
        set(wb_curl_set_long(curl, CURLOPT_POSTFIELDSIZE, body.count))
        set(wb_curl_set_pointer(curl, CURLOPT_HTTPHEADER, list))
        set(wb_curl_set_long(curl, CURLOPT_NOSIGNAL, 1))
        set(wb_curl_set_long(curl, CURLOPT_TIMEOUT, timeout))
        set(wb_curl_set_long(curl, CURLOPT_CONNECTTIMEOUT, max(1, timeout / 2)))
        set(wb_curl_set_long(curl, CURLOPT_FOLLOWLOCATION, 0))
        // The answer's body is not read (a push service says what it means in the status); its
        // header lines are, for Retry-After, at most 16 KiB of them.
        set(wb_curl_set_callback(curl, CURLOPT_WRITEFUNCTION) { _, size, count, _ in size * count })
        set(wb_curl_set_callback(curl, CURLOPT_HEADERFUNCTION) { buffer, size, count, userdata in
            guard let buffer, let userdata else { return 0 }
            let line = UnsafeRawBufferPointer(start: buffer, count: size * count)
            Unmanaged<Received>.fromOpaque(userdata).takeUnretainedValue().add(line)
            return size * count
        })
        let result = body.withUnsafeBufferPointer { bytes in
            withExtendedLifetime(received) { () -> CURLcode in
                set(wb_curl_set_pointer(curl, CURLOPT_POSTFIELDS, UnsafeMutableRawPointer(mutating: bytes.baseAddress)))
                set(wb_curl_set_pointer(curl, CURLOPT_HEADERDATA, Unmanaged.passUnretained(received).toOpaque()))
                guard failures.isEmpty else { return failures[0] }
                return curl_easy_perform(curl)
            }
        }
        guard result == CURLE_OK else { throw Failure(description: String(cString: curl_easy_strerror(result))) }
        var status = 0
        _ = wb_curl_response_code(curl, &status)
        return Answer(status: status, retryAfter: received.retryAfter)
    }

    private final class Received {
        var bytes = 0
        var retryAfter: Int?

        func add(_ line: UnsafeRawBufferPointer) {
            bytes += line.count
            guard bytes <= 16_384 else { return }
            let text = String(decoding: line, as: UTF8.self)
            guard let colon = text.firstIndex(of: ":"), text[..<colon].lowercased() == "retry-after" else { return }
            retryAfter = Int(text[text.index(after: colon)...].trimmingCharacters(in: .whitespacesAndNewlines)).map { min(max($0, 0), 86_400) }
        }
    }
}
