import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Serves files under one folder with validators (`ETag`, `Last-Modified` → 304) and caching
/// headers. No request can name a file outside the folder: segments are decoded before checking,
/// dot-segments, hidden files and NULs are refused, and the resolved path (symlinks followed)
/// must still lie inside the folder.
public struct StaticFiles: Sendable {
    public let root: String
    public let cacheControl: String
    /// Whether this answers `If-None-Match` and `If-Modified-Since` itself (304); off where a
    /// layer above picks the representation (gzip or not) and so the validator that applies.
    public let answersConditionals: Bool

    public init(root: String, cacheControl: String = "public, max-age=3600", answersConditionals: Bool = true) {
        self.root = StaticFiles.resolve(root) ?? root
        self.cacheControl = cacheControl
        self.answersConditionals = answersConditionals
    }

    /// Answers a request for `relativePath` (the decoded tail of the URL, segments joined by "/").
    public func response(for relativePath: String, request: Request) throws -> Response {
        let segments = relativePath.split(separator: "/", omittingEmptySubsequences: false)
        for segment in segments {
            if segment.isEmpty || segment.hasPrefix(".") || segment.contains("\\") || segment.utf8.contains(0) {
                throw HTTPError(.notFound)
            }
        }
        guard let resolved = StaticFiles.resolve(root + "/" + relativePath), resolved.hasPrefix(root + "/") else {
            throw HTTPError(.notFound)
        }
        var info = stat()
        guard stat(resolved, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { throw HTTPError(.notFound) }
        let modified = Int(info.st_mtim.tv_sec)
        let etag = "\"\(String(info.st_size, radix: 16))-\(String(modified, radix: 16))-\(String(info.st_mtim.tv_nsec / 1000, radix: 16))\""
        var headers = HTTPHeaders([
            ("ETag", etag),
            ("Last-Modified", httpDate(secondsSince1970: modified)),
            ("Cache-Control", cacheControl),
        ])
        if !answersConditionals {
        } else if request.headers["If-None-Match"] != nil {
            if request.ifNoneMatch(etag) { return Response(status: .notModified, headers: headers) }
        } else if let since = request.headers["If-Modified-Since"].flatMap(parseHTTPDate), modified <= since {
            return Response(status: .notModified, headers: headers)
        }
        guard let data = FileManager.default.contents(atPath: resolved) else { throw HTTPError(.notFound) }
        headers.add("Content-Type", StaticFiles.contentType(for: resolved))
        return Response(status: .ok, headers: headers, body: [UInt8](data))
    }

    static func resolve(_ path: String) -> String? {
        guard let pointer = realpath(path, nil) else { return nil }
        defer { free(pointer) }
        return String(cString: pointer)
    }

    public static func contentType(for path: String) -> String {
        switch path.split(separator: ".").last?.lowercased() {
        case "css": return "text/css; charset=utf-8"
        case "js", "mjs": return "text/javascript; charset=utf-8"
        case "svg": return "image/svg+xml"
        case "png": return "image/png"
        case "jpg", "jpeg": return "image/jpeg"
        case "gif": return "image/gif"
        case "webp": return "image/webp"
        case "ico": return "image/x-icon"
        case "woff2": return "font/woff2"
        case "json": return "application/json"
        case "txt": return "text/plain; charset=utf-8"
        case "html": return "text/html; charset=utf-8"
        case "xml": return "application/xml"
        case "webmanifest": return "application/manifest+json"
        default: return "application/octet-stream"
        }
    }
}

extension Request {
    /// Whether `If-None-Match` names `etag` or `*`, by weak comparison (RFC 9110 §13.1.2: `W/`
    /// prefixes are ignored): the client holds this version, answer 304.
    public func ifNoneMatch(_ etag: String) -> Bool {
        guard let match = headers["If-None-Match"] else { return false }
        let opaque = { (tag: Substring) in tag.hasPrefix("W/") ? tag.dropFirst(2) : tag }
        let wanted = opaque(Substring(etag))
        return match.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces)[...] }
            .contains { $0 == "*" || opaque($0) == wanted }
    }
}
