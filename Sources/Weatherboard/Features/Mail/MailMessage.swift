import Foundation

/// One message as it goes to the relay: RFC 5322 headers and a MIME multipart/alternative body
/// with a plain-text and an HTML part, both UTF-8 in base64 (no line of either can break the
/// 998-octet limit or be read as the end of the data).
struct MailMessage: Sendable {
    var from: MailAddress
    var fromName: String
    var to: MailAddress
    var subject: String
    var text: String
    var html: String
    /// Further headers, printable ASCII (`List-Unsubscribe`, …).
    var headers: [(String, String)] = []

    /// The message's bytes, with CRLF line ends. `date` and `id` make the Date and Message-ID.
    func rendered(date: Date, id: String) -> [UInt8] {
        let boundary = "=_wb_" + id
        var lines = [
            "From: \(Self.encodedWord(fromName)) <\(from.text)>",
            "To: <\(to.text)>",
            "Subject: \(Self.encodedWord(subject))",
            "Date: \(Self.date(date))",
            "Message-ID: <\(id)@\(from.text.split(separator: "@").last ?? "localhost")>",
            "Auto-Submitted: auto-generated",
        ] + headers.map { name, value in
            // A value with a line break would start a header of its own: such a value is dropped.
            value.unicodeScalars.allSatisfy { $0.value >= 0x20 && $0.value < 0x7F } ? "\(name): \(value)" : "\(name): "
        } + [
            "MIME-Version: 1.0",
            "Content-Type: multipart/alternative; boundary=\"\(boundary)\"",
            "",
        ]
        for (type, body) in [("text/plain", text), ("text/html", html)] {
            lines += ["--\(boundary)", "Content-Type: \(type); charset=utf-8", "Content-Transfer-Encoding: base64", ""]
            lines += Self.base64Lines(Array(body.utf8))
        }
        lines += ["--\(boundary)--", ""]
        return Array(lines.joined(separator: "\r\n").utf8)
    }

    /// A header's text: as it is when it is printable ASCII, else one or more RFC 2047 encoded
    /// words (`=?UTF-8?B?…?=`), split between characters so that each stays under 76 octets.
    static func encodedWord(_ text: String) -> String {
        if text.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value < 0x7F }) { return text }
        var words: [String] = []
        var chunk: [UInt8] = []
        for character in text {
            let bytes = Array(String(character).utf8)
            if chunk.count + bytes.count > 45 { // 45 octets are 60 in base64: a word of 72
                words.append("=?UTF-8?B?" + Data(chunk).base64EncodedString() + "?=")
                chunk = []
            }
            chunk += bytes.filter { $0 != 0x0D && $0 != 0x0A }
        }
        if !chunk.isEmpty { words.append("=?UTF-8?B?" + Data(chunk).base64EncodedString() + "?=") }
        return words.joined(separator: "\r\n ")
    }

    static func base64Lines(_ bytes: [UInt8]) -> [String] {
        let encoded = Data(bytes).base64EncodedString()
        return stride(from: 0, to: encoded.count, by: 76).map { start in
            let from = encoded.index(encoded.startIndex, offsetBy: start)
            return String(encoded[from..<(encoded.index(from, offsetBy: 76, limitedBy: encoded.endIndex) ?? encoded.endIndex)])
        }
    }

    /// RFC 5322 §3.3 in UTC: "Thu, 26 Nov 2026 08:21:31 +0000".
    static func date(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss '+0000'"
        return formatter.string(from: date)
    }
}
