import Foundation

/// The string catalogs prepared for rendering: each language's strings escaped once at start-up,
/// indexed by the keys the templates were compiled against (`StringKey`, generated at build time).
public final class Renderer: Sendable {
    public let localization: Localization
    private let tables: [Language: Strings]

    public init(templatesDirectory: String) throws {
        localization = try Localization(directory: templatesDirectory + "/strings")
        var tables: [Language: Strings] = [:]
        for language in Language.allCases {
            let catalog = localization.catalogs[language] ?? [:]
            let missing = StringKey.names.filter { catalog[$0] == nil }
            guard missing.isEmpty else {
                throw StartupError("string catalog \(language.rawValue).json lacks \(missing.joined(separator: ", "))")
            }
            tables[language] = Strings(table: StringKey.names.map { HTML.escaped(catalog[$0] ?? $0) })
        }
        self.tables = tables
    }

    /// The page language's strings for a compiled template.
    public func strings(_ language: Language) -> Strings {
        tables[language] ?? Strings(table: [])
    }

    /// Runs a compiled template into a new buffer.
    public func render(_ language: Language, _ template: (inout HTML, Strings) -> Void) -> [UInt8] {
        var html = HTML()
        template(&html, strings(language))
        return html.bytes
    }
}
