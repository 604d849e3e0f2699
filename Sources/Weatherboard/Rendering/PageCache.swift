import Foundation
import HTTPServer
import Synchronization

/// Version counters of the data pages show. A cached page remembers the versions it was
/// rendered from and is used only while they are unchanged. The counters move with every
/// committed change (`apply`, subscribed to the database's change stream).
public final class PageVersions: Sendable {
    private struct Counters {
        var cities: [Int64: UInt64] = [:]
        var global: UInt64 = 0
        var weather: UInt64 = 0
    }

    private let counters = Mutex(Counters())

    public init() {}

    /// The versions a page of `city` (or of no city) depends on.
    struct Stamp: Equatable {
        var global: UInt64
        var city: UInt64
        var weather: UInt64
    }

    func stamp(city: Int64?) -> Stamp {
        counters.withLock { counters in
            Stamp(global: counters.global, city: city.flatMap { counters.cities[$0] } ?? 0, weather: counters.weather)
        }
    }

    /// Records a committed change (made here, or by another node).
    public func apply(_ change: PageChange) {
        counters.withLock { counters in
            switch change {
            case .city(let id):
                counters.cities[id, default: 0] &+= 1
            case .post(let event):
                counters.cities[event.city, default: 0] &+= 1
            case .weather(let id):
                counters.cities[id, default: 0] &+= 1
                counters.weather &+= 1
            case .everything:
                counters.global &+= 1
            }
        }
    }
}

/// Rendered pages kept for anonymous readers, keyed by what selects them (page, language,
/// address, the reader's bookmarks), each valid while the data it shows is unchanged and for at
/// most `maximumAge` (relative times, "now" on the chart). A visitor's CSRF token is not part of
/// the page kept: the page is rendered with a placeholder, split there, and the token put back
/// for each visitor (the compressed form is spliced the same way).
final class PageCache: Sendable {
    struct Entry {
        let stamp: PageVersions.Stamp
        let expires: Date
        let serial: UInt64
        let page: SplicedPage
    }

    private struct Kept {
        /// Least recently served pages go first, past a count and a byte budget.
        var entries: LRUCache<String, Entry>
        var serial: UInt64 = 0
    }

    private let kept: Mutex<Kept>
    let versions: PageVersions
    let maximumAge: TimeInterval
    /// The site's clock (tests move it), against which pages age.
    let clock: @Sendable () -> Date

    /// Stands for the CSRF token while a cached page is rendered; random per process, so no
    /// text a person types can be taken for it.
    static let tokenPlaceholder = "csrf" + (0..<4).map { _ in String(UInt64.random(in: .min ... .max), radix: 36) }.joined()

    init(versions: PageVersions, maximumAge: TimeInterval = 30, maximumEntries: Int = 2_000, maximumBytes: Int = 16 << 20,
         clock: @escaping @Sendable () -> Date = { Date() }) {
        self.versions = versions
        self.maximumAge = maximumAge
        self.clock = clock
        kept = Mutex(Kept(entries: LRUCache(maximumCount: maximumEntries, maximumCost: maximumBytes)))
    }

    /// The page for `key` from the cache, or rendered by `render` (with the token placeholder)
    /// and kept; then completed for this visitor.
    func response(key: String, city: Int64?, context: AppContext,
                  render: (_ csrfToken: String) throws -> [UInt8]) rethrows -> Response {
        let now = clock()
        let stamp = versions.stamp(city: city)
        let cached = kept.withLock { $0.entries.value(for: key) }
        let entry: Entry
        if let cached, cached.stamp == stamp, cached.expires > now {
            entry = cached
        } else {
            let bytes = try render(Self.tokenPlaceholder)
            let page = SplicedPage(bytes, hole: Array(Self.tokenPlaceholder.utf8))
            entry = kept.withLock { kept in
                kept.serial &+= 1
                let entry = Entry(stamp: stamp, expires: now.addingTimeInterval(maximumAge), serial: kept.serial, page: page)
                kept.entries.set(entry, for: key, cost: page.byteCount)
                return entry
            }
        }
        let request = context.request
        // One tag per kept page and visitor secret: a 304 means the visitor's own copy is current
        // (its token, masked differently, proves the same secret).
        let tag = "W/\"\(String(entry.serial, radix: 36))-\(String(fnv1a(Array(context.csrfSecret.utf8)), radix: 36))\""
        var response = Response(status: .ok, headers: HTTPHeaders([
            ("Content-Type", "text/html; charset=utf-8"), ("ETag", tag), ("Cache-Control", "private, no-cache"),
            ("Vary", "Accept-Encoding, Accept-Language, Cookie"),
        ]))
        if request.headers["If-None-Match"].map({ $0.split(separator: ",").contains { $0.trimmingCharacters(in: .whitespaces) == tag } }) == true {
            response.status = .notModified
            return response
        }
        // What is spliced into the page is escaped like any other value (a masked token is
        // base64url and escapes to itself; nothing else can reach the hole).
        let token = HTML.escaped(context.csrfToken)
        if acceptsGzip(request) {
            response.headers.add("Content-Encoding", "gzip")
            response.body = entry.page.gzip(filling: token)
        } else {
            response.body = entry.page.bytes(filling: token)
        }
        return response
    }
}

/// FNV-1a, 64 bits: a quick fingerprint (not a security measure).
func fnv1a(_ bytes: [UInt8]) -> UInt64 {
    bytes.reduce(14_695_981_039_346_656_037) { ($0 ^ UInt64($1)) &* 1_099_511_628_211 }
}

/// Whether the request's `Accept-Encoding` admits gzip (RFC 9110 §12.5.3: `q=0` refuses it).
func acceptsGzip(_ request: Request) -> Bool {
    guard let field = request.headers["Accept-Encoding"] else { return false }
    for item in field.split(separator: ",") {
        let parts = item.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        guard let coding = parts.first, coding == "gzip" || coding == "x-gzip" || coding == "*" else { continue }
        let quality = parts.dropFirst().first { $0.hasPrefix("q=") }.flatMap { Double($0.dropFirst(2)) } ?? 1
        if quality > 0 { return true }
    }
    return false
}
