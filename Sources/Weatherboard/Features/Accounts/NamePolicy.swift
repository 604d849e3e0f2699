import Foundation

/// Who a name may look like. Posts show display names, so a name that reads like an admin's, or
/// like the site's staff, is a way to speak with authority nobody gave (three "Moderator notice:
/// confirm your password at …" posts once looked exactly like the real admin's). Names are
/// compared by their *skeleton*: compatibility-folded (NFKD), without marks, format and bidi
/// characters or spaces and punctuation, each character replaced by its prototype from
/// Unicode's confusables data (UTS #39 §4, `confusables.txt`, shipped with the site: Cyrillic
/// `а` is `a`, `1` and `I` are `l`, a dotless `ı` is `i`), small capitals made letters (by their
/// Unicode names: `ʀᴏᴏᴛ` is `root`), lower-cased, and `i` made `l` so that `admin`, `ADMIN` and
/// `adm1n` meet (UTS #39 leaves case alone; names here are compared without it).
enum NamePolicy {
    /// Words no display name may contain: they claim the site's voice however they are framed.
    static let neverInNames = ["moderator", "administrator", "weatherboard", "관리자", "운영자", "운영팀", "운영진",
                               "site admin", "siteadmin", "mod team", "admin team", "staff team", "support team"]
    /// Names that may not be taken whole, as a username or a display name.
    static let reserved = ["admin", "admins", "mod", "mods", "moderators", "root", "superuser", "support", "staff", "system",
                           "official", "sysop", "security", "webmaster", "postmaster", "deleted user", "삭제된 사용자"]

    private static let reservedSkeletons = Set(reserved.map(skeleton))
    private static let neverSkeletons = neverInNames.map(skeleton)

    /// Why `username` may not be chosen at sign-up (a catalog key), or nil: a reserved name, or
    /// one that reads like an admin's username or display name (`r00t_admin`, `rootadmin` and
    /// `root__admin` beside `root_admin`), whole or as a run of its parts between `_`, `-` and
    /// `.`. Operators can still make any valid name an admin from the command line.
    static func usernameProblem(_ username: String, admins: [(username: String, displayName: String)] = []) -> String? {
        let key = skeleton(username)
        if reservedSkeletons.contains(key) || neverSkeletons.contains(where: key.contains) { return "error_username_reserved" }
        let adminKeys = Set(admins.flatMap { [skeleton($0.username), skeleton($0.displayName)] }.filter { !$0.isEmpty })
        let parts = username.split(whereSeparator: { $0 == "_" || $0 == "-" || $0 == "." })
        for first in parts.indices {
            for last in first..<parts.endIndex where adminKeys.contains(skeleton(parts[first...last].joined())) {
                return "error_username_reserved"
            }
        }
        return nil
    }

    /// Digits written for the letters they look like, which the confusables data maps to other
    /// scripts' letters (`0` and `1` it already takes for `o` and `l`): `4dm1n` is `admin`.
    private static let digitsAsLetters: [Unicode.Scalar: Unicode.Scalar] = ["3": "e", "4": "a", "5": "s", "7": "t", "8": "b", "9": "g"]

