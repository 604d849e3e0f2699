import Foundation

/// How the site talks to providers: libcurl, bounded in size and time.
extension OpenIDProviders {
    /// A discovery document or key set (at most `keySetBytes`, 5 s).
    @Sendable static func fetchDocument(_ url: String) throws -> [UInt8] {
        let answer = try Curl.perform(url, headers: [("Accept", "application/json")], maximumBytes: keySetBytes, timeout: 5)
        guard answer.status == 200 else { throw Curl.Failure(description: "\(url) answered \(answer.status)") }
        return answer.body
    }

    /// A form posted to the token endpoint (64 KiB of answer at most, 10 s).
    @Sendable static func postForm(_ url: String, _ fields: [(String, String)]) throws -> (status: Int, body: [UInt8]) {
        let body = Array(fields.map { "\(percentEncode($0))=\(percentEncode($1))" }.joined(separator: "&").utf8)
        let answer = try Curl.perform(url, method: "POST", headers: [("Content-Type", "application/x-www-form-urlencoded"), ("Accept", "application/json")],
                                      body: body, maximumBytes: 65_536, timeout: 10)
        return (answer.status, answer.body)
    }
}
