import HTTPServer

/// The bytes of a page being rendered. Compiled templates (`Templates.*`, generated at build time
/// from `Templates/*.mustache`) append their fixed text as is and every value through `text`,
/// which HTML-escapes it on the way in.
public struct HTML: ~Copyable {
    // A buffer of our own rather than `[UInt8]`: a page is a few hundred small appends, and
    // `Array.append(contentsOf:)` checks uniqueness and copies element by element each time;
    // here an append is a capacity check and a `memcpy`.
    private var start: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    private(set) var count = 0
    /// False while writing into a buffer someone else owns (a response's array, see
    /// `Renderer.page`); the first growth moves the bytes into storage of our own.
    private(set) var ownsStorage = true
    /// Where fragments deflated ahead of time were written (see `HTMLFragment.deflated`).
    private(set) var pieces: [Gzip.Piece] = []
    /// Whether large fragments are lent rather than copied (`lent`): only for a response's page,
    /// whose body can be stretches of several arrays; a fragment to be kept is one array.
    private let lendsFragments: Bool
    /// Stretches of fragments kept elsewhere (`lenders`) that belong in the page after `at`
    /// bytes of its own: the response sends them from where they are kept instead of copying
    /// them here.
    private(set) var lent: [Lent] = []
    private(set) var lenders: [[UInt8]] = []
    private var lentBytes = 0
    /// Stretches of the page that many pages share (`endShared`), as positions in the page as sent.
    private(set) var shared: [Range<Int>] = []
    /// Where the bytes since the last fragment deflated ahead begin, in the page as sent.
    private var sinceFragment = 0

    struct Lent {
        var at: Int
        var lender: Int
        var range: Range<Int>
    }
    /// Where the next byte goes in the page as sent (its own bytes and the lent ones).
    var position: Int { count + lentBytes }

    public init(capacity: Int = 64 * 1024) {
        self.capacity = max(capacity, 64)
        start = .allocate(capacity: self.capacity)
        lendsFragments = false
    }

    /// A response's page: writes into `buffer` until it is full (the caller keeps `count` bytes
    /// of it if `ownsStorage` is still false at the end), large fragments going to `lent`.
    init(writingInto buffer: UnsafeMutableBufferPointer<UInt8>) {
        start = buffer.baseAddress!
        capacity = buffer.count
        ownsStorage = false
        lendsFragments = true
    }

    deinit { if ownsStorage { start.deallocate() } }

    /// The page so far, copied out once.
    public var bytes: [UInt8] {
        Array(UnsafeBufferPointer(start: start, count: count))
    }

    @inline(__always)
    mutating func append(_ source: UnsafeRawPointer, count length: Int) {
        if count + length > capacity { grow(toHold: count + length) }
        (start + count).update(from: source.assumingMemoryBound(to: UInt8.self), count: length)
        count += length
    }

    @inline(__always)
    mutating func append(_ byte: UInt8) {
        if count == capacity { grow(toHold: count + 1) }
        start[count] = byte
        count += 1
    }

    private mutating func grow(toHold needed: Int) {
        var newCapacity = capacity * 2
        while newCapacity < needed { newCapacity *= 2 }
        let newStart = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        newStart.update(from: start, count: count)
        if ownsStorage { start.deallocate() }
        start = newStart
        capacity = newCapacity
        ownsStorage = true
    }

    /// Template text, already HTML.
    @inline(__always)
    mutating func raw(_ text: StaticString) {
        append(text.utf8Start, count: text.utf8CodeUnitCount)
    }

    /// Bytes that are already HTML (a catalog string escaped at start-up, a rendered fragment).
    @inline(__always)
    mutating func raw(_ html: [UInt8]) {
        html.withUnsafeBufferPointer { if let base = $0.baseAddress { append(base, count: $0.count) } }
    }

