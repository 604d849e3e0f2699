import Crypto
import Foundation
import Metrics
import HTTPServer
import Synchronization

/// Version counters of the data pages show. A cached page remembers the versions it was
/// rendered from and is used only while they are unchanged. The counters move with every
/// committed change (`apply`, subscribed to the database's change stream).
public final class PageVersions: Sendable {
    private struct Counters {
        /// A city's board or forecast changed.
        var cities: [Int64: UInt64] = [:]
        /// A city's board changed (its forecast did not).
        var boards: [Int64: UInt64] = [:]
        /// Something every page may show changed.
        var global: UInt64 = 0
    }

    private let counters = Mutex(Counters())

    public init() {}

    /// The versions a page depends on: everything's, and those of the cities it shows (a city
    /// page its own; a home page the cities on it). A forecast stored for another city leaves it be.
    struct Stamp: Hashable {
        var global: UInt64
        var cities: [UInt64]
    }

    func stamp(cities: [Int64]) -> Stamp {
        counters.withLock { counters in
            Stamp(global: counters.global, cities: cities.map { counters.cities[$0] ?? 0 })
        }
    }

    /// What a city's board as read depends on: everything's version and its board's (a forecast
    /// stored for the city leaves it be).
    func boardStamp(city: Int64) -> Stamp {
        counters.withLock { counters in
            Stamp(global: counters.global, cities: [counters.boards[city] ?? 0])
        }
    }

    /// Records a committed change (made here, or by another node).
    public func apply(_ change: PageChange) {
        counters.withLock { counters in
            switch change {
            case .city(let id):
                counters.cities[id, default: 0] &+= 1
                counters.boards[id, default: 0] &+= 1
            case .post(let event):
                counters.cities[event.city, default: 0] &+= 1
                counters.boards[event.city, default: 0] &+= 1
            case .weather(let id), .warning(let id):
                counters.cities[id, default: 0] &+= 1
            case .everything, .missed:
                counters.global &+= 1
            case .notice:
                break // only the member's own header shows it, and it is never kept
            case .silenced:
                break // a member's own pages read their blocks and mutes; none is kept for others
            }
        }
    }
}

/// Rendered pages kept for guests, keyed by what selects them (page, language, address, the
/// reader's bookmarks), each valid while the data it shows is unchanged and for at most
/// `maximumAge` (relative times, "now" on the chart). A kept page holds nothing of any one
/// visitor (no page carries a form token: `RequestSource`), so it is kept as whole arrays, plain and gzip, and a response sends one of them as it is.
final class PageCache: Sendable {
    /// What a kept page renders from, and so its key (issue 63 #4): the page's own selection
    /// (its feature says it: city, cursor, bookmarks), and what the layout reads of the request,
    /// found by the layout's own functions: the language and where signing in comes back to.
    /// Two requests with the same key get the same bytes, however they spelled the language.
    struct Key: Hashable, Sendable {
        let page: String
        let language: Language
        let signInTarget: String

        init(_ page: String, _ context: AppContext) {
            (self.page, language, signInTarget) = (page, context.language, Pages.signInTarget(context))
        }
    }

    struct Entry {
        let stamp: PageVersions.Stamp
        let expires: Date
        /// A digest of the page's bytes: the same in every process and after a restart for the
        /// same page, different for a different one.
        let contentTag: String
        let bytes: [UInt8]
        /// The page as one gzip member, made once when it is kept.
        let gzip: [UInt8]
        var byteCount: Int { ResidentBytes.array(bytes) + ResidentBytes.array(gzip) }
    }

    private struct Kept {
        /// Least recently served pages go first, past a count and a byte budget. A city page
        /// costs about 20 KB (its bytes and its gzip form): 64 MiB hold the 2,000 pages a busy
        /// site's visitors open most, with room for the other language and home pages.
        var entries: LRUCache<Key, Entry>
        /// Keys being rendered now, and how the others asking for them wait.
        var rendering: [Key: DispatchGroup] = [:]
    }

    private let kept: Mutex<Kept>
    /// What the kept pages hold now, in bytes (for the operator).
    var keptBytes: Int { kept.withLock { $0.entries.totalCost } }
    /// The most it may hold.
    var byteBound: Int { kept.withLock { $0.entries.maximumCost } }
    let versions: PageVersions
    let maximumAge: TimeInterval
    /// False: every page is rendered afresh (`--page-caches off`).
    let enabled: Bool
    /// The site's clock (tests move it), against which pages age.
    let clock: @Sendable () -> Date

    init(versions: PageVersions, maximumAge: TimeInterval = 30, maximumEntries: Int = 4_000, maximumBytes: Int = 64 << 20,
         enabled: Bool = true, clock: @escaping @Sendable () -> Date = { Date() }, metrics: any MetricsFactory = NOOPMetricsHandler.instance) {
        self.versions = versions
        let outcome = { Counter(label: "weatherboard_page_cache_total", dimensions: [("outcome", $0)], factory: metrics) }
        (hits, misses, waits) = (outcome("hit"), outcome("miss"), outcome("waited"))
        self.maximumAge = maximumAge
        self.enabled = enabled
        self.clock = clock
        kept = Mutex(Kept(entries: LRUCache(maximumCount: maximumEntries, maximumCost: maximumBytes)))
    }

