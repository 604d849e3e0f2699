import Foundation
import HTTPServer
import Synchronization

/// gzip for text responses when the client accepts it (HTML, CSS, JS, SVG, feeds). Responses
/// with an `ETag` (static files, the palette) are compressed once per tag and kept; pages are
/// compressed per response at a fast level; kept pages, and pages showing parts deflated ahead
/// of time (`Response.html(_:for:status:)`), arrive already compressed.
///
/// The gzip form of a tagged response is another representation, so it gets a tag of its own
/// (`"…-gz"`), and this layer answers `If-None-Match` for whichever representation it picked
/// (RFC 9110 §8.8.3, §13.1.2): a client holding the plain body never gets 304 for the gzip one.
final class ResponseCompression: Sendable {
    /// Compressed bodies by path and tag: static files and the palette, a few hundred KiB in all.
    private let byTag = Mutex(LRUCache<String, [UInt8]>(maximumCount: 1_000, maximumCost: 8 << 20))
    /// Smaller bodies are not worth the header and the work.
    static let minimumSize = 1_024

    var keptBytes: Int { byTag.withLock { $0.totalCost } }
    var byteBound: Int { byTag.withLock { $0.maximumCost } }

    func middleware(_ request: Request, _ context: AppContext, _ next: Router<AppContext>.Handler) throws -> Response {
        var response = try next(request, context)
        if response.bodyParts.count >= Self.minimumSize, response.headers["Content-Encoding"] == nil,
           let type = response.headers["Content-Type"], Gzip.isCompressible(contentType: type) {
            response.headers.set("Vary", varyAddingAcceptEncoding(response.headers["Vary"]))
            if acceptsGzip(request) { compress(&response, path: request.path) }
        }
        // One answer to `If-None-Match` for every tagged response, by the tag of what was picked.
        if response.status == .ok, let tag = response.headers["ETag"], request.ifNoneMatch(tag) {
            response.status = .notModified
            response.body = []
            response.headers.remove("Content-Encoding")
            response.headers.remove("Content-Length")
        }
        return response
    }

    private func compress(_ response: inout Response, path: String) {
        if let tag = response.headers["ETag"] {
            let gzipTag = Self.gzipTag(tag), key = path + " " + gzipTag
            if let kept = byTag.withLock({ $0.value(for: key) }) {
                response.body = kept
            } else {
                let compressed = Gzip.compress(response.body, level: 9)
                byTag.withLock { $0.set(compressed, for: key, cost: compressed.count) }
                response.body = compressed
            }
            response.headers.set("ETag", gzipTag)
        } else {
            response.bodyParts = Gzip.compress(response.bodyParts, reusing: [], level: 1)
        }
        response.headers.set("Content-Encoding", "gzip")
    }

    /// `"abc"` → `"abc-gz"`, `W/"abc"` → `W/"abc-gz"`.
    static func gzipTag(_ tag: String) -> String {
        tag.hasSuffix("\"") ? String(tag.dropLast()) + "-gz\"" : tag + "-gz"
    }

    private func varyAddingAcceptEncoding(_ vary: String?) -> String {
        guard let vary, !vary.isEmpty else { return "Accept-Encoding" }
        return vary.lowercased().contains("accept-encoding") ? vary : vary + ", Accept-Encoding"
    }
}