    /// Why `displayName` (already within `TextPolicy.displayName`) may not be used by a person
    /// who is not one of `admins`, or nil: it shows nothing, carries bidi controls, claims the
    /// site's voice, or reads like an admin's username or display name.
    static func displayNameProblem(_ displayName: String, admins: [(username: String, displayName: String)]) -> String? {
        if displayName.unicodeScalars.contains(where: isBidiControl) { return "error_display_name_controls" }
        let key = skeleton(displayName)
        if key.isEmpty { return "error_display_name_invisible" }
        if reservedSkeletons.contains(key) || neverSkeletons.contains(where: key.contains) { return "error_display_name_reserved" }
        // An admin's name among other words ("root_admin ✓", "The Root Admin") reads as theirs
        // too; inside a longer word ("Chiefly" beside `chief`) it does not.
        let adminKeys = Set(admins.flatMap { [skeleton($0.username), skeleton($0.displayName)] }.filter { !$0.isEmpty })
        let words = displayName.split(whereSeparator: { $0.isWhitespace })
        for first in words.indices {
            for last in first..<words.endIndex where adminKeys.contains(skeleton(words[first...last].joined())) {
                return "error_display_name_reserved"
            }
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
            if let letter = digitsAsLetters[scalar] {
                result.append(letter)
                continue
            }
            for prototype in prototype(of: scalar).decomposedStringWithCompatibilityMapping.unicodeScalars
            where !prototype.properties.isDefaultIgnorableCodePoint && prototype.properties.generalCategory != .nonspacingMark {
                // Lower-cased, then taken for its prototype again (`M` is `m`, which is `rn`).
                for lower in prototype.properties.lowercaseMapping.unicodeScalars {
                    for letter in (isHangulJamo(lower) ? nil : confusables[lower.value])?.unicodeScalars ?? String(lower).unicodeScalars {
                        result.append(letter == "i" ? "l" : letter)
                    }
                }
            }
        }
        return String(result)
    }

    /// What `scalar` is taken for: a small capital is its letter (by its Unicode name: the
    /// confusables data leaves most of them out), anything else its confusables prototype.
    private static func prototype(of scalar: Unicode.Scalar) -> String {
        // Small capitals live in IPA Extensions and Phonetic Extensions; no name is made for ASCII.
        if scalar.value >= 0x0250, let name = scalar.properties.name, name.hasPrefix("LATIN LETTER SMALL CAPITAL "),
           let letter = name.dropFirst("LATIN LETTER SMALL CAPITAL ".count).first, name.count == "LATIN LETTER SMALL CAPITAL ".count + 1 {
            return String(letter).lowercased()
        }
        return isHangulJamo(scalar) ? String(scalar) : confusables[scalar.value] ?? String(scalar)
    }

    /// Hangul syllables decompose into jamo, which the confusables data folds across positions
    /// (a final ㄹ to an initial one): left as they are, Korean names compose again and compare
    /// as written.
    private static func isHangulJamo(_ scalar: Unicode.Scalar) -> Bool {
        (0x1100...0x11FF).contains(scalar.value)
    }

    /// UTS #39's confusables: a character to its prototype, read once from `confusables.txt`
    /// (`check` at start-up says why not).
    private static let loaded: Result<[UInt32: String], StartupError> = {
        let text: String
        switch InstalledFiles.catalogText("confusables.txt", feature: "Accounts") {
        case .success(let read): text = read
        case .failure(let problem): return .failure(problem)
        }
        var table: [UInt32: String] = [:]
        for line in text.split(separator: "\n") {
            // "0131 ;\t0069 ;\tMA\t# ( ı → i ) …": source, prototype (code points in hex), type.
            let fields = line.split(separator: ";", maxSplits: 2)
            guard fields.count == 3, !line.hasPrefix("#"),
                  let source = UInt32(fields[0].trimmingCharacters(in: .whitespaces), radix: 16) else { continue }
            let target = fields[1].split(whereSeparator: { $0 == " " || $0 == "\t" }).compactMap { UInt32($0, radix: 16).flatMap(Unicode.Scalar.init) }
            guard !target.isEmpty else { return .failure(StartupError("confusables.txt: no prototype for \(fields[0])")) }
            table[source] = String(String.UnicodeScalarView(target))
        }
        guard table.count > 1_000 else { return .failure(StartupError("confusables.txt holds only \(table.count) mappings")) }
        return .success(table)
    }()

    private static var confusables: [UInt32: String] {
        if case .success(let table) = loaded { return table }
        return [:]
    }

    /// Throws why the confusables cannot be read: names are not compared without them.
    static func check() throws {
        _ = try loaded.get()
    }

    /// Characters that draw as blank space without being spaces or ignorables.
    private static let invisible: Set<UInt32> = [0x2800, 0x3164, 0xFFA0, 0x115F, 0x1160]
}