    /// Pages rendered for the cache so far (tests count them).
    let renders = Atomic<Int>(0)
    /// For the operator: served from the cache, rendered, waited for another's render.
    private let hits, misses, waits: Counter

    /// The page for `key` from the cache, or rendered by `render` and kept. `cities` are the
    /// cities the page shows. Keys name what selects a page (the route's parameters as
    /// understood, the language, the reader's bookmarks), never the raw request target: `?x=1`
    /// is the same page.
    ///
    /// Misses of one key render once: whoever comes while it is rendered waits for that page
    /// (a popular page expiring under load is one render, not one per worker).
    /// On the quick lane (a request sent there while the main lane is stalled: the database has
    /// stopped answering) a kept page is served even when it is out of date, up to
    /// `outageAge` after it was rendered: the last page there was, rather than an error.
    /// Anything else moves the request to the main lane (`Lane.Moved`) before it waits.
    func response(key: Key, cities: [Int64], context: AppContext, render: () throws -> RenderedPage) throws -> Response {
        guard enabled, RequestReads.current?.seesKeptPages ?? true else {
            try Lane.waitsAllowed()
            return .html(try render(), for: context.request)
        }
        let entry = try keptPage(key: key, cities: cities, render: render)
        return Self.response(entry, for: context.request)
    }

    private func keptPage(key: Key, cities: [Int64], render: () throws -> RenderedPage) throws -> Entry {
        while true {
            let now = clock()
            let stamp = versions.stamp(cities: cities)
            enum Next { case use(Entry), wait(DispatchGroup), render(DispatchGroup), move }
            let quick = Lane.current == .quick
            let next = kept.withLock { kept -> Next in
                if let cached = kept.entries.value(for: key), cached.stamp == stamp, cached.expires > now { return .use(cached) }
                if quick {
                    guard let last = kept.entries.value(for: key), last.expires.addingTimeInterval(Self.outageAge - maximumAge) > now
                    else { return .move }
                    return .use(last)
                }
                if let flight = kept.rendering[key] { return .wait(flight) }
                let flight = DispatchGroup()
                flight.enter()
                kept.rendering[key] = flight
                return .render(flight)
            }
            switch next {
            case .use(let entry):
                hits.increment()
                return entry
            case .move:
                throw Lane.Moved()
            case .wait(let flight):
                waits.increment()
                flight.wait()
                continue // the page just kept (or, had its render failed, this one's turn)
            case .render(let flight):
                defer {
                    kept.withLock { _ = $0.rendering.removeValue(forKey: key) }
                    flight.leave()
                }
                renders.add(1, ordering: .relaxed)
                misses.increment()
                let page = try render()
                let bytes = Self.exactCopy(page.body)
                let previous = kept.withLock { $0.entries.peek(key) }
                let entry: Entry
                if let previous, sameBytes(previous.bytes, bytes) {
                    // Rendered the same (a board whose times read the same): its gzip form and tag stay.
                    entry = Entry(stamp: stamp, expires: now.addingTimeInterval(maximumAge), contentTag: previous.contentTag,
                                  bytes: previous.bytes, gzip: previous.gzip)
                } else {
                    entry = Entry(stamp: stamp, expires: now.addingTimeInterval(maximumAge), contentTag: Self.contentTag(bytes),
                                  bytes: bytes, gzip: Gzip.compress(page.body, reusing: page.deflatedParts(kept: true), level: Self.level).joined())
                }
                kept.withLock { $0.entries.set(entry, for: key, cost: entry.byteCount) }
                return entry
            }
        }
    }

    /// The page in an array of its own size: a render's array has room for the largest page,
    /// which a cache counting bytes would not see.
    private static func exactCopy(_ body: ResponseBody) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: body.count) { buffer, initialized in
            body.forEachStretch(in: 0..<body.count) { stretch in
                guard let source = stretch.baseAddress else { return }
                (buffer.baseAddress! + initialized).initialize(from: source, count: stretch.count)
                initialized += stretch.count
            }
        }
    }

    /// The kept entry for `key`, as it is (tests look at it).
    func entry(for key: Key) -> Entry? {
        kept.withLock { $0.entries.peek(key) }
    }

    /// How old a kept page may be and still be served while the database does not answer.
    static let outageAge: TimeInterval = 10 * 60

    /// The level the rest of a kept page is deflated at, once per entry (its weather part was
    /// deflated when it was rendered).
    static let level: Int32 = 6

    /// A kept page as a response: its tag, and one of its arrays as the body.
    private static func response(_ entry: Entry, for request: Request) -> Response {
        let tag = "W/\"\(entry.contentTag)\""
        var response = Response(status: .ok, headers: HTTPHeaders([
            ("Content-Type", "text/html; charset=utf-8"), ("ETag", tag), ("Cache-Control", "private, no-cache"),
            ("Vary", "Accept-Encoding, Accept-Language, Cookie"),
        ]))
        if request.ifNoneMatch(tag) {
            response.status = .notModified
            return response
        }
        if acceptsGzip(request) {
            response.headers.add("Content-Encoding", "gzip")
            response.bodyParts = ResponseBody(entry.gzip)
        } else {
            response.bodyParts = ResponseBody(entry.bytes)
        }
        return response
    }
}

