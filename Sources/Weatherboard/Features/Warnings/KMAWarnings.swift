import Foundation
import Synchronization

/// The Korea Meteorological Administration's special weather reports (기상특보) through
/// data.go.kr's warning service (`WthrWrnInfoService/getPwnCd`, the key of WEATHERBOARD_KMA_KEY).
/// The service answers events, not a state: each row is one announcement (issued, lifted,
/// extended, corrected, changed) of one kind and level in one warning zone. The state now is the
/// last announcement of each zone, kind and level over the last `window` days; the zones in force
/// with one kind and level are one warning, matched to the catalog's Korean cities by the zones'
/// names. A KMA warning has no end until it is lifted (`Warning.endsWhenLifted`).
final class KMAWarnings: WarningProvider {
    let source = "kma"
    let baseURL: String
    private let serviceKey: String
    let timeout: TimeInterval
    /// Each zone's announcements of a kind and level that leave it under warning, as of the last
    /// poll: carried into the next when their announcements leave the window.
    private let remembered = Mutex<[ZoneKey: [Announcement]]>([:])

    struct ZoneKey: Hashable, Sendable {
        var kind: Int
        var level: Int
        var zone: String
    }

    /// Days of announcements read. A zone's state is also remembered from poll to poll, so a
    /// warning in force longer stays; only a node started since sees no warning whose last
    /// announcement is older than this.
    static let window = 31
    static let rowsPerPage = 1_000
    /// Pages read in one poll, at most (a wet month is a few thousand announcements).
    static let pagesPerPoll = 10
    static let maximumBytes = 8 << 20

    init(baseURL: String, serviceKey: String, timeout: TimeInterval = 10) {
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.serviceKey = serviceKey
        self.timeout = timeout
    }

    func warnings(now: Date, cities: [City]) throws -> WarningFeed {
        let korea = LocalCalendar(KMAProvider.korea)
        let to = korea.dateString(now).replacingOccurrences(of: "-", with: "")
        let from = korea.dateString(now.addingTimeInterval(-Double(Self.window) * 86_400)).replacingOccurrences(of: "-", with: "")
        var rows: [Announcement] = [], refused: [String] = []
        var page = 1
        while true {
            let (read, total) = try announcements(from: from, to: to, page: page)
            rows += read.compactMap { row in
                do { return try row.get() } catch { refused.append("\(error)"); return nil }
            }
            guard !read.isEmpty, page * Self.rowsPerPage < total else { break }
            guard page < Self.pagesPerPoll else {
                // The newest are on the last pages: without them the state is not known.
                throw UpstreamError("kma: \(total) announcements in \(Self.window) days, more than \(Self.pagesPerPoll) pages")
            }
            page += 1
        }
        // Zones under warning at the last poll whose announcements have all left the window: as
        // they were (a zone with none in the window but a recent one was cleared of it).
        let heard = Set(rows.map { ZoneKey(kind: $0.kind, level: $0.level, zone: $0.zoneCode) })
        let windowStart = now.addingTimeInterval(-Double(Self.window) * 86_400)
        rows += remembered.withLock { $0.filter { !heard.contains($0.key) && $0.value.last!.time < windowStart }.values.joined() }
        let (feed, inForce) = Self.feed(rows, refused: refused, now: now, cities: cities.filter { $0.country == "KR" })
        remembered.withLock { $0 = inForce }
        return feed
    }

    /// One announcement: a kind (`warnVar`) and level (`warnStress`) in one zone, at `time`
    /// (`tmFc`, then `tmSeq`), doing `command`.
    struct Announcement: Sendable, Equatable {
        var zoneCode: String
        var zoneName: String
        var kind: Int
        var level: Int
        var command: Int
        var time: Date
        var sequence: Int
        var start: Date?
        var end: Date?

        /// The commands that leave the zone under warning: issued, extended, corrected, changed to.
        var leavesInForce: Bool { [1, 3, 6, 7].contains(command) }
        /// The commands that clear it: lifted, changed away.
        var clears: Bool { [2, 8].contains(command) }
        /// When it takes effect: its start when it gives one, else when it was announced.
        var effective: Date { start ?? time }
    }

    /// The kinds of warning and their names.
    static let kinds: [Int: (ko: String, en: String)] = [
        1: ("강풍", "Strong wind"), 2: ("호우", "Heavy rain"), 3: ("한파", "Cold wave"), 4: ("건조", "Dry air"),
        5: ("폭풍해일", "Storm surge"), 6: ("풍랑", "High seas"), 7: ("태풍", "Typhoon"), 8: ("대설", "Heavy snow"),
        9: ("황사", "Yellow dust"), 12: ("폭염", "Heat wave"),
    ]
    /// Levels: an advisory (주의보), a warning (경보), a grave warning (중대경보).
    static let levels: [Int: (ko: String, en: String, severity: Warning.Severity)] = [
        0: ("주의보", "advisory", .moderate), 1: ("경보", "warning", .severe), 2: ("중대경보", "grave warning", .extreme),
    ]

