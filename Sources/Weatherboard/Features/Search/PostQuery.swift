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

    init(_ typed: String) {
        var terms: [String] = []
        var current = "", inPhrase = false
        func end() {
            let term = Self.fold(current.replacingOccurrences(of: "*", with: "")).trimmingCharacters(in: .whitespaces)
            current = ""
            // Words that would be operators elsewhere, and terms with nothing to find in them.
            guard term != "and", term.unicodeScalars.contains(where: { CharacterSet.alphanumerics.contains($0) }),
                  !terms.contains(term) else { return }
            terms.append(term)
        }
        for character in typed.prefix(Self.maximumLength) {
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
    /// jamo), then lower case.
    static func fold(_ text: String) -> String { text.precomposedStringWithCompatibilityMapping.lowercased() }

    /// Whether `body` holds every term: the exact test, after the index's coarser one.
    func matches(_ body: String) -> Bool {
        let folded = Self.fold(body)
        return terms.allSatisfy { folded.contains($0) }
    }

    /// Each term as a `LIKE` pattern for the index: `%` and `_` in a term become `_` (any one
    /// character: the index cannot take an `ESCAPE`), and `matches` keeps only exact matches.
    var likePatterns: [String] {
        terms.map { "%" + $0.replacingOccurrences(of: "%", with: "_") + "%" }
    }

    /// `body` cut into stretches, those that hold a term marked: what the results page shows
    /// in `<mark>`. Found in the text as written, whatever its case or width.
    func marked(_ body: String) -> [(text: String, marked: Bool)] {
        var ranges: [Range<String.Index>] = []
        for term in terms {
            var from = body.startIndex
            while from < body.endIndex,
                  let found = body.range(of: term, options: [.caseInsensitive, .widthInsensitive], range: from..<body.endIndex) {
                ranges.append(found)
                from = found.upperBound
            }
        }
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
