// libFuzzer target for what is typed into the posts' search (scripts/fuzz-postquery.sh): the
// input's bytes up to the first 0xFF are the query (as a query string would give it, any UTF-8
// a browser can send), the rest a post's text. Beyond "no crash": the marked stretches put
// back together are the text, a term is only ever ordinary text (no controls, no format
// characters, no mark without a letter), and a text made of the query's own terms holds them.

import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let cut = bytes.firstIndex(of: 0xFF) ?? bytes.count
    let typed = String(decoding: bytes[..<cut], as: UTF8.self)
    let body = cut < bytes.count ? String(decoding: bytes[(cut + 1)...], as: UTF8.self) : typed
    let query = PostQuery(typed)
    for term in query.terms {
        for scalar in term.unicodeScalars {
            switch scalar.properties.generalCategory {
            case .control, .format, .surrogate: fatalError("a term holds U+\(String(scalar.value, radix: 16))")
            default: break
            }
        }
    }
    let parts = query.marked(body)
    if parts.map(\.text).joined() != body { fatalError("the marked stretches are not the text") }
    // Every term `matches` finds lies in a stretch `marked` shows (overlapping terms share one).
    var runs: [String] = [], open = false
    for part in parts {
        if part.marked && open { runs[runs.count - 1] += part.text } else if part.marked { runs.append(part.text) }
        open = part.marked
    }
    if query.matches(body) && !query.terms.allSatisfy({ term in runs.contains { !FoldedText($0).occurrences(of: term, first: true).isEmpty } }) {
        fatalError("matched but not marked")
    }
    let own = query.terms.joined(separator: " ")
    if !query.terms.isEmpty && !query.matches(own) { fatalError("the terms' own text does not hold them: \(query.terms)") }
    return 0
}
