import Foundation

/// One POST to a push service (`Curl`), blocking for at most `timeout` seconds: called by the
/// push sender's thread, never by a request.
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
        do {
            // The answer's body is not needed (a push service says what it means in the status).
            let answer = try Curl.perform(url, method: "POST", headers: headers, body: body, maximumBytes: 64 << 10, timeout: Double(timeout))
            return Answer(status: answer.status, retryAfter: answer.retryAfter)
        } catch let failure as Curl.Failure {
            throw Failure(description: failure.description)
        }
    }
}
