import Foundation

/// An e-mail address as the site accepts it: what people type (`name@example.org`), checked
/// enough that it can go into an SMTP envelope and a header unchanged. The local part is kept as
/// typed (it may be case-sensitive); the key for finding accounts is the whole address lowercased.
struct MailAddress: Equatable, Sendable {
    let text: String
    var key: String { text.lowercased() }

    /// RFC 5321 §4.5.3.1.3: a path is at most 256 octets, so an address at most 254.
    static let maxBytes = 254

    /// nil for anything that is not plainly an address: no spaces, controls, quotes, angle
    /// brackets, commas or semicolons (nothing that could end a header or add a recipient), one
    /// `@`, a local part of at most 64 octets and a domain of dot-separated labels.
    init?(_ typed: String) {
        let text = typed.trimmingCharacters(in: .whitespaces)
        guard !text.isEmpty, text.utf8.count <= Self.maxBytes else { return nil }
        let parts = text.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, parts[0].utf8.count <= 64 else { return nil }
        let forbidden = Set(" \t\r\n\"'<>()[],;:\\".unicodeScalars)
        guard text.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value != 0x7F && !forbidden.contains($0) && $0.isASCII }) else {
            return nil
        }
        let labels = parts[1].split(separator: ".", omittingEmptySubsequences: false)
        guard labels.count >= 2, labels.allSatisfy({ label in
            !label.isEmpty && label.utf8.count <= 63 && !label.hasPrefix("-") && !label.hasSuffix("-")
                && label.unicodeScalars.allSatisfy { $0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "-" }
        }) else { return nil }
        self.text = text
    }

    /// The address with most of the local part hidden ("an•••@example.org"), for telling an old
    /// address where the account's mail goes now without handing a stranger the new one whole.
    var masked: String {
        let parts = text.split(separator: "@")
        return String(parts[0].prefix(2)) + "•••@" + parts[1]
    }
}