extension PageCache {
    /// A kept page is found by what selects it, not by its address, and its links repeat the
    /// address it was rendered at: so it has one address. Any other spelling (a trailing slash,
    /// a percent-encoded slug, an unknown parameter) is sent there with 301, and `?x=1` can
    /// neither add an entry nor put its address into everyone's copy. `lang` is kept (the
    /// language switch) and so are the parameters that select the page (`items`).
    static func canonicalRedirect(_ context: AppContext, path: String, selecting items: [(String, String)] = []) throws -> Response? {
        let request = context.request
        // A query that cannot be read is the client's mistake (read once, with the context).
        guard request.query == nil || context.query != nil else { throw HTTPError(.badRequest, message: "Malformed form encoding") }
        var kept = items
        // Only a language the site has: any other value is sent away, never written into a page
        // every guest gets (its links repeat the address it was rendered at).
        if let language = context.query?["lang"], Language(rawValue: language) != nil { kept.append(("lang", language)) }
        let canonical = path + (kept.isEmpty ? "" : "?" + kept.map { "\($0.0)=\(percentEncode($0.1))" }.joined(separator: "&"))
        return request.target == canonical ? nil : .redirect(to: canonical, status: .movedPermanently)
    }
}

extension PageCache {
    /// SHA-256 of the page, 96 bits of it in base 36 pieces: no counter, so no restart and no
    /// other node can repeat a tag for another page.
    static func contentTag(_ bytes: [UInt8]) -> String {
        let digest = Array(SHA256.hash(data: bytes))
        return stride(from: 0, to: 12, by: 4).map { start in
            String(digest[start..<start + 4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }, radix: 36)
        }.joined(separator: ".")
    }
}

/// Byte for byte, as `memcmp` compares (a page is tens of kilobytes; comparing element by
/// element cost several instructions a byte). One array against itself is not compared at all.
func sameBytes(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    guard a.count == b.count else { return false }
    return a.withUnsafeBufferPointer { x in b.withUnsafeBufferPointer { y in
        x.count == 0 || x.baseAddress == y.baseAddress || memcmp(x.baseAddress!, y.baseAddress!, x.count) == 0
    } }
}

/// FNV-1a, 64 bits: a quick fingerprint (not a security measure).
func fnv1a(_ bytes: [UInt8]) -> UInt64 {
    bytes.reduce(14_695_981_039_346_656_037) { ($0 ^ UInt64($1)) &* 1_099_511_628_211 }
}

/// Whether the request's `Accept-Encoding` admits gzip (RFC 9110 §12.5.3: `q=0` refuses it).
/// Read byte by byte: every page and every live fetch asks, and Foundation's trimming costs more
/// than the rest of such a request's routing.
func acceptsGzip(_ request: Request) -> Bool {
    guard let field = request.headers["Accept-Encoding"] else { return false }
    for item in field.utf8.split(separator: UInt8(ascii: ",")) {
        let parts = item.split(separator: UInt8(ascii: ";"))
        guard let coding = parts.first.map(trimmed),
              sameLetters(coding, "gzip") || sameLetters(coding, "x-gzip") || sameLetters(coding, "*") else { continue }
        // `q=0`, `q=0.0`, `q=0.000` refuse it; any other quality, or none, admits it.
        let quality = parts.dropFirst().map(trimmed).first { $0.count > 2 && sameLetters($0.prefix(2), "q=") }
        if quality.map({ Double(String(decoding: $0.dropFirst(2), as: UTF8.self)) != 0 }) ?? true { return true }
    }
    return false
}

/// `bytes` without the spaces and tabs around it.
private func trimmed(_ bytes: Substring.UTF8View) -> Substring.UTF8View {
    var slice = bytes
    while let first = slice.first, first == 0x20 || first == 0x09 { slice = slice.dropFirst() }
    while let last = slice.last, last == 0x20 || last == 0x09 { slice = slice.dropLast() }
    return slice
}

/// Whether `bytes` spell `word` (ASCII lower case) in any case.
private func sameLetters(_ bytes: Substring.UTF8View, _ word: StaticString) -> Bool {
    guard bytes.count == word.utf8CodeUnitCount else { return false }
    return word.withUTF8Buffer { expected in
        zip(bytes, expected).allSatisfy { ($0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0) == $1 }
    }
}
