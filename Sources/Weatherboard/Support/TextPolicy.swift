/// One rule for every text people type (display names, posts, report details, moderators'
/// reasons): length counted in Unicode scalars — the unit SQLite's `length()` and the schema's
/// `CHECK`s use — and in UTF-8 bytes; at most a few combining marks on one character (a single
/// "character" of 400,000 marks once passed a 40-character limit); no control characters but
/// new lines and tabs where lines are allowed; no noncharacters such as U+FFFE. Texts that pass
/// are also valid XML 1.0 character data, so the Atom feed stays well-formed.
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

    enum Problem: Equatable {
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
}