    /// A fragment's bytes, noting where its deflated form goes; a large one is lent, not copied
    /// (a page's board with its replies is 100 KB or more: docs/performance.md).
    mutating func raw(_ fragment: HTMLFragment) {
        if let run = fragment.deflated { pieces.append(Gzip.Piece(offset: position, run: run)) }
        defer { if fragment.deflated != nil { sinceFragment = position } } // a shared stretch never holds a part deflated already
        guard lendsFragments, fragment.bytes.count >= Self.lentAtLeast else {
            raw(fragment.bytes)
            return
        }
        lenders.append(fragment.bytes)
        lent.append(Lent(at: count, lender: lenders.count - 1, range: 0..<fragment.bytes.count))
        lentBytes += fragment.bytes.count
    }

    /// Ends a stretch that many pages share (a layout's head, the same for a page and language
    /// whoever reads it): the bytes since the last deflated fragment, if at least `sharedAtLeast`, are
    /// deflated once per content (`SharedStretches`) instead of for each response, and what
    /// follows (a reader's own few hundred bytes) is compressed alone.
    mutating func endShared() {
        guard lendsFragments, position - sinceFragment >= Self.sharedAtLeast else { return }
        shared.append(sinceFragment..<position)
        sinceFragment = position
    }

    static let sharedAtLeast = 512

    /// Shorter fragments are copied: each lent one is a stretch of the body, one more entry in
    /// the server's `sendmsg`.
    static let lentAtLeast = 256

    /// A value, HTML-escaped.
    @inline(__always)
    mutating func text<Value: HTMLText>(_ value: Value) {
        value.write(to: &self)
    }

    /// Appends UTF-8 text with `& < > " '` escaped; runs without a special byte are copied whole.
    mutating func escape(_ utf8: UnsafeBufferPointer<UInt8>) {
        guard let base = utf8.baseAddress else { return }
        var runStart = 0
        var index = 0
        while index < utf8.count {
            // Most values have nothing to escape: one table look-up per byte until something does.
            guard let replacement = HTML.replacements[Int(base[index])] else { index += 1; continue }
            if index > runStart { append(base + runStart, count: index - runStart) }
            raw(replacement)
            index += 1
            runStart = index
        }
        if runStart < utf8.count { append(base + runStart, count: utf8.count - runStart) }
    }

    /// What each byte is written as, for the five that HTML needs escaped; nil for the rest.
    private static let replacements: [StaticString?] = (0...255).map { byte -> StaticString? in
        switch byte {
        case 0x26: "&amp;"
        case 0x3C: "&lt;"
        case 0x3E: "&gt;"
        case 0x22: "&quot;"
        case 0x27: "&#39;"
        default: nil
        }
    }

    /// A number's decimal digits, written in place.
    mutating func decimal(_ value: Int64) {
        if value < 0 { append(0x2D) }
        var magnitude = value.magnitude
        var digits = 1
        var rest = magnitude / 10
        while rest > 0 { digits += 1; rest /= 10 }
        if count + digits > capacity { grow(toHold: count + digits) }
        var position = count + digits
        repeat {
            position -= 1
            start[position] = 0x30 + UInt8(truncatingIfNeeded: magnitude % 10)
            magnitude /= 10
        } while magnitude > 0
        count += digits
    }

    /// `text` escaped, as bytes (used for strings rendered once and reused).
    static func escaped(_ text: String) -> [UInt8] {
        var html = HTML(capacity: text.utf8.count)
        html.text(text)
        return html.bytes
    }
}

/// A value a template can show. Text is escaped; numbers are written as digits.
public protocol HTMLText {
    func write(to html: inout HTML)
}

extension String: HTMLText {
    @inline(__always)
    public func write(to html: inout HTML) {
        var text = self
        text.withUTF8 { html.escape($0) }
    }
}

extension Substring: HTMLText {
    public func write(to html: inout HTML) {
        var text = self
        text.withUTF8 { html.escape($0) }
    }
}

extension Int: HTMLText {
    public func write(to html: inout HTML) { Int64(self).write(to: &html) }
}

extension Int64: HTMLText {
    public func write(to html: inout HTML) { html.decimal(self) }
}

extension Double: HTMLText {
    public func write(to html: inout HTML) { String(self).write(to: &html) }
}

extension Optional: HTMLText where Wrapped: HTMLText {
    /// Nothing for a missing value: a gap, never the word "nil".
    public func write(to html: inout HTML) {
        if let value = self { value.write(to: &html) }
    }
}

