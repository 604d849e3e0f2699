import Foundation
import HTTPServer
import Mustache

/// Loads every template in `Templates/` once at start-up and renders pages. Every template is
/// compiled with the `HTMLBYTES` content type, so all `{{…}}` interpolation is HTML-escaped by
/// `HTMLEscaper`; templates contain no unescaped `{{{…}}}` of data.
public final class Renderer: Sendable {
    private let library: MustacheLibrary
    public let localization: Localization
    /// Templates the application renders by name; a missing one stops start-up.
    public static let requiredTemplates = [
        "layout", "home", "error", "search", "city", "post", "feed", "signup", "login", "settings", "profile", "edit", "my_reports",
        "admin_queue", "admin_log", "admin_user", "moderation",
    ]

    public init(templatesDirectory: String) throws {
        MustacheContentTypes.register(HTMLEscaper(), named: "HTMLBYTES")
        var library = MustacheLibrary()
        let names = (FileManager.default.enumerator(atPath: templatesDirectory)?.allObjects as? [String] ?? [])
            .filter { $0.hasSuffix(".mustache") }
        for file in names {
            let text = try String(contentsOfFile: templatesDirectory + "/" + file, encoding: .utf8)
            do {
                try library.register("{{% CONTENT_TYPE: HTMLBYTES}}" + text, named: String(file.dropLast(9)))
            } catch {
                throw StartupError("template \(file) does not compile: \(error)")
            }
        }
        for name in Self.requiredTemplates where library.getTemplate(named: name) == nil {
            throw StartupError("missing template \(templatesDirectory)/\(name).mustache")
        }
        self.library = library
        localization = try Localization(directory: templatesDirectory + "/strings")
    }

    /// Renders `template` with `data`; the page's language catalog is available as `t`.
    public func render(_ template: String, language: Language, _ data: [String: Any]) -> [UInt8] {
        var context = data
        context["t"] = localization.catalogs[language]
        context["lang"] = language.rawValue
        guard let text = library.render(context, withTemplate: template) else {
            preconditionFailure("template \(template) was checked at start-up")
        }
        return Array(text.utf8)
    }
}

/// HTML escaping of `& < > " '` that copies nothing when a string has none of them (most
/// strings), and works on UTF-8 bytes instead of Characters otherwise.
struct HTMLEscaper: MustacheContentType {
    func escapeText(_ text: String) -> String {
        Self.escape(text)
    }

    @inline(__always)
    static func isSpecial(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x26, 0x3C, 0x3E, 0x22, 0x27: return true
        default: return false
        }
    }

    static func escape(_ text: String) -> String {
        var text = text
        let needsWork = text.withUTF8 { bytes in bytes.contains(where: isSpecial) }
        guard needsWork else { return text }
        var out: [UInt8] = []
        text.withUTF8 { bytes in
            out.reserveCapacity(bytes.count + 32)
            for byte in bytes {
                switch byte {
                case 0x26: out.append(contentsOf: [0x26, 0x61, 0x6D, 0x70, 0x3B]) // &amp;
                case 0x3C: out.append(contentsOf: [0x26, 0x6C, 0x74, 0x3B]) // &lt;
                case 0x3E: out.append(contentsOf: [0x26, 0x67, 0x74, 0x3B]) // &gt;
                case 0x22: out.append(contentsOf: [0x26, 0x71, 0x75, 0x6F, 0x74, 0x3B]) // &quot;
                case 0x27: out.append(contentsOf: [0x26, 0x23, 0x33, 0x39, 0x3B]) // &#39;
                default: out.append(byte)
                }
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
