import Foundation
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A blocking GET through URLSession, bounded by `timeout`; handlers run on worker threads.
/// What comes back is bounded too: at most `maximumBytes` are read (a larger answer is a
/// failure, read no further), and a redirect is followed only on the same scheme, host and port
/// (a provider's answer never makes us fetch from somewhere else).
enum HTTPFetch {
    /// Open-Meteo's answer for one city is about 20 KB, KMA's about 150 KB.
    static let maximumBytes = 2 << 20

    static func get(_ url: URL, timeout: TimeInterval) throws -> (Int, Data) {
        var request = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: timeout)
        request.setValue("Weatherboard/1.0", forHTTPHeaderField: "User-Agent")
        let transfer = Transfer(origin: url, limit: maximumBytes)
        // A session per fetch: its delegate holds this fetch's bytes alone. Fetches are rare
        // (one per city per half hour at most) and off the request path.
        let session = URLSession(configuration: .ephemeral, delegate: transfer, delegateQueue: nil)
        defer { session.finishTasksAndInvalidate() }
        let task = session.dataTask(with: request)
        task.resume()
        if transfer.done.wait(timeout: .now() + timeout + 0.5) == .timedOut {
            task.cancel()
            throw UpstreamError("\(url.host ?? "upstream"): timed out after \(timeout) s")
        }
        return try transfer.outcome()
    }

    /// One fetch's state, filled by URLSession's delegate callbacks on its own queue.
    final class Transfer: NSObject, URLSessionDataDelegate, Sendable {
        let origin: URL
        let limit: Int
        let done = DispatchSemaphore(value: 0)
        private struct State {
            var status: Int?
            var data = Data()
            var error: String?
        }
        private let state = Mutex(State())

        init(origin: URL, limit: Int) {
            self.origin = origin
            self.limit = limit
        }

        func outcome() throws -> (Int, Data) {
            let state = state.withLock { $0 }
            let host = origin.host ?? "upstream"
            if let error = state.error { throw UpstreamError("\(host): \(error)") }
            guard let status = state.status else { throw UpstreamError("\(host): no answer") }
            return (status, state.data)
        }

        func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
            let tooLarge = response.expectedContentLength > Int64(limit)
            state.withLock {
                $0.status = (response as? HTTPURLResponse)?.statusCode
                if tooLarge { $0.error = "the answer is larger than \(limit) bytes" }
            }
            completionHandler(tooLarge ? .cancel : .allow)
        }

        func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
            let tooLarge = state.withLock { state -> Bool in
                guard state.error == nil else { return true }
                if state.data.count + data.count > limit {
                    state.error = "the answer is larger than \(limit) bytes"
                    state.data = Data()
                    return true
                }
                state.data.append(data)
                return false
            }
            if tooLarge { dataTask.cancel() }
        }

        func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void) {
            let target = request.url
            let sameOrigin = target?.scheme == origin.scheme && target?.host == origin.host && target?.port == origin.port
            // Not followed: the redirect itself is the answer, a status the provider treats as a failure.
            completionHandler(sameOrigin ? request : nil)
        }

        func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
            if let error {
                state.withLock { if $0.error == nil { $0.error = error.localizedDescription } }
            }
            done.signal()
        }
    }
}