    private func announcements(from: String, to: String, page: Int) throws -> ([Result<Announcement, IncomingWarning.Refused>], Int) {
        guard let url = KMAProvider.url(baseURL + "/1360000/WthrWrnInfoService/getPwnCd", serviceKey: serviceKey, [
            ("pageNo", String(page)), ("numOfRows", String(Self.rowsPerPage)), ("dataType", "XML"), ("fromTmFc", from), ("toTmFc", to),
        ]) else { throw UpstreamError("kma: bad base URL") }
        let (status, body) = try HTTPFetch.get(url, timeout: timeout, maximumBytes: Self.maximumBytes)
        guard status == 200 else { throw UpstreamError("kma warnings: HTTP \(status)") }
        return try Self.parse([UInt8](body))
    }

    /// An answer's announcements (each read, or refused with why) and the total the service
    /// holds for the request. The gateway's error envelope and an error result code throw; "no
    /// data" (03) is an empty answer.
    static func parse(_ bytes: [UInt8]) throws -> ([Result<Announcement, IncomingWarning.Refused>], Int) {
        guard let document = try? MarkupDocument(bytes, as: .xml) else { throw UpstreamError("kma warnings: the answer is not XML") }
        let code = try KMAProvider.resultCode(document)
        if code == "03" { return ([], 0) }
        guard code == "00" else {
            throw UpstreamError("kma warnings: error \(code.prefix(10)): \(document.text("/response/header/resultMsg")?.prefix(100) ?? "")")
        }
        guard let root = document.elements("/response").first else { throw UpstreamError("kma warnings: no answer") }
        let body = root.child("body")
        let items = body?.child("items")?.all("item") ?? []
        let total = body?.value("totalCount").flatMap { Int($0) } ?? items.count
        return (items.map(announcement), max(0, total))
    }

    private static func announcement(_ item: MarkupDocument.Element) -> Result<Announcement, IncomingWarning.Refused> {
        func number(_ key: String) -> Int? { item.value(key).flatMap { Int($0) } }
        guard let code = item.value("areaCode"), code.utf8.count <= 16, let name = item.value("areaName"), name.utf8.count <= 100,
              let kind = number("warnVar"), let level = number("warnStress"), let command = number("command"),
              let time = item.value("tmFc").flatMap(Self.time) else {
            return .failure(IncomingWarning.Refused(description: "kma: an announcement without zone, kind, level, command or time (\(item.value("areaCode")?.prefix(16) ?? "?"))"))
        }
        guard [1, 2, 3, 6, 7, 8].contains(command) else {
            return .failure(IncomingWarning.Refused(description: "kma: \(code) \(time): unknown command \(command)"))
        }
        guard item.value("cancel") ?? "0" == "0" else {
            return .failure(IncomingWarning.Refused(description: "kma: \(code) \(time): withdrawn"))
        }
        return .success(Announcement(zoneCode: code, zoneName: name, kind: kind, level: level, command: command, time: time,
                                     sequence: number("tmSeq") ?? 0, start: item.value("startTime").flatMap(Self.time),
                                     end: item.value("endTime").flatMap(Self.time)))
    }

