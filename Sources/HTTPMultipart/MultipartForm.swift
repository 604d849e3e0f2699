import Foundation

/// A `multipart/form-data` body (RFC 7578 on RFC 2046 §5.1): its text fields, and its files with
/// the name and type the client gave them (a claim, not a fact: whoever reads a file decides what
/// it is from its bytes).
public struct MultipartForm: Sendable {
    public struct File: Sendable {
        /// The form field's name.
        public var name: String
        /// The file's name as the client sent it (may be empty).
        public var filename: String
        /// The part's `Content-Type` as sent (nil when absent).
        public var contentType: String?
        /// The part's bytes, a slice of the body (a 12 MB photo is not copied again).
        public var bytes: ArraySlice<UInt8>
    }

    public struct Limits: Sendable {
        /// Most parts in one body; more → 413.
        public var maxParts = 64
        /// Largest header section of one part; larger → 400 (a part's head is a line or two).
        public var maxPartHeaderBytes = 4 * 1024
        /// Largest text field; larger → 413 (files are bounded by the body's own limit).
        public var maxFieldBytes = 256 * 1024

        public init() {}
    }

    /// The text fields in order (`Request.multipartBody` gives them as a `URLEncodedForm`).
    public private(set) var textFields: [(name: String, value: String)] = []
    public private(set) var files: [File] = []

    /// Why a body is refused: malformed (400), or past `Limits` (413).
    public enum Failure: Error {
        case malformed(String)
        case tooLarge(String)
    }

    /// The first file sent as `name` that is not empty (`[File].named`).
    public func file(_ name: String) -> File? { files.named(name) }

