import Foundation
import Logging
import Synchronization

/// How the node writes its log: one line an event on standard error, stamped with the time
/// (UTC, milliseconds), the level and the part of the node, then the event and its fields;
/// as text for a person, or as one JSON object a line for a log collector.
public enum LogFormat: String, Sendable, CaseIterable {
    case text, json
}

/// `weatherboard serve`'s log handler, installed once per process (`bootstrap`).
struct SiteLogHandler: LogHandler {
    let label: String
    let format: LogFormat
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    private static let installed = Mutex(false)

    /// Makes every logger of the process write this way; once (swift-log allows one bootstrap).
    static func bootstrap(_ format: LogFormat) {
        let first = installed.withLock { installed in
            defer { installed = true }
            return !installed
        }
        if first { LoggingSystem.bootstrap { SiteLogHandler(label: $0, format: format) } }
    }

    func log(event: LogEvent) {
        var fields = metadata
        if let explicit = event.metadata { fields.merge(explicit) { $1 } }
        let line = Self.line(time: Date(), level: event.level, label: label, message: "\(event.message)", fields: fields, format: format)
        FileHandle.standardError.write(Data(line.utf8))
    }

    static func line(time: Date, level: Logger.Level, label: String, message: String, fields: Logger.Metadata, format: LogFormat) -> String {
        let stamp = time.formatted(.iso8601.year().month().day().time(includingFractionalSeconds: true).timeZone(separator: .omitted))
        let sorted = fields.sorted { $0.key < $1.key }
        switch format {
        case .text:
            let rest = sorted.map { "\($0.key)=\($0.value.text)" }.joined(separator: " ")
            // A line an event: a newline in what is logged is shown, never obeyed.
            return "\(stamp) \(level.rawValue) \(label): \(LogText.oneLine(message, limit: 65_536))\(rest.isEmpty ? "" : " " + rest)\n"
        case .json:
            var object = "{\"time\":\(json(stamp)),\"level\":\(json(level.rawValue)),\"logger\":\(json(label)),\"message\":\(json(message))"
            for (key, value) in sorted where !["time", "level", "logger", "message"].contains(key) {
                object += ",\(json(key)):\(value.json)"
            }
            return object + "}\n"
        }
    }

    /// A JSON string: quotes, backslashes and control characters escaped (RFC 8259 §7).
    static func json(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x2028 || scalar.value == 0x2029:
                out += String(format: "\\u%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}

extension Logger.MetadataValue {
    /// As text: a value with a space or a quote is quoted.
    var text: String {
        let plain = "\(self)"
        return plain.contains(where: { $0 == " " || $0 == "\"" }) || plain.isEmpty ? SiteLogHandler.json(plain) : plain
    }

    /// As JSON: numbers stay numbers.
    var json: String {
        switch self {
        case .string(let text): SiteLogHandler.json(text)
        case .stringConvertible(let value):
            if let number = value as? Int { String(number) } else if let number = value as? Double, number.isFinite { String(number) }
            else { SiteLogHandler.json("\(value)") }
        case .array(let values): "[" + values.map(\.json).joined(separator: ",") + "]"
        case .dictionary(let values):
            "{" + values.sorted { $0.key < $1.key }.map { "\(SiteLogHandler.json($0.key)):\($0.value.json)" }.joined(separator: ",") + "}"
        }
    }
}