    /// `yyyyMMddHHmm` in Korean time; nil for anything else (KMA writes 0 for "none").
    static func time(_ text: String) -> Date? {
        let digits = Array(text.utf8)
        guard digits.count == 12, digits.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return nil }
        func value(_ range: Range<Int>) -> Int { digits[range].reduce(0) { $0 * 10 + Int($1 - 48) } }
        var parts = DateComponents(timeZone: KMAProvider.korea, year: value(0..<4), month: value(4..<6), day: value(6..<8),
                                   hour: value(8..<10), minute: value(10..<12))
        guard (1...12).contains(parts.month!), (1...31).contains(parts.day!), parts.hour! < 24, parts.minute! < 60 else { return nil }
        parts.calendar = Calendar(identifier: .gregorian)
        return parts.date
    }

    /// The warnings in force, from announcements in any order: each zone's last announcement of a
    /// kind and level that has taken effect decides whether it is under warning, and the zones
    /// under one kind and level are one warning. Its id is the start of its run (since no zone was
    /// under it): zones joining and leaving keep it; a run that ends and starts again is a new
    /// warning, with new threads. Also returns the announcements that keep each zone under warning.
    static func feed(_ rows: [Announcement], refused: [String], now: Date, cities: [City]) -> (WarningFeed, [ZoneKey: [Announcement]]) {
        var feed = WarningFeed(warnings: [], refused: refused)
        var remembered: [ZoneKey: [Announcement]] = [:]
        struct Key: Hashable { var kind: Int; var level: Int }
        var byKey: [Key: [Announcement]] = [:]
        // Land zones only (sea zones, S…, have no cities); what has not taken effect yet waits.
        for row in rows where row.zoneCode.hasPrefix("L") && !(row.leavesInForce && row.effective > now) {
            byKey[Key(kind: row.kind, level: row.level), default: []].append(row)
        }
        for (key, announcements) in byKey.sorted(by: { ($0.key.kind, $0.key.level) < ($1.key.kind, $1.key.level) }) {
            guard let kind = kinds[key.kind], let level = levels[key.level] else {
                feed.refused.append("kma: unknown kind \(key.kind) or level \(key.level)")
                continue
            }
            // In the order they took effect, the zones under warning; the run begins when the first
            // of them is (of one instant, the issued before the lifted: a warning that moves goes on).
            var inForce: [String: [Announcement]] = [:], runStart: Date?
            let ordered = announcements.sorted {
                ($0.effective, $0.time, $0.sequence, $0.clears ? 1 : 0, $0.zoneCode) < ($1.effective, $1.time, $1.sequence, $1.clears ? 1 : 0, $1.zoneCode)
            }
            for row in ordered {
                if row.leavesInForce {
                    if inForce.isEmpty { runStart = row.effective }
                    inForce[row.zoneCode, default: []].append(row)
                } else {
                    inForce[row.zoneCode] = nil
                }
            }
            // A zone whose announced end has passed is clear though no lift was heard.
            let standing = inForce.filter { $0.value.last!.end.map { $0 > now } ?? true }
            guard let first = runStart, !standing.isEmpty else { continue }
            for (zone, rows) in standing { remembered[ZoneKey(kind: key.kind, level: key.level, zone: zone)] = rows }
            let names = standing.values.map { $0.last!.zoneName }.sorted()
            let sent = standing.values.map { $0.last!.time }.max()!
            let onset = standing.values.flatMap { $0.map(\.effective) }.min() ?? sent
            let areas = names.joined(separator: ", ")
            let warning = Warning(
                id: "kma:\(key.kind)-\(key.level)-\(Int(clampedSeconds: first.timeIntervalSince1970))", source: "kma", event: kind.ko + level.ko,
                severity: level.severity, urgency: "immediate", sent: sent, onset: onset, expires: now.addingTimeInterval(Warning.keptUnheard),
                texts: [Warning.Text(language: "ko", headline: kind.ko + level.ko, description: "발표 구역: " + areas),
                        Warning.Text(language: "en", headline: "\(kind.en) \(level.en)", description: "Zones: " + areas)],
                endsWhenLifted: true)
            do {
                let incoming = try IncomingWarning.checked(warning, kind: .alert, replaces: [], area: WarningArea(), now: now)
                let covered = cities.filter { city in names.contains { zone in Self.zone(zone, covers: city) } }.map(\.id)
                guard covered.count <= WarningArea.maximumCities else {
                    feed.refused.append("\(warning.id): covers \(covered.count) cities (at most \(WarningArea.maximumCities))")
                    continue
                }
                feed.warnings.append((incoming, covered.sorted()))
            } catch {
                feed.refused.append("\(error)")
            }
        }
        return (feed, remembered)
    }

    /// Parts of a zone's name after the city's: the split of a big city, plain and mountains
    /// ("서울동남권", "부산중부", "강릉평지").
    private static let zoneParts = ["동남권", "동북권", "서남권", "서북권", "동부", "서부", "남부", "북부", "중부", "평지", "산지"]
    /// Zones named for a part of an island or province, by the city in them that the catalog
    /// knows by its Korean name (Seogwipo, in the south, has none there).
    private static let zoneCities = ["제주도북부": "제주"]

    /// Whether a zone named `zone` covers `city`: the zone's name, without a city's part and
    /// without 시 or 군, is the city's Korean name (two cities of one name both are).
    static func zone(_ zone: String, covers city: City) -> Bool {
        guard let korean = city.nameKo, !korean.isEmpty else { return false }
        if let named = zoneCities[zone] { return named == korean }
        var place = Substring(zone)
        if let part = zoneParts.first(where: { place.hasSuffix($0) && place.count > $0.count }) { place = place.dropLast(part.count) }
        if place != korean, let last = place.last, "시군".contains(last), place.count > 1 { place = place.dropLast() }
        return place == korean
    }
}
