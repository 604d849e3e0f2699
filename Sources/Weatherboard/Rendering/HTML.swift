/// The bytes of a page being rendered. Compiled templates (`Templates.*`, generated at build time
/// from `Templates/*.mustache`) append their fixed text as is and every value through `text`,
/// which HTML-escapes it on the way in.
public struct HTML {
    public var bytes: [UInt8]

    public init(capacity: Int = 16 * 1024) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// Template text, already HTML.
    @inline(__always)
    mutating func raw(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    /// Bytes that are already HTML (a catalog string escaped at start-up, a rendered fragment).
    @inline(__always)
    mutating func raw(_ html: [UInt8]) {
        bytes.append(contentsOf: html)
    }

    /// A value, HTML-escaped.
    @inline(__always)
    mutating func text<Value: HTMLText>(_ value: Value) {
        value.write(to: &self)
    }

    /// Appends UTF-8 text with `& < > " '` escaped; runs without a special byte are copied whole.
    mutating func escape(_ utf8: UnsafeBufferPointer<UInt8>) {
        var runStart = 0
        for index in 0..<utf8.count {
            let replacement: StaticString
            switch utf8[index] {
            case 0x26: replacement = "&amp;"
            case 0x3C: replacement = "&lt;"
            case 0x3E: replacement = "&gt;"
            case 0x22: replacement = "&quot;"
            case 0x27: replacement = "&#39;"
            default: continue
            }
            if index > runStart { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<index])) }
            raw(replacement)
            runStart = index + 1
        }
        if runStart < utf8.count { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart...])) }
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
    public func write(to html: inout HTML) {
        if self < 0 { html.bytes.append(0x2D) }
        var magnitude = self.magnitude
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                     UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &digits) { buffer in
            var position = buffer.count
            repeat {
                position -= 1
                buffer[position] = 0x30 + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            html.bytes.append(contentsOf: buffer[position...])
        }
    }
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
    public init(_ bytes: [UInt8]) { self.bytes = bytes }
    public func write(to html: inout HTML) { html.raw(bytes) }
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