    /// The boundary parameter of a `multipart/form-data` content type (RFC 2046 §5.1.1: 1–70
    /// characters), or nil when the type is another or the boundary is malformed.
    public static func boundary(ofContentType value: String) -> String? {
        let parameters = value.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
        guard parameters.first?.lowercased() == "multipart/form-data" else { return nil }
        for parameter in parameters.dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1)
            guard pair.count == 2, pair[0].trimmingCharacters(in: .whitespaces).lowercased() == "boundary" else { continue }
            var boundary = pair[1].trimmingCharacters(in: .whitespaces)
            if boundary.count >= 2 && boundary.hasPrefix("\"") && boundary.hasSuffix("\"") {
                boundary = String(boundary.dropFirst().dropLast())
            }
            guard (1...70).contains(boundary.utf8.count),
                  boundary.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F || $0 == 0x20 }),
                  boundary.utf8.last != 0x20 else { return nil }
            return boundary
        }
        return nil
    }

    /// Parses `body` in one pass: each delimiter is found by scanning for CR and comparing at most
    /// the delimiter's length, so the work is linear in the body (at most 74 comparisons a byte).
    /// Throws `Failure`.
    public init(body: [UInt8], boundary: String, limits: Limits = Limits()) throws {
        let delimiter = Array("\r\n--\(boundary)".utf8)
        // The first delimiter may open the body without the CRLF before it (the preamble is empty).
        var position: Int
        if body.starts(with: delimiter.dropFirst(2)) {
            position = delimiter.count - 2
        } else if let first = Self.find(delimiter, in: body, from: 0) {
            position = first + delimiter.count
        } else {
            throw Failure.malformed("multipart body without its boundary")
        }
        var parts = 0
        while true {
            // After a delimiter: `--` closes the body; otherwise optional whitespace and CRLF.
            if body.count - position >= 2 && body[position] == 0x2D && body[position + 1] == 0x2D { break }
            while position < body.count && (body[position] == 0x20 || body[position] == 0x09) { position += 1 }
            guard body.count - position >= 2, body[position] == 0x0D, body[position + 1] == 0x0A else {
                throw Failure.malformed("malformed multipart delimiter")
            }
            position += 2
            parts += 1
            if parts > limits.maxParts { throw Failure.tooLarge("too many parts") }
            guard let headEnd = Self.find(Self.blankLine, in: body, from: position, within: limits.maxPartHeaderBytes + 4) else {
                throw Failure.malformed("malformed part head")
            }
            let head = try PartHead(body[position..<headEnd])
            let contentStart = headEnd + Self.blankLine.count
            guard let contentEnd = Self.find(delimiter, in: body, from: contentStart) else {
                throw Failure.malformed("multipart body not closed")
            }
            let content = body[contentStart..<contentEnd]
            if let filename = head.filename {
                files.append(File(name: head.name, filename: filename, contentType: head.contentType, bytes: content))
            } else {
                if content.count > limits.maxFieldBytes { throw Failure.tooLarge("field too large") }
                guard let value = String(validating: content, as: UTF8.self) else {
                    throw Failure.malformed("form field is not UTF-8")
                }
                textFields.append((head.name, value))
            }
            position = contentEnd + delimiter.count
        }
    }

    private static let blankLine: [UInt8] = [0x0D, 0x0A, 0x0D, 0x0A]

    /// Where `needle` (starting with CR) next occurs in `haystack` from `from`, looking at most
    /// `within` bytes on.
    private static func find(_ needle: [UInt8], in haystack: [UInt8], from: Int, within: Int = .max) -> Int? {
        let end = haystack.count - needle.count
        let last = within == .max ? end : min(end, from + within - needle.count)
        guard from <= last else { return nil }
        return haystack.withUnsafeBufferPointer { bytes -> Int? in
            var i = from
            let first = needle[0]
            while i <= last {
                if bytes[i] == first {
                    var j = 1
                    while j < needle.count && bytes[i + j] == needle[j] { j += 1 }
                    if j == needle.count { return i }
                }
                i += 1
            }
            return nil
        }
    }

    /// A part's `Content-Disposition: form-data; name="…"; filename="…"` and `Content-Type`.
    private struct PartHead {
        var name = ""
        var filename: String?
        var contentType: String?

        init(_ bytes: ArraySlice<UInt8>) throws {
            guard let text = String(validating: bytes, as: UTF8.self) else {
                throw Failure.malformed("part head is not UTF-8")
            }
            var sawDisposition = false
            for line in text.split(separator: "\r\n", omittingEmptySubsequences: true) {
                guard let colon = line.firstIndex(of: ":") else { throw Failure.malformed("malformed part field") }
                let field = line[..<colon].trimmingCharacters(in: .whitespaces).lowercased()
                let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                switch field {
                case "content-disposition":
                    sawDisposition = true
                    let parameters = Self.parameters(value)
                    guard parameters.first?.name.lowercased() == "form-data",
                          let name = parameters.first(where: { $0.name.lowercased() == "name" })?.value
                    else { throw Failure.malformed("part is not form-data") }
                    self.name = name
                    filename = parameters.first(where: { $0.name.lowercased() == "filename" })?.value
                case "content-type":
                    contentType = value
                default:
                    continue
                }
            }
            guard sawDisposition else { throw Failure.malformed("part without Content-Disposition") }
        }

        /// `token; a=b; c="d; e"`: the leading token (value nil), then the parameters, quotes
        /// removed (a backslash escapes the next character inside quotes, as browsers send `\"`).
        static func parameters(_ value: String) -> [(name: String, value: String?)] {
            var result: [(name: String, value: String?)] = []
            var name = "", current = "", inQuotes = false, escaped = false, sawEquals = false
            func close() {
                let trimmedName = name.trimmingCharacters(in: .whitespaces)
                if sawEquals {
                    result.append((trimmedName, current))
                } else if !current.trimmingCharacters(in: .whitespaces).isEmpty {
                    result.append((current.trimmingCharacters(in: .whitespaces), nil))
                }
                name = ""; current = ""; sawEquals = false
            }
            for character in value {
                if inQuotes {
                    if escaped { current.append(character); escaped = false }
                    else if character == "\\" { escaped = true }
                    else if character == "\"" { inQuotes = false }
                    else { current.append(character) }
                } else if character == "\"" && sawEquals {
                    inQuotes = true
                } else if character == ";" {
                    close()
                } else if character == "=" && !sawEquals {
                    name = current; current = ""; sawEquals = true
                } else if !(sawEquals && current.isEmpty && character == " ") {
                    current.append(character)
                }
            }
            close()
            return result
        }
    }
}

extension [MultipartForm.File] {
    /// The first file sent as `name` that is not empty (a file input left empty sends an empty
    /// part with an empty filename).
    public func named(_ name: String) -> MultipartForm.File? {
        first { $0.name == name && !($0.bytes.isEmpty && $0.filename.isEmpty) }
    }
}
