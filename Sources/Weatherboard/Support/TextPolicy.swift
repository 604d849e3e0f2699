import Foundation

/// One rule for every text people type (display names, posts, report details, moderators'
/// reasons): length counted in Unicode scalars — the unit SQLite's `length()` and the schema's
/// `CHECK`s use — and in UTF-8 bytes; at most a few combining marks on one character (a single
/// "character" of 400,000 marks once passed a 40-character limit); no control characters but
/// new lines and tabs where lines are allowed; no noncharacters such as U+FFFE. Texts that pass
/// are also valid XML 1.0 character data, so the Atom feed stays well-formed.
///
/// A field's raw value is cut to a bounded number of bytes before any Unicode work (`typed`):
/// normalising a megabyte of decomposed characters cost 2 s of CPU, and echoing it back a
/// megabyte of page.
struct TextPolicy: Sendable {
    var maxScalars: Int
    var maxBytes: Int
    var allowsLines: Bool
    var allowsEmpty = false

    /// Combining marks allowed on one base character (enough for any script's real text).
    static let maxMarksPerCharacter = 4

    static let displayName = TextPolicy(maxScalars: 40, maxBytes: 160, allowsLines: false)
    static let post = TextPolicy(maxScalars: 500, maxBytes: 2_000, allowsLines: true)
    static let reportDetail = TextPolicy(maxScalars: 1_000, maxBytes: 4_000, allowsLines: true, allowsEmpty: true)
    static let moderationReason = TextPolicy(maxScalars: 500, maxBytes: 2_000, allowsLines: false, allowsEmpty: true)
    static let photoAlt = TextPolicy(maxScalars: 200, maxBytes: 800, allowsLines: false, allowsEmpty: true)

    enum Problem: Error, Equatable {
        case empty, tooLong, nul, control, noncharacter, tooManyMarks

        /// The catalog key of the message; `lengthKey` is the field's own wording of its limit.
        func key(lengthKey: String) -> String {
            switch self {
            case .empty, .tooLong: return lengthKey
            case .nul: return "error_text_nul"
            case .control, .noncharacter: return "error_text_control"
            case .tooManyMarks: return "error_text_marks"
            }
        }
    }

    /// The most bytes of a raw field looked at: three times the limit, room for white space
    /// around the text, CRLF line ends and decomposed characters that NFC composes (a Hangul
    /// syllable typed as three jamo is 9 bytes, composed 3).
    var inputBytes: Int { maxBytes * 3 }

    /// A field as typed, cut before any Unicode work.
    struct Typed: Equatable {
        /// At most `inputBytes` bytes of what was sent, cut at a scalar boundary: what a refused
        /// form gives back (all of a text a little over the limit, to shorten; never a megabyte).
        var text: String
        /// What was sent was longer than `inputBytes`: too long whatever normalising does.
        var wasCut: Bool
    }

    /// `raw` cut to `inputBytes` bytes (at a scalar boundary); linear in the bytes kept, never
    /// in the bytes sent.
    func typed(_ raw: String?) -> Typed {
        guard let raw else { return Typed(text: "", wasCut: false) }
        let utf8 = raw.utf8
        guard utf8.count > inputBytes else { return Typed(text: raw, wasCut: false) }
        return Typed(text: Self.prefix(raw, bytes: inputBytes), wasCut: true)
    }

    /// The text as stored (white space trimmed at both ends, CRLF made LF where lines are allowed,
    /// NFC), or what is wrong with it.
    func normalise(_ typed: Typed) -> Result<String, Problem> {
        if typed.wasCut { return .failure(.tooLong) }
        var text = typed.text
        if allowsLines { text = text.replacingOccurrences(of: "\r\n", with: "\n") }
        text = text.trimmingCharacters(in: .whitespacesAndNewlines).precomposedStringWithCanonicalMapping
        if let problem = problem(text) { return .failure(problem) }
        return .success(text)
    }

    /// The longest prefix of `text` of at most `bytes` UTF-8 bytes that ends on a scalar boundary.
    static func prefix(_ text: String, bytes: Int) -> String {
        let utf8 = text.utf8
        guard utf8.count > bytes else { return text }
        var end = utf8.index(utf8.startIndex, offsetBy: bytes)
        while end > utf8.startIndex && utf8[end] & 0xC0 == 0x80 { end = utf8.index(before: end) }
        return String(decoding: utf8[..<end], as: UTF8.self)
    }

    /// What is wrong with `text`, or nil.
    func problem(_ text: String) -> Problem? {
        if text.isEmpty { return allowsEmpty ? nil : .empty }
        if text.utf8.count > maxBytes { return .tooLong }
        var scalars = 0
        var marks = 0
        for scalar in text.unicodeScalars {
            scalars += 1
            if scalars > maxScalars { return .tooLong }
            let value = scalar.value
            if value == 0 { return .nul }
            if value < 0x20 || (0x7F...0x9F).contains(value) {
                if !(allowsLines && (value == 0x0A || value == 0x09)) { return .control }
            }
            if (0xFDD0...0xFDEF).contains(value) || value & 0xFFFE == 0xFFFE { return .noncharacter }
            switch scalar.properties.generalCategory {
            case .nonspacingMark, .spacingMark, .enclosingMark:
                marks += 1
                if marks > Self.maxMarksPerCharacter { return .tooManyMarks }
            default:
                marks = 0
            }
        }
        return nil
    }

    /// What typed text is looked for as (a search box's words): cut to `bytes` first, then every
    /// scalar dropped that no text people write is found by (controls, format characters such as
    /// bidirectional overrides, noncharacters, U+FFFD left by a broken encoding), and combining
    /// marks with nothing to combine with or past `maxMarksPerCharacter`. Linear in `bytes`:
    /// what reaches string searching and SQL patterns is always ordinary text.
    static func searchable(_ raw: String, bytes: Int) -> String {
        var kept = String.UnicodeScalarView()
        var marks = 0
        var base = false
        for scalar in prefix(raw, bytes: bytes).unicodeScalars {
            let value = scalar.value
            if (0xFDD0...0xFDEF).contains(value) || value & 0xFFFE == 0xFFFE || value == 0xFFFD { continue }
            switch scalar.properties.generalCategory {
            case .control, .format, .surrogate, .unassigned, .lineSeparator, .paragraphSeparator:
                if scalar.properties.isWhitespace || value == 0x09 || value == 0x0A || value == 0x0D {
                    kept.append(" ")
                    base = false
                    marks = 0
                }
            case .nonspacingMark, .spacingMark, .enclosingMark:
                guard base, marks < maxMarksPerCharacter else { continue }
                marks += 1
                kept.append(scalar)
            default:
                base = !scalar.properties.isWhitespace
                marks = 0
                kept.append(scalar)
            }
        }
        return String(kept)
    }
}
