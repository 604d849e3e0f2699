/// A response body as the stretches of arrays it was assembled from, written together with
/// `sendmsg`: a page that shows a large fragment kept for many readers (a board with its
/// replies, a city's weather) holds it where it is kept instead of copying it into an array of
/// its own, and a kept page is sent as its runs with each visitor's token between them.
///
/// A stretch is an index and two offsets, not a slice: a board is a few hundred stretches (the
/// bytes between its forms' tokens), and a slice each, retained and released wherever the body
/// goes, cost more than the copy it saves. Most bodies are one array, held as it is.
public struct ResponseBody: Sendable {
    /// The body when it is one array (`stretches` is nil): what most responses are, and what a
    /// copy of the body then costs is one array's retain.
    private var single: [UInt8] = []
    /// Otherwise: the arrays its bytes are in, and the body in order as stretches of them.
    private var stretches: Stretches?

    private struct Stretches {
        var storages: [[UInt8]] = []
        var spans: [Span] = []
    }

    struct Span: Sendable {
        var storage: Int
        var start: Int
        var end: Int
        /// Where the span ends in the body.
        var bodyEnd: Int
        var count: Int { end - start }
    }

    public init() {}

    public init(_ bytes: [UInt8]) {
        single = bytes
    }

    public var count: Int {
        guard let stretches else { return single.count }
        return stretches.spans.last?.bodyEnd ?? 0
    }
    public var isEmpty: Bool { count == 0 }

    /// Keeps `bytes` for the stretches `append(storage:_:)` takes from them; returns its index.
    public mutating func add(storage bytes: [UInt8]) -> Int {
        spreadOut()
        stretches!.storages.append(bytes)
        return stretches!.storages.count - 1
    }

    /// Adds `range` of the array `add(storage:)` numbered `storage` at the end.
    public mutating func append(storage: Int, _ range: Range<Int>) {
        guard !range.isEmpty else { return }
        spreadOut()
        let end = count
        guard let storages = stretches?.storages else { return }
        assert(storage < storages.count && range.upperBound <= storages[storage].count, "a stretch outside its array")
        guard storage < storages.count, range.lowerBound >= 0, range.upperBound <= storages[storage].count else { return }
        if let last = stretches!.spans.last, last.storage == storage, last.end == range.lowerBound {
            let index = stretches!.spans.count - 1 // continues the one before
            stretches!.spans[index].end = range.upperBound
            stretches!.spans[index].bodyEnd += range.count
        } else {
            stretches!.spans.append(Span(storage: storage, start: range.lowerBound, end: range.upperBound, bodyEnd: end + range.count))
        }
    }

    /// Adds `bytes` at the end.
    public mutating func append(_ bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        if stretches == nil && single.isEmpty {
            single = bytes
            return
        }
        append(storage: add(storage: bytes), 0..<bytes.count)
    }

    /// Adds `other` at the end.
    public mutating func append(_ other: ResponseBody) {
        guard let theirs = other.stretches else { return append(other.single) }
        spreadOut()
        let first = stretches!.storages.count
        stretches!.storages += theirs.storages
        for span in theirs.spans { append(storage: first + span.storage, span.start..<span.end) }
    }

    /// From one array to stretches of it, before another is added.
    private mutating func spreadOut() {
        guard stretches == nil else { return }
        var spread = Stretches()
        if !single.isEmpty {
            spread.storages = [single]
            spread.spans = [Span(storage: 0, start: 0, end: single.count, bodyEnd: single.count)]
            single = []
        }
        stretches = spread
    }

    /// Whether the body is one whole array (`withStorage(0)`).
    var isOneArray: Bool { stretches == nil }

    /// Stretches in the body (one for a body of one array, none for an empty one).
    var spanCount: Int { stretches?.spans.count ?? (single.isEmpty ? 0 : 1) }
    var storageCount: Int { stretches?.storages.count ?? 1 }

    /// Stretch `index`: its array's number and its range there.
    func span(_ index: Int) -> (storage: Int, range: Range<Int>) {
        guard let span = stretches?.spans[index] else { return (0, 0..<single.count) }
        return (span.storage, span.start..<span.end)
    }

    /// `body` with a pointer to array `storage`, valid inside it.
    func withStorage<Result>(_ storage: Int, _ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try (stretches?.storages[storage] ?? single).withUnsafeBytes(body)
    }

    /// The bytes in one array: a body of one array is that array, not a copy.
    public func joined() -> [UInt8] {
        guard let stretches else { return single }
        var out: [UInt8] = []
        out.reserveCapacity(count)
        for span in stretches.spans { out += stretches.storages[span.storage][span.start..<span.end] }
        return out
    }

    /// `body` called with each contiguous stretch of `range`, in order.
    public func forEachStretch(in range: Range<Int>, _ body: (UnsafeBufferPointer<UInt8>) -> Void) {
        guard !range.isEmpty, range.upperBound <= count else { return }
        guard let stretches else {
            return single.withUnsafeBufferPointer { body(UnsafeBufferPointer(rebasing: $0[range])) }
        }
        let spans = stretches.spans
        // The first span that ends after the range starts.
        var low = 0, high = spans.count - 1
        while low < high {
            let middle = (low + high) / 2
            if spans[middle].bodyEnd > range.lowerBound { high = middle } else { low = middle + 1 }
        }
        var index = low
        var position = range.lowerBound
        while position < range.upperBound {
            let span = spans[index]
            let spanStart = span.bodyEnd - span.count
            let from = span.start + (position - spanStart)
            let to = span.start + (min(range.upperBound, span.bodyEnd) - spanStart)
            stretches.storages[span.storage].withUnsafeBufferPointer { body(UnsafeBufferPointer(rebasing: $0[from..<to])) }
            position += to - from
            index += 1
        }
    }

    /// The bytes of `range` in one array.
    public func bytes(in range: Range<Int>) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(range.count)
        forEachStretch(in: range) { out.append(contentsOf: $0) }
        return out
    }
}
