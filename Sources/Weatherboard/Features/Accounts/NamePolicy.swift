import Foundation

/// Who a name may look like. Posts show display names, so a name that reads like an admin's, or
/// like the site's staff, is a way to speak with authority nobody gave (three "Moderator notice:
/// confirm your password at …" posts once looked exactly like the real admin's). Names are
/// compared by their *skeleton*: compatibility-folded (NFKD), without marks, format and bidi
/// characters or spaces and punctuation, lower-cased, and with look-alike letters from other
/// scripts and digits made one (Cyrillic `а` is `a`, `1`, `I` and `l` are one letter), after
/// Unicode's confusable-detection idea (UTS #39 §4) on a small table of the look-alikes that
/// matter for Latin names.
enum NamePolicy {
    /// Words no display name may contain: they claim the site's voice however they are framed.
    static let neverInNames = ["moderator", "administrator", "weatherboard", "관리자", "운영자"]
    /// Names that may not be taken whole, as a username or a display name.
    static let reserved = ["admin", "admins", "mod", "mods", "moderators", "root", "superuser", "support", "staff", "system",
                           "official", "sysop", "security", "webmaster", "postmaster", "deleted user", "삭제된 사용자"]

    private static let reservedSkeletons = Set(reserved.map(skeleton))
    private static let neverSkeletons = neverInNames.map(skeleton)

    /// Why `username` may not be chosen at sign-up (a catalog key), or nil. Operators can still
    /// make any valid name an admin from the command line.
    static func usernameProblem(_ username: String) -> String? {
        let key = skeleton(username)
        if reservedSkeletons.contains(key) || neverSkeletons.contains(where: key.contains) { return "error_username_reserved" }
        return nil
    }

    /// Why `displayName` (already within `TextPolicy.displayName`) may not be used by a person
    /// who is not one of `admins`, or nil: it shows nothing, carries bidi controls, claims the
    /// site's voice, or reads like an admin's username or display name.
    static func displayNameProblem(_ displayName: String, admins: [(username: String, displayName: String)]) -> String? {
        if displayName.unicodeScalars.contains(where: isBidiControl) { return "error_display_name_controls" }
        let key = skeleton(displayName)
        if key.isEmpty { return "error_display_name_invisible" }
        if reservedSkeletons.contains(key) || neverSkeletons.contains(where: key.contains) { return "error_display_name_reserved" }
        if admins.contains(where: { skeleton($0.username) == key || skeleton($0.displayName) == key }) {
            return "error_display_name_reserved"
        }
        return nil
    }

    /// Embeddings, overrides, isolates and marks that reorder text around them (a right-to-left
    /// override once reversed a post's metadata line).
    static func isBidiControl(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: return true
        default: return false
        }
    }

    /// The form two names are compared in; two names with one skeleton look alike.
    static func skeleton(_ name: String) -> String {
        var result = String.UnicodeScalarView()
        for scalar in name.decomposedStringWithCompatibilityMapping.unicodeScalars {
            let properties = scalar.properties
            switch properties.generalCategory {
            case .nonspacingMark, .spacingMark, .enclosingMark, .format, .control, .spaceSeparator, .lineSeparator,
                 .paragraphSeparator, .connectorPunctuation, .dashPunctuation, .otherPunctuation, .openPunctuation,
                 .closePunctuation, .initialPunctuation, .finalPunctuation:
                continue
            default:
                break
            }
            if properties.isDefaultIgnorableCodePoint || invisible.contains(scalar.value) { continue }
            if let same = lookAlikes[scalar] {
                result.append(same)
                continue
            }
            for lower in properties.lowercaseMapping.unicodeScalars { result.append(lookAlikes[lower] ?? lower) }
        }
        return String(result)
    }

    /// Characters that draw as blank space without being spaces or ignorables.
    private static let invisible: Set<UInt32> = [0x2800, 0x3164, 0xFFA0, 0x115F, 0x1160]

    /// Look-alikes folded into one letter (checked before and after lower-casing). `I`, `1`,
    /// `|` and `l` are all `l`, so `i` becomes `l` too: `admin`, `adm1n` and `ADMIN` meet.
    private static let lookAlikes: [Unicode.Scalar: Unicode.Scalar] = {
        var table: [Unicode.Scalar: Unicode.Scalar] = [:]
        let groups: [(String, Unicode.Scalar)] = [
            ("аαΑАɑ", "a"), ("Ввβ", "b"), ("сСϲϹ", "c"), ("ԁ", "d"), ("еЕεΕ", "e"), ("ɡ", "g"), ("һНΗ", "h"),
            ("iIlі1|ІιΙӀǀ", "l"), ("јЈ", "j"), ("кКκΚ", "k"), ("мМΜ", "m"), ("пΝ", "n"), ("оОοΟ0σ", "o"),
            ("рРρΡ", "p"), ("ԛ", "q"), ("ѕЅ5", "s"), ("тТτΤ", "t"), ("υ", "u"), ("νѵ", "v"), ("ԝ", "w"),
            ("хХχΧ", "x"), ("уУγΥ", "y"), ("ΖZ", "z"),
        ]
        for (members, letter) in groups {
            for member in members.unicodeScalars { table[member] = letter }
        }
        return table
    }()
}
