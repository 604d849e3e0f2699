import Foundation

/// What is typed into the posts' search box, read as the terms every result must hold: words,
/// and phrases in double quotes, each found as a substring in any case ("mbrel" finds
/// "Umbrella", "우산" finds "우산이"). Nothing typed is syntax to a database: quotes only group,
/// an unclosed one runs to the end, `*`, `AND` and lone punctuation are dropped, and `%` or `_`
/// are matched as themselves (`matches`), so no input can make a query fail.
struct PostQuery: Equatable, Sendable {
    /// Folded as `fold` folds a post's text.
    let terms: [String]

    static let maximumLength = 200
    static let maximumTerms = 6

    /// What a search box's value is read as: at most `maximumLength` characters of ordinary
    /// text (`TextPolicy.searchable`), also what the page gives back in the box.
    static func typed(_ raw: String) -> String {
        String(TextPolicy.searchable(raw, bytes: maximumLength * 4).trimmingCharacters(in: .whitespaces).prefix(maximumLength))
    }

    init(_ typed: String) {
        var terms: [String] = []
        var current = "", inPhrase = false
        func end() {
            // Folded, then made ordinary text again: compatibility forms can fold to a space and a
            // mark ("‾" is " ̅"), and a lone mark is never on a character's edge.
            let folded = Self.fold(current.replacingOccurrences(of: "*", with: "")).trimmingCharacters(in: .whitespaces)
            let term = TextPolicy.searchable(folded, bytes: folded.utf8.count).trimmingCharacters(in: .whitespaces)
            current = ""
            // Words that would be operators elsewhere, and terms with nothing to find in them.
            guard term != "and", term.unicodeScalars.contains(where: { CharacterSet.alphanumerics.contains($0) }),
                  !terms.contains(term) else { return }
            terms.append(term)
        }
        for character in Self.typed(typed) {
            if character == "\"" || character == "“" || character == "”" {
                end()
                inPhrase.toggle()
            } else if character.isWhitespace && !inPhrase {
                end()
            } else {
                current.append(character.isWhitespace ? " " : character)
            }
        }
        end()
        self.terms = Array(terms.prefix(Self.maximumTerms))
    }

    var isEmpty: Bool { terms.isEmpty }

    /// Text as search compares it: compatibility forms composed (full-width letters, Hangul
    /// jamo), lower case, and composed again, so that folding twice changes nothing (lower case
    /// can leave marks out of canonical order: "İ" with a mark below).
    static func fold(_ text: String) -> String {
        text.precomposedStringWithCompatibilityMapping.lowercased().precomposedStringWithCompatibilityMapping
    }

    /// Whether `body` holds every term: the exact test, after the index's coarser one.
    func matches(_ body: String) -> Bool {
        let folded = FoldedText(body)
        return terms.allSatisfy { !folded.occurrences(of: $0, first: true).isEmpty }
    }

    /// Each term as a `LIKE` pattern for the index: `%` and `_` in a term become `_` (any one
    /// character: the index cannot take an `ESCAPE`), and `matches` keeps only exact matches.
    var likePatterns: [String] {
        terms.map { "%" + $0.replacingOccurrences(of: "%", with: "_") + "%" }
    }

    /// `body` cut into stretches, those that hold a term marked: what the results page shows
    /// in `<mark>`. Found in the text as written, whatever its case or width.
    func marked(_ body: String) -> [(text: String, marked: Bool)] {
        let folded = FoldedText(body)
        var ranges = terms.flatMap { folded.occurrences(of: $0, first: false) }
        ranges.sort { $0.lowerBound < $1.lowerBound }
        var parts: [(text: String, marked: Bool)] = []
        var at = body.startIndex
        for range in ranges where range.upperBound > at {
            let start = max(range.lowerBound, at)
            if at < start { parts.append((String(body[at..<start]), false)) }
            parts.append((String(body[start..<range.upperBound]), true))
            at = range.upperBound
        }
        if at < body.endIndex { parts.append((String(body[at...]), false)) }
        return parts
    }
}

/// A text folded one character at a time, each folded scalar remembering the character it came
/// from, so that a term found in the folded text is marked in the text as written. Searched with
/// the standard library only (Knuth–Morris–Pratt over scalars: linear in the text and the term,
/// whatever either holds); a match begins and ends on a character's edges, as `String.contains` would.
struct FoldedText {
    private let text: String
    private var scalars: [UInt32] = []
    /// For each folded scalar: the index of the character it came from in `text`.
    private var origins: [String.Index] = []
    /// For each folded scalar: whether it is the first of its character's.
    private var starts: [Bool] = []

    init(_ text: String) {
        self.text = text
        scalars.reserveCapacity(text.utf8.count)
        var index = text.startIndex
        while index < text.endIndex {
            let character = text[index]
            var first = true
            func add(_ scalar: Unicode.Scalar) {
                scalars.append(scalar.value)
                origins.append(index)
                starts.append(first)
                first = false
            }
            if character.isASCII, let ascii = character.asciiValue {
                add(Unicode.Scalar(ascii >= 65 && ascii <= 90 ? ascii | 0x20 : ascii))
            } else {
                for scalar in PostQuery.fold(String(character)).unicodeScalars { add(scalar) }
            }
            index = text.index(after: index)
        }
    }

    /// The ranges of `text` whose folded characters are `term` (already folded); only the first
    /// when `first`.
    func occurrences(of term: String, first: Bool) -> [Range<String.Index>] {
        let pattern = term.unicodeScalars.map(\.value)
        guard !pattern.isEmpty, pattern.count <= scalars.count else { return [] }
        // The longest proper prefix of the pattern that is also a suffix, for each of its prefixes.
        var failure = [Int](repeating: 0, count: pattern.count)
        var k = 0
        for i in 1..<pattern.count {
            while k > 0 && pattern[i] != pattern[k] { k = failure[k - 1] }
            if pattern[i] == pattern[k] { k += 1 }
            failure[i] = k
        }
        var found: [Range<String.Index>] = []
        var matched = 0
        var lastEnd = 0
        for (i, scalar) in scalars.enumerated() {
            while matched > 0 && scalar != pattern[matched] { matched = failure[matched - 1] }
            if scalar == pattern[matched] { matched += 1 }
            guard matched == pattern.count else { continue }
            let start = i + 1 - pattern.count, end = i + 1
            matched = failure[matched - 1]
            guard start >= lastEnd, starts[start], end == scalars.count || starts[end] else { continue }
            let upper = end == scalars.count ? text.endIndex : origins[end]
            found.append(origins[start]..<upper)
            if first { return found }
            lastEnd = end
        }
        return found
    }
}
