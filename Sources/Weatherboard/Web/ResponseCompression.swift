import Foundation
import HTTPServer
import Synchronization

/// gzip for text responses when the client accepts it (HTML, CSS, JS, SVG, feeds). Responses
/// with an `ETag` (static files, the palette) are compressed once per tag and kept; pages are
/// compressed per response at a fast level; kept pages, and pages showing parts deflated ahead
/// of time (`Response.html(_:for:status:)`), arrive already compressed.
final class ResponseCompression: Sendable {
    private let byTag = Mutex<[String: [UInt8]]>([:])
    /// Smaller bodies are not worth the header and the work.
    static let minimumSize = 1_024

    func middleware(_ request: Request, _ context: AppContext, _ next: Router<AppContext>.Handler) throws -> Response {
        var response = try next(request, context)
        guard response.bodyParts.count >= Self.minimumSize, response.headers["Content-Encoding"] == nil,
              let type = response.headers["Content-Type"], Gzip.isCompressible(contentType: type) else { return response }
        response.headers.set("Vary", varyAddingAcceptEncoding(response.headers["Vary"]))
        guard acceptsGzip(request) else { return response }
        if let tag = response.headers["ETag"] {
            let key = request.path + " " + tag
            if let kept = byTag.withLock({ $0[key] }) {
                response.body = kept
            } else {
                let compressed = Gzip.compress(response.body, level: 9)
                byTag.withLock { byTag in
                    if byTag.count > 1_000 { byTag.removeAll() }
                    byTag[key] = compressed
                }
                response.body = compressed
            }
        } else {
            response.bodyParts = Gzip.compress(response.bodyParts, reusing: [], level: 1)
        }
        response.headers.set("Content-Encoding", "gzip")
        return response
    }

    private func varyAddingAcceptEncoding(_ vary: String?) -> String {
        guard let vary, !vary.isEmpty else { return "Accept-Encoding" }
        return vary.lowercased().contains("accept-encoding") ? vary : vary + ", Accept-Encoding"
    }
}