/// HTML rendered by a template, kept to be shown again inside another page unescaped (it was
/// escaped when it was rendered).
public struct HTMLFragment: HTMLText, Sendable {
    public let bytes: [UInt8]
    /// The bytes deflated once, for a fragment shown in many compressed pages (a city's weather):
    /// a page that holds it compresses only the rest.
    let deflated: Gzip.DeflatedRun?
    public init(_ bytes: [UInt8]) { self.init(bytes, deflated: nil) }
    /// Text escaped once, to be shown many times.
    public init(escaping text: String) { self.init(HTML.escaped(text), deflated: nil) }
    init(_ bytes: [UInt8], deflated: Gzip.DeflatedRun?) {
        self.bytes = bytes
        self.deflated = deflated
    }

    /// The same fragment with its bytes deflated, once, at the level kept pages use (level 9 cost
    /// twice as much for a few bytes less, and a forecast refreshed every minute pays it each time).
    /// Both kept in buffers of their exact size: such a fragment is kept in a cache.
    func deflatedOnce(level: Int32 = 6) -> HTMLFragment {
        HTMLFragment(bytes.compacted(), deflated: Gzip.DeflatedRun(bytes, level: level))
    }
    /// What the fragment holds in memory (a cache's cost for it).
    var residentBytes: Int { ResidentBytes.array(bytes) + (deflated.map { ResidentBytes.array($0.deflated) } ?? 0) }
    public func write(to html: inout HTML) { html.raw(self) }
}

/// Zero or one scope for a section: a flag or a present value shows the content once.
struct SectionOnce<Element>: Sequence, IteratorProtocol {
    var element: Element?
    mutating func next() -> Element? {
        defer { element = nil }
        return element
    }
}

/// What `{{#name}}` and `{{^name}}` mean for each kind of value (see TemplateCompiler).
enum Section {
    /// A flag: the content once, in the same scope.
    @inline(__always)
    static func items<Parent>(_ flag: Bool, parent: Parent) -> SectionOnce<Parent> {
        SectionOnce(element: flag ? parent : nil)
    }

    /// A string: the content once, in the same scope, when it is not empty.
    @inline(__always)
    static func items<Parent>(_ text: String, parent: Parent) -> SectionOnce<Parent> {
        SectionOnce(element: text.isEmpty ? nil : parent)
    }

    /// An optional string: the content once, in the same scope, when present and not empty.
    @inline(__always)
    static func items<Parent>(_ text: String?, parent: Parent) -> SectionOnce<Parent> {
        SectionOnce(element: (text ?? "").isEmpty ? nil : parent)
    }

    /// An optional plain value (a number): the content once, in the same scope, when present.
    @inline(__always)
    static func items<Parent, Value: HTMLText>(_ value: Value?, parent: Parent) -> SectionOnce<Parent> {
        SectionOnce(element: value == nil ? nil : parent)
    }

    /// An optional view: the content once with the view as its scope.
    @inline(__always)
    static func items<Parent, Value>(_ value: Value?, parent: Parent) -> SectionOnce<Value> {
        SectionOnce(element: value)
    }

    /// A list: the content once per element, each the scope.
    @inline(__always)
    static func items<Parent, Elements: Collection>(_ elements: Elements, parent: Parent) -> Elements {
        elements
    }

    @inline(__always) static func isEmpty(_ flag: Bool) -> Bool { !flag }
    @inline(__always) static func isEmpty(_ text: String) -> Bool { text.isEmpty }
    @inline(__always) static func isEmpty(_ text: String?) -> Bool { (text ?? "").isEmpty }
    @inline(__always) static func isEmpty<Value>(_ value: Value?) -> Bool { value == nil }
    @inline(__always) static func isEmpty<Elements: Collection>(_ elements: Elements) -> Bool { elements.isEmpty }
}

/// The page language's strings, escaped once at start-up, indexed by the keys the build checked.
public struct Strings: Sendable {
    let table: [[UInt8]]

    subscript(key: StringKey) -> [UInt8] {
        @inline(__always) get { table[key.rawValue] }
    }
}
