import CCurl
import Foundation

/// The operator's mail relay (`--smtp-url smtp://user:pass@host:port`), spoken to through
/// libcurl: STARTTLS whenever the relay offers it (required with `?tls=required`), `smtps://`
/// for TLS from the first byte, certificates checked, AUTH when credentials are given.
struct SMTPRelay: Sendable, CustomStringConvertible {
    struct Problem: Error, CustomStringConvertible {
        let description: String
    }

    /// The URL without credentials or query.
    let url: String
    let username: String?
    let password: String?
    let tlsRequired: Bool
    /// Seconds a whole exchange with the relay may take (connecting: a third of it).
    var timeout = 30

    init(parsing text: String) throws {
        guard let parts = URLComponents(string: text), let scheme = parts.scheme?.lowercased(), scheme == "smtp" || scheme == "smtps",
              let host = parts.host, !host.isEmpty else {
            throw Problem(description: "--smtp-url must look like smtp://user:password@host:port (or smtps://)")
        }
        var tlsRequired = scheme == "smtps"
        for item in parts.queryItems ?? [] {
            switch (item.name, item.value) {
            case ("tls", "required"): tlsRequired = true
            case ("tls", "when-offered"): break
            default: throw Problem(description: "--smtp-url: unknown option \(item.name)=\(item.value ?? "") (tls=required or tls=when-offered)")
            }
        }
        let port = parts.port ?? (scheme == "smtps" ? 465 : 25)
        url = "\(scheme)://\(host.contains(":") ? "[\(host)]" : host):\(port)"
        username = parts.percentEncodedUser.flatMap { $0.removingPercentEncoding }
        password = parts.percentEncodedPassword.flatMap { $0.removingPercentEncoding }
        self.tlsRequired = tlsRequired
        curl_global_init(Int(CURL_GLOBAL_DEFAULT))
    }

    /// For the log: where, as whom, and whether TLS is required; never the password.
    var description: String {
        url + (username.map { " as \($0)" } ?? "") + (tlsRequired ? " (TLS required)" : " (STARTTLS when offered)")
    }

    /// Hands one message to the relay; throws with the relay's or the connection's reason.
    /// Blocks for at most `timeout` seconds: called by the mail sender, never by a request.
    func send(_ message: [UInt8], from: MailAddress, to: MailAddress) throws {
        guard let curl = curl_easy_init() else { throw Problem(description: "libcurl could not start a transfer") }
        defer { curl_easy_cleanup(curl) }
        let upload = Upload(bytes: message)
        let recipients = curl_slist_append(nil, "<\(to.text)>")
        defer { curl_slist_free_all(recipients) }
        var failures: [CURLcode] = []
        func set(_ code: CURLcode) { if code != CURLE_OK { failures.append(code) } }
        set(wb_curl_set_string(curl, CURLOPT_URL, url))
        set(wb_curl_set_string(curl, CURLOPT_PROTOCOLS_STR, "smtp,smtps"))
        set(wb_curl_set_long(curl, CURLOPT_USE_SSL, Int(tlsRequired ? CURLUSESSL_ALL.rawValue : CURLUSESSL_TRY.rawValue)))
        if let username { set(wb_curl_set_string(curl, CURLOPT_USERNAME, username)) }
        if let password { set(wb_curl_set_string(curl, CURLOPT_PASSWORD, password)) }
        set(wb_curl_set_string(curl, CURLOPT_MAIL_FROM, "<\(from.text)>"))
        set(wb_curl_set_pointer(curl, CURLOPT_MAIL_RCPT, recipients))
        set(wb_curl_set_long(curl, CURLOPT_UPLOAD, 1))
        set(wb_curl_set_long(curl, CURLOPT_NOSIGNAL, 1))
        set(wb_curl_set_long(curl, CURLOPT_TIMEOUT, timeout))
        set(wb_curl_set_long(curl, CURLOPT_CONNECTTIMEOUT, max(1, timeout / 3)))
        set(wb_curl_set_read_function(curl) { buffer, size, count, userdata in
            guard let buffer, let userdata else { return 0 }
            return Unmanaged<Upload>.fromOpaque(userdata).takeUnretainedValue().read(into: buffer, room: size * count)
        })
        let result = withExtendedLifetime(upload) { () -> CURLcode in
            set(wb_curl_set_pointer(curl, CURLOPT_READDATA, Unmanaged.passUnretained(upload).toOpaque()))
            guard failures.isEmpty else { return failures[0] }
            return curl_easy_perform(curl)
        }
        guard result == CURLE_OK else {
            var reply: Int = 0
            _ = wb_curl_response_code(curl, &reply)
            let reason = String(cString: curl_easy_strerror(result))
            throw Problem(description: reply > 0 ? "\(reason) (the relay answered \(reply))" : reason)
        }
    }

    /// The message's bytes, handed to libcurl as it asks for them.
    private final class Upload {
        let bytes: [UInt8]
        var offset = 0
        init(bytes: [UInt8]) { self.bytes = bytes }

        func read(into buffer: UnsafeMutablePointer<CChar>, room: Int) -> Int {
            let count = min(room, bytes.count - offset)
            bytes.withUnsafeBufferPointer { source in
                UnsafeMutableRawPointer(buffer).copyMemory(from: source.baseAddress! + offset, byteCount: count)
            }
            offset += count
            return count
        }
    }
}
