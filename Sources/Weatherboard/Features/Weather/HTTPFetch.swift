import Foundation

/// A blocking GET to a weather provider through libcurl (`Curl`), bounded by `timeout`; what
/// comes back is bounded too: at most `maximumBytes` are read (a larger answer is a failure,
/// read no further), and a redirect is followed only on the same scheme, host and port (a
/// provider's answer never makes us fetch from somewhere else), three at most.
enum HTTPFetch {
    /// Open-Meteo's answer for one city is about 20 KB, KMA's about 150 KB (a feed of warnings asks for more).
    static let maximumBytes = 2 << 20
    static let maximumRedirects = 3

    static func get(_ url: URL, timeout: TimeInterval, maximumBytes: Int = maximumBytes) throws -> (Int, Data) {
        let host = url.host ?? "upstream"
        let deadline = Date().addingTimeInterval(timeout)
        var target = url
        for _ in 0...maximumRedirects {
            let answer: Curl.Answer
            do {
                answer = try Curl.perform(target.absoluteString, maximumBytes: maximumBytes, timeout: max(0.05, deadline.timeIntervalSinceNow))
            } catch let failure as Curl.Failure {
                // Too large is about the answer (this one), not the provider failing.
                throw failure.isTooLarge ? UpstreamError.answer("\(host): \(failure.description)") : UpstreamError("\(host): \(failure.description)")
            }
            guard (300..<400).contains(answer.status), let location = answer.location,
                  let next = URL(string: location, relativeTo: target)?.absoluteURL,
                  next.scheme == url.scheme, next.host == url.host, next.port == url.port else {
                // Not followed: the redirect itself is the answer, a status the provider treats as a failure.
                return (answer.status, Data(answer.body))
            }
            target = next
        }
        throw UpstreamError("\(host): more than \(maximumRedirects) redirects")
    }
}
