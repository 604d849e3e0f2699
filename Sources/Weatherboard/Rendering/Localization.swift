import Foundation
import Synchronization

/// The string catalogs, one JSON object per language (`Templates/strings/en.json`, `ko.json`).
/// Templates read them as `{{t.key}}`; code uses `string(_:_:)`, with `{name}` placeholders.
public struct Localization: Sendable {
    public let catalogs: [Language: [String: String]]
    /// Keys asked for that no catalog has: each one is a gap on some page. Tests fail on any.
    public var missingKeys: Set<String> { missing.keys.withLock { $0 } }
    private let missing = MissingKeys()

    private final class MissingKeys: Sendable {
        let keys = Mutex<Set<String>>([])
    }

    public init(directory: String) throws {
        var catalogs: [Language: [String: String]] = [:]
        for language in Language.allCases {
            let path = "\(directory)/\(language.rawValue).json"
            guard let data = FileManager.default.contents(atPath: path) else {
                throw StartupError("missing string catalog \(path)")
            }
            do {
                catalogs[language] = try JSONDecoder().decode([String: String].self, from: data)
            } catch {
                throw StartupError("string catalog \(path) is not a JSON object of strings: \(error)")
            }
        }
        let keys = catalogs.values.map { Set($0.keys) }
        if let first = keys.first, let mismatch = keys.first(where: { $0 != first }) {
            let difference = first.symmetricDifference(mismatch).sorted()
            throw StartupError("string catalogs differ in keys: \(difference.joined(separator: ", "))")
        }
        self.catalogs = catalogs
    }

    /// The string for `key` with `{name}` placeholders filled; the key itself when missing, so a
    /// gap shows in the page instead of crashing it (and is remembered in `missingKeys`).
    public func string(_ key: String, _ language: Language, _ arguments: [String: String] = [:]) -> String {
        guard let text = catalogs[language]?[key] else {
            missing.keys.withLock { _ = $0.insert(key) }
            return key
        }
        guard !arguments.isEmpty else { return text }
        return Self.fill(text, arguments)
    }

    /// The string for `key` cut at its `{hole}` placeholder, other placeholders filled: for a
    /// value the template writes as markup of its own (an instant as `<time>`), wherever the
    /// language puts it in the sentence. Without the placeholder, all of it comes `before`.
    func split(_ key: String, _ language: Language, around hole: String,
               _ arguments: [String: String] = [:]) -> (before: String, after: String) {
        let text = string(key, language)
        guard let (before, after) = Self.cut(text, at: hole) else { return (Self.fill(text, arguments), "") }
        return (Self.fill(before, arguments), Self.fill(after, arguments))
    }

    /// The text before and after its first `{hole}`, nil without one. On bytes: Foundation's
    /// `range(of:)` bridges to NSString.
    static func cut(_ text: String, at hole: String) -> (before: String, after: String)? {
        let utf8 = Array(text.utf8), marker = Array("{\(hole)}".utf8)
        guard utf8.count >= marker.count,
              let at = (0...(utf8.count - marker.count)).first(where: { utf8[$0..<($0 + marker.count)].elementsEqual(marker) })
        else { return nil }
        return (String(decoding: utf8[..<at], as: UTF8.self), String(decoding: utf8[(at + marker.count)...], as: UTF8.self))
    }

    /// `{name}` placeholders replaced in one pass over the text's UTF-8 (unknown ones are left as
    /// they are). Bytes, not `Character`s: the braces are ASCII, and this runs for every post.
    static func fill(_ text: String, _ arguments: [String: String]) -> String {
        let utf8 = text.utf8
        var out = ""
        var copied = utf8.startIndex
        var searchFrom = utf8.startIndex
        while let open = utf8[searchFrom...].firstIndex(of: UInt8(ascii: "{")),
              let close = utf8[open...].firstIndex(of: UInt8(ascii: "}")) {
            if let value = arguments[String(Substring(utf8[utf8.index(after: open)..<close]))] {
                out += Substring(utf8[copied..<open])
                out += value
                copied = utf8.index(after: close)
            }
            searchFrom = utf8.index(after: close)
        }
        out += Substring(utf8[copied...])
        return out
    }
}

/// A catalog string with one `{n}` placeholder, split once so that filling it in a loop costs two
/// appends (every post's "3 min ago").
struct CountedPhrase: Sendable {
    private let before: String
    private let after: String?

    init(_ text: String) {
        if let (before, after) = Localization.cut(text, at: "n") {
            (self.before, self.after) = (before, after)
        } else {
            (before, after) = (text, nil)
        }
    }

    func callAsFunction(_ count: Int) -> String {
        guard let after else { return before }
        return before + String(count) + after
    }
}
