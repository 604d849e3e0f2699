import Foundation

/// The languages the site speaks.
public enum Language: String, CaseIterable, Sendable {
    case en, ko

    /// The first supported language in an `Accept-Language` field, by quality (RFC 9110 §12.5.4).
    static func preferred(acceptLanguage: String) -> Language? {
        let ranges = acceptLanguage.split(separator: ",").compactMap { item -> (String, Double)? in
            let parts = item.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let tag = parts.first, !tag.isEmpty else { return nil }
            var quality = 1.0
            for parameter in parts.dropFirst() where parameter.lowercased().hasPrefix("q=") {
                quality = Double(parameter.dropFirst(2)) ?? 0
            }
            return (tag.lowercased(), quality)
        }
        for (tag, quality) in ranges.enumerated().sorted(by: { ($0.element.1, -$0.offset) > ($1.element.1, -$1.offset) }).map(\.element)
        where quality > 0 {
            let primary = tag.split(separator: "-").first.map(String.init) ?? tag
            if let language = Language(rawValue: primary) { return language }
        }
        return nil
    }
}
