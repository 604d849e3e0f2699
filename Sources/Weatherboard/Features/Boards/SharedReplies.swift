import Foundation
import HTTPServer
import Synchronization

/// New replies as open pages fetch them (`GET /posts/{id}/replies?after=`, issue 46 #1), kept
/// per what their render reads: the post, the rows as read for the reader, the reader as the
/// presenter sees them (`Reader`: signed in or not, owner of one, a moderator, a form token, whom
/// they muted) and the language, as `BoardRender`, each kept until the clock alone would change it
/// (`ClockReading`). Everyone with no part in the replies reads the same rows and is
/// the same `Reader`, so a reply reaching thousands of open pages is rendered once; a reader
/// with a part (their own reply, an agreement, someone they blocked) gets a key of their own.
final class SharedReplies: Sendable {
    struct Key: Hashable, Sendable {
        var post: Int64
        var rows: [PostRow]
        var reader: Reader
        var language: Language
    }

    /// One reply as a bystander sees it (`Reader.bystander`): what selects its render besides
    /// its rows, which are read only when it is not kept.
    struct One: Hashable, Sendable {
        var city: Int64
        var reply: Int64
        var member: Bool
        var language: Language
    }

    private let entries = Mutex(LRUCache<Key, KeptUntil<HTMLFragment>>(maximumCount: 4_000, maximumCost: 16 << 20))
    /// Single replies, each with the board's version it was read under: any change to the
    /// city's board (an edit, an agreement, a removal, an author's name or standing) misses it.
    private let ones = Mutex(LRUCache<One, (stamp: PageVersions.Stamp, reply: KeptUntil<Reply>)>(maximumCount: 4_000, maximumCost: 8 << 20))
    /// Renders under way, each of the version it read under: a reader whose version is newer
    /// (a hide since) never takes an older render.
    private let oneFlights = SingleFlight<OneFlight, Reply?>()
    private struct OneFlight: Hashable, Sendable {
        var key: One
        var stamp: PageVersions.Stamp
    }

    /// A reply as kept: its bytes, and the same as one gzip member (made once: thousands of
    /// pages fetch it, and a browser's fetch takes gzip).
    struct Reply: Sendable {
        let bytes: [UInt8]
        let gzip: [UInt8]

        /// The reply as a response: gzip when the client takes it. Its words follow the
        /// language (the cookie, `Accept-Language`), and it changes with the board: no cache
        /// keeps it without asking.
        func response(for request: Request) -> Response {
            let gzipped = acceptsGzip(request)
            var response = Response.html(gzipped ? gzip : bytes)
            if gzipped { response.headers.add("Content-Encoding", "gzip") }
            response.headers.add("Vary", "Accept-Encoding, Accept-Language, Cookie")
            response.headers.add("Cache-Control", "private, no-cache")
            return response
        }
    }

    /// A kept reply (`ConversationController.sharedReply`) answered on the event loop: no
    /// worker, no middleware, nothing read. Thousands of pages fetch each reply of a storm within
    /// a second or so; all but the first of each kind of reader find it kept. Anything else (not
    /// kept, out of date, a language chosen by `?lang=`) goes the router's way.
    func immediateResponse(to request: Request, now: Date) -> Response? {
        guard enabled, request.method == "GET", request.path.hasPrefix("/shared/cities/") else { return nil }
        let segments = request.path.split(separator: "/", omittingEmptySubsequences: false)
        guard segments.count == 6, segments[4] == "replies", let city = Int64(segments[3]), String(city) == segments[3],
              let reply = Int64(segments[5]), String(reply) == segments[5], let query = try? request.queryItems() else { return nil }
        let context = AppContext(request: request)
        guard !context.languageChosenByQuery else { return nil }
        let key = One(city: city, reply: reply, member: query["as"] == "member", language: context.language)
        let stamp = versions.boardStamp(city: city)
        guard let kept = ones.withLock({ $0.value(for: key) }), kept.stamp == stamp, let reply = kept.reply.value(at: now) else { return nil }
        asked.add(1, ordering: .relaxed)
        var response = reply.response(for: request)
        Middleware.secure(&response, signedIn: false)
        return response
    }
    private let versions: PageVersions
    /// Readers arriving together wait for the one render under way rather than make their own.
    private let flights = SingleFlight<Key, HTMLFragment>()
    /// False: every fetch renders afresh (`--page-caches off`).
    let enabled: Bool
    /// What the kept replies hold now, in bytes (for the operator).
    var keptBytes: Int { entries.withLock { $0.totalCost } + ones.withLock { $0.totalCost } }
    /// The most it may hold.
    var byteBound: Int { entries.withLock { $0.maximumCost } + ones.withLock { $0.maximumCost } }
    /// Renders made (tests and the benchmark read it).
    let renders = Atomic<Int>(0)
    /// Single replies asked for (tests read it: live.js asks for them).
    let asked = Atomic<Int>(0)

    init(enabled: Bool = true, versions: PageVersions = PageVersions()) {
        self.enabled = enabled
        self.versions = versions
    }

    /// The reply `key` names at `now`: kept while its city's board is unchanged and the clock has
    /// not overtaken it, or made by `make` (nil: not there for a bystander; else the render and
    /// until when it holds) from rows read after the version was taken.
    func one(_ key: One, now: Date, make: () throws -> (HTMLFragment, until: Date)?) throws -> Reply? {
        asked.add(1, ordering: .relaxed)
        let stamp = versions.boardStamp(city: key.city)
        var until = Date.distantFuture
        func render() throws -> Reply? {
            renders.add(1, ordering: .relaxed)
            guard let (made, holds) = try make() else { return nil }
            until = holds
            return Reply(bytes: made.bytes, gzip: Gzip.compress(made.bytes))
        }
        guard enabled else { return try render() }
        if let kept = ones.withLock({ $0.value(for: key) }), kept.stamp == stamp, let reply = kept.reply.value(at: now) { return reply }
        // Pages hearing of a reply together wait for the one render under way.
        let flightKey = OneFlight(key: key, stamp: stamp)
        guard let (flight, isLeader) = oneFlights.join(flightKey, admit: { true }) else { return try render() }
        if !isLeader, case .some(let landed) = flight.wait(until: Date().addingTimeInterval(Self.wait)) { return landed }
        guard isLeader else { return try render() }
        do {
            let made = try render()
            if let made { ones.withLock { $0.set((stamp, KeptUntil(value: made, until: until)), for: key, cost: made.bytes.count + made.gzip.count) } }
            oneFlights.land(flightKey, with: .some(made))
            return made
        } catch {
            oneFlights.land(flightKey, with: nil)
            throw error
        }
    }

    /// How long a reader waits for another's render before making its own.
    static let wait: TimeInterval = 2

    /// The replies `key` names at `now`: kept until the clock alone would change them, or made by
    /// `make` (the render and until when it holds).
    func fragment(_ key: Key, now: Date, make: () -> (HTMLFragment, until: Date)) -> HTMLFragment {
        func render() -> (HTMLFragment, until: Date) {
            renders.add(1, ordering: .relaxed)
            return make()
        }
        guard enabled else { return render().0 }
        if let kept = entries.withLock({ $0.value(for: key) })?.value(at: now) { return kept }
        guard let (flight, isLeader) = flights.join(key, admit: { true }) else { return render().0 }
        guard isLeader else { return flight.wait(until: Date().addingTimeInterval(Self.wait)) ?? render().0 }
        let (made, until) = render()
        entries.withLock { $0.set(KeptUntil(value: made, until: until), for: key, cost: made.bytes.count) }
        flights.land(key, with: made)
        return made
    }
}
