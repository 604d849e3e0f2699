import Foundation
import HTTPServer
import Synchronization

/// Serves photos like static files: `/photos/{hash}.webp`, `.480.webp` and `.jpg`, immutable
/// (the address is the content's hash), with `ETag` and byte ranges, the type the site wrote, and
/// a policy that lets nothing in the file run. Recently served files are kept in memory; each is
/// looked at again in the database after `recheckAfter`, so that a photo a moderator removed on
/// another node stops being served here within that time.
final class PhotosController: Sendable {
    let database: AppDatabase
    let clock: @Sendable () -> Date
    private let kept: Mutex<LRUCache<String, Kept>>
    static let recheckAfter: TimeInterval = 60
    var keptBytes: Int { kept.withLock { $0.totalCost } }
    var byteBound: Int { kept.withLock { $0.maximumCost } }

    private struct Kept {
        var bytes: [UInt8]
        var readAt: Date
    }

    init(database: AppDatabase, clock: @escaping @Sendable () -> Date, keptBytes: Int = 64 << 20) {
        self.database = database
        self.clock = clock
        kept = Mutex(LRUCache(maximumCount: 4_096, maximumCost: keptBytes))
    }

    func addRoutes(to router: Router<AppContext>) {
        router.get("/photos/{file}") { [self] request, _ in try serve(request) }
    }

    static let cacheControl = "public, max-age=31536000, immutable"
    /// Nothing in a photo's response may run or load anything, whatever a browser makes of it.
    static let contentSecurityPolicy = "default-src 'none'; sandbox"

    func serve(_ request: Request) throws -> Response {
        guard let (hash, variant) = request.parameters["file"].flatMap(PhotoVariant.parse) else { throw HTTPError(.notFound) }
        let etag = "\"\(hash).\(variant.rawValue)\""
        let headers = HTTPHeaders([
            ("Cache-Control", Self.cacheControl),
            ("ETag", etag),
            ("Content-Type", variant.contentType),
            ("Accept-Ranges", "bytes"),
            ("X-Content-Type-Options", "nosniff"),
            ("Content-Security-Policy", Self.contentSecurityPolicy),
        ])
        let bytes = try file(hash, variant)
        if request.ifNoneMatch(etag) { return Response(status: .notModified, headers: headers) }
        if let range = request.headers["Range"], let answer = Self.range(range, of: bytes, headers: headers) { return answer }
        return Response(status: .ok, headers: headers, body: bytes)
    }

    /// The stored form, from memory while it was read from the database within `recheckAfter`;
    /// 404 when no post shows it any more.
    private func file(_ hash: String, _ variant: PhotoVariant) throws -> [UInt8] {
        let key = variant.path(hash), now = clock()
        if let entry = kept.withLock({ $0.value(for: key) }), now.timeIntervalSince(entry.readAt) < Self.recheckAfter { return entry.bytes }
        try Lane.waitsAllowed()
        guard let bytes = try database.readStatement({ try PhotoQueries.file(hash, variant, $0) }) else {
            kept.withLock { $0.removeValue(for: key) }
            throw HTTPError(.notFound)
        }
        kept.withLock { $0.set(Kept(bytes: bytes, readAt: now), for: key, cost: bytes.count + 64) }
        return bytes
    }

    /// Forgets a removed photo's files on this node at once.
    func forget(_ hash: String) {
        kept.withLock { cache in PhotoVariant.allCases.forEach { cache.removeValue(for: $0.path(hash)) } }
    }

    /// One range of `bytes=first-last`, `first-` or `-suffix` (RFC 9110 §14.1.2): 206 with
    /// `Content-Range`, or 416 when it starts past the end. Several ranges, or a malformed one,
    /// are answered with the whole file (nil), as the RFC allows.
    static func range(_ value: String, of bytes: [UInt8], headers: HTTPHeaders) -> Response? {
        guard value.hasPrefix("bytes="), !value.contains(",") else { return nil }
        let spec = value.dropFirst(6).trimmingCharacters(in: .whitespaces)
        let parts = spec.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        let length = bytes.count
        var first: Int, last: Int
        if parts[0].isEmpty {
            guard let suffix = Int(parts[1]), suffix > 0 else { return nil }
            first = max(0, length - suffix)
            last = length - 1
        } else {
            guard let start = Int(parts[0]), start >= 0 else { return nil }
            first = start
            if parts[1].isEmpty {
                last = length - 1
            } else {
                guard let end = Int(parts[1]), end >= start else { return nil }
                last = min(end, length - 1)
            }
        }
        var headers = headers
        guard first < length else {
            headers.set("Content-Range", "bytes */\(length)")
            return Response(status: .rangeNotSatisfiable, headers: headers)
        }
        headers.set("Content-Range", "bytes \(first)-\(last)/\(length)")
        return Response(status: .partialContent, headers: headers, body: Array(bytes[first...last]))
    }
}
