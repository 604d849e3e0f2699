import Foundation

/// The OASIS Common Alerting Protocol 1.2 (CAP): an alert document (`alert`, one `info` per
/// language, `area`s of polygons and geocodes) read into an `IncomingWarning`, and the pieces
/// other sources share with it (times, message types).
enum CAP {
    /// A CAP alert as read: the warning, and the geocodes (`EMMA_ID:DE271`) of its areas for
    /// the source to look up (its polygons are in the warning's area already).
    struct Alert: Sendable {
        var incoming: IncomingWarning
        var geocodes: [String]
    }

    /// Geocodes one alert may name, at most.
    static let maximumGeocodes = 500

    /// `bytes` as a CAP alert of `source`, checked (`IncomingWarning.checked`); nil for one that
    /// is not for real (a test, an exercise, a draft). A document that is not a CAP alert throws
    /// `UpstreamError` (about the answer); an alert that cannot be taken throws
    /// `IncomingWarning.Refused`.
    static func read(_ bytes: [UInt8], source: String, now: Date) throws -> Alert? {
        guard let document = try? MarkupDocument(bytes, as: .xml), let alert = document.elements("/*").first, alert.name == "alert" else {
            throw UpstreamError.answer("\(source): not a CAP alert (\(bytes.count) bytes starting \(LogText.oneLine(String(decoding: bytes.prefix(40), as: UTF8.self), limit: 40)))")
        }
        guard (alert.value("status") ?? "Actual") == "Actual" else { return nil }
        guard let identifier = alert.value("identifier"), identifier.utf8.count <= 200 else {
            throw IncomingWarning.Refused(description: "\(source): an alert without a usable identifier")
        }
        let id = source + ":" + identifier
        guard let sent = alert.value("sent").flatMap(time) else { throw IncomingWarning.Refused(description: "\(id.prefix(80)): no time sent") }
        // `sender,identifier,sent` triples, separated by white space.
        let replaces = (alert.value("references") ?? "").split(whereSeparator: \.isWhitespace).prefix(50).compactMap { triple -> String? in
            let parts = triple.split(separator: ",", omittingEmptySubsequences: false)
            guard parts.count == 3, !parts[1].isEmpty, parts[1].utf8.count <= 200 else { return nil }
            return source + ":" + parts[1]
        }
        let infos = alert.all("info").prefix(Warning.maximumLanguages * 4)
        // The event, severity and times are the same in every language's `info`: English's are used.
        guard let main = infos.first(where: { ($0.value("language") ?? "en-US").lowercased().hasPrefix("en") }) ?? infos.first else {
            throw IncomingWarning.Refused(description: "\(id.prefix(80)): no info")
        }
        let kind = IncomingWarning.Kind(capMessageType: alert.value("msgType") ?? "Alert")
        let expiries = infos.compactMap { $0.value("expires").flatMap(time) }
        guard let expires = expiries.max() ?? (kind == .cancel ? sent : nil) else {
            throw IncomingWarning.Refused(description: "\(id.prefix(80)): no end")
        }
        var texts: [Warning.Text] = []
        for info in infos {
            let language = (info.value("language") ?? "en-US").lowercased()
            guard !texts.contains(where: { $0.language == language }) else { continue }
            texts.append(Warning.Text(language: language, headline: info.value("headline") ?? info.value("event") ?? "",
                                      description: [info.value("description"), info.value("instruction")].compactMap { $0 }.joined(separator: "\n\n")))
        }
        var area = WarningArea(), geocodes: [String] = [], seen = Set<String>(), budget = WarningArea.maximumVertices
        for info in infos {
            for place in info.all("area") {
                for polygon in place.all("polygon") where seen.insert(polygon.text).inserted {
                    let ring = Self.ring(polygon.text, budget: &budget)
                    if ring.count >= 3 { area.polygons.append([ring]) }
                }
                for code in place.all("geocode") {
                    guard let name = code.value("valueName"), let value = code.value("value"), name.utf8.count <= 40, value.utf8.count <= 40,
                          geocodes.count < maximumGeocodes, seen.insert(name + ":" + value).inserted else { continue }
                    geocodes.append(name + ":" + value)
                }
            }
        }
        let warning = Warning(
            id: id, source: source, event: main.value("event") ?? "", severity: Warning.Severity(cap: main.value("severity") ?? ""),
            urgency: Warning.cleaned(main.value("urgency") ?? "Unknown", limit: 20).lowercased(),
            sent: sent, onset: main.value("onset").flatMap(time) ?? main.value("effective").flatMap(time) ?? sent, expires: expires, texts: texts)
        return Alert(incoming: try IncomingWarning.checked(warning, kind: kind, replaces: replaces, area: area, now: now), geocodes: geocodes)
    }

    /// A CAP polygon: `latitude,longitude` pairs separated by spaces (latitude first, unlike
    /// GeoJSON). A pair that is not a finite coordinate is skipped; at most `budget` are taken.
    static func ring(_ text: String, budget: inout Int) -> [WarningArea.Point] {
        var ring: [WarningArea.Point] = []
        for pair in text.split(whereSeparator: \.isWhitespace) {
            guard budget > 0 else { break }
            let parts = pair.split(separator: ",")
            guard parts.count == 2, let latitude = Double(parts[0]), let longitude = Double(parts[1]),
                  (-90...90).contains(latitude), (-180...180).contains(longitude) else { continue }
            ring.append(WarningArea.Point(longitude: longitude, latitude: latitude))
            budget -= 1
        }
        return ring
    }

    /// ISO 8601 with a zone (`2026-11-22T05:00:00-08:00`), as CAP and the sources built on it
    /// write times; nil for anything else.
    static func time(_ text: String) -> Date? {
        guard text.utf8.count <= 40 else { return nil }
        let format = ISO8601DateFormatter()
        format.formatOptions = [.withInternetDateTime]
        if let date = format.date(from: text) { return date }
        format.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return format.date(from: text)
    }
}

extension IncomingWarning.Kind {
    /// CAP's `msgType` (`Alert`, `Update`, `Cancel`; `Ack` and `Error` are taken as alerts).
    init(capMessageType: String) {
        self = switch capMessageType {
        case "Update": .update
        case "Cancel": .cancel
        default: .alert
        }
    }
}
