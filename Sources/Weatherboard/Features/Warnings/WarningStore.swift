import Foundation

/// The warnings kept (`warnings`, `warning_texts`, `warning_cities`), and their queries.
enum WarningStore {
    /// Takes one poll of `source` in one transaction: what it has in force replaces what was kept
    /// of it (new ones in, changed ones rewritten, updated and cancelled ones and ones no longer
    /// listed out), and anything past its end goes. Every city whose warnings changed hears it
    /// (`PageChange.warning`), and each city's thread follows (`WarningThreads`, with `threads`).
    /// Members who follow the cities are told (`WarningAlerts`). Returns how many warnings were
    /// written or removed.
    @discardableResult
    static func apply(_ feed: WarningFeed, source: String, now: Date, threads: (cities: CityIndex, words: WarningThreads.Words)? = nil,
                      _ db: any SQLConnection, _ changes: ChangeLog) throws -> Int {
        var kept: [String: (sent: Double, expires: Double)] = [:]
        try db.forEachRow("SELECT id, sent, expires FROM warnings WHERE source = ?", [.text(source)]) { kept[$0.string(0)] = ($0.double(1), $0.double(2)) }
        var inForce: [String: (IncomingWarning, [Int64])] = [:]
        var gone = Set<String>()
        for (incoming, cities) in feed.warnings {
            gone.formUnion(incoming.replaces)
            if incoming.kind == .cancel { gone.insert(incoming.warning.id) } else { inForce[incoming.warning.id] = (incoming, cities) }
        }
        // A cancelled or replaced warning stays out even when the feed still lists it.
        for id in gone { inForce[id] = nil }
        if feed.complete { gone.formUnion(kept.keys.filter { inForce[$0] == nil && !feed.retained.contains($0) }) }
        var touched = Set<Int64>()
        var written = 0
        var told: [WarningAlerts.Kept] = []
        let cancelled = feed.warnings.compactMap { incoming, _ in
            incoming.kind == .cancel ? Set(incoming.replaces + [incoming.warning.id]).filter { kept[$0] != nil } : nil
        }
        /// Removes a kept warning (its texts and cities go with it), noting where it showed.
        func remove(_ id: String) throws {
            touched.formUnion(try cities(of: id, db))
            _ = try db.execute("DELETE FROM warnings WHERE id = ?", [.text(id)])
            written += 1
        }
        for id in gone where kept[id] != nil { try remove(id) }
        for (id, (incoming, cities)) in inForce.sorted(by: { $0.key < $1.key }) {
            let warning = incoming.warning
            var earlier = incoming.replaces
            if let (sent, expires) = kept[id] {
                let covered = try self.cities(of: id, db)
                if sent == warning.sent.timeIntervalSince1970 && covered == Set(cities) {
                    // One in force until lifted is kept while heard: renewed once half its time is gone.
                    if warning.endsWhenLifted && expires < now.addingTimeInterval(Warning.keptUnheard / 2).timeIntervalSince1970 {
                        _ = try db.execute("UPDATE warnings SET expires = ? WHERE id = ?", [.real(warning.expires.timeIntervalSince1970), .text(id)])
                        touched.formUnion(covered)
                    }
                    continue
                }
                try remove(id)
                written -= 1 // counted once, as written
                earlier.append(id)
            }
            told.append(WarningAlerts.Kept(warning: warning, cities: Array(Set(cities)).sorted(), earlier: earlier))
            _ = try db.execute("""
                INSERT INTO warnings (id, source, event, severity, urgency, sent, onset, expires, ends_when_lifted) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                """, [.text(id), .text(source), .text(warning.event), .text(warning.severity.rawValue), .text(warning.urgency),
                      .real(warning.sent.timeIntervalSince1970), .real(warning.onset.timeIntervalSince1970), .real(warning.expires.timeIntervalSince1970),
                      .integer(warning.endsWhenLifted ? 1 : 0)])
            var languages = Set<String>()
            for text in warning.texts where languages.insert(text.language).inserted {
                _ = try db.execute("INSERT INTO warning_texts (warning_id, language, headline, description) VALUES (?, ?, ?, ?)",
                                   [.text(id), .text(text.language), .text(text.headline), .text(text.description)])
            }
            for city in Set(cities).sorted() {
                _ = try db.execute("INSERT INTO warning_cities (warning_id, city_id) VALUES (?, ?)", [.text(id), .integer(city)])
            }
            touched.formUnion(cities)
            written += 1
        }
        // Whatever source: a warning past its end goes, though its source has not been heard.
        var ended: [String] = []
        try db.forEachRow("SELECT id FROM warnings WHERE expires <= ?", [.real(now.timeIntervalSince1970)]) { ended.append($0.string(0)) }
        for id in ended { try remove(id) }
        for city in touched.sorted() { try changes.emit(.warning(city)) }
        try WarningAlerts.tell(kept: told, cancelled: cancelled, now: now, db, changes)
        if let threads {
            let replaced = feed.warnings.flatMap { incoming, _ in
                incoming.kind == .update ? incoming.replaces.map { (from: $0, to: incoming.warning.id) } : []
            }
            try WarningThreads.keep(source: source, replaced: replaced, now: now, cities: threads.cities, words: threads.words, db, changes)
        }
        return written
    }

    static func cities(of id: String, _ db: any SQLConnection) throws -> Set<Int64> {
        Set(try db.all("SELECT city_id FROM warning_cities WHERE warning_id = ?", [id]) { $0.int64(0) })
    }

    /// The warnings in force at `now` in each city (`cityID`'s alone when given; `source`'s alone
    /// when given), most severe first.
    static func inForce(cityID: Int64? = nil, source: String? = nil, now: Date, _ db: any SQLConnection) throws -> [Int64: [Warning]] {
        var warnings: [String: Warning] = [:], cities: [(String, Int64)] = []
        // Both statements take the same arguments: the time, then the city, then the source.
        var cityFilter = "", textFilter = "", sourceFilter = ""
        var arguments: [SQLValue] = [.real(now.timeIntervalSince1970)]
        if let cityID {
            cityFilter = " AND c.city_id = ?"
            textFilter = " AND t.warning_id IN (SELECT warning_id FROM warning_cities WHERE city_id = ?)"
            arguments.append(.integer(cityID))
        }
        if let source {
            sourceFilter = " AND w.source = ?"
            arguments.append(.text(source))
        }
        try db.forEachRow("""
            SELECT w.id, w.source, w.event, w.severity, w.urgency, w.sent, w.onset, w.expires, c.city_id, w.ends_when_lifted
            FROM warnings w JOIN warning_cities c ON c.warning_id = w.id WHERE w.expires > ?\(cityFilter)\(sourceFilter)
            """, arguments) { row in
            let id = row.string(0)
            if warnings[id] == nil {
                warnings[id] = Warning(id: id, source: row.string(1), event: row.string(2), severity: Warning.Severity(cap: row.string(3)),
                                       urgency: row.string(4), sent: row.date(5), onset: row.date(6), expires: row.date(7), texts: [],
                                       endsWhenLifted: row.int64(9) != 0)
            }
            cities.append((id, row.int64(8)))
        }
        guard !warnings.isEmpty else { return [:] }
        try db.forEachRow("""
            SELECT t.warning_id, t.language, t.headline, t.description FROM warning_texts t
            JOIN warnings w ON w.id = t.warning_id WHERE w.expires > ?\(textFilter)\(sourceFilter) ORDER BY t.warning_id, t.language
            """, arguments) { row in
            warnings[row.string(0)]?.texts.append(Warning.Text(language: row.string(1), headline: row.string(2), description: row.string(3)))
        }
        var byCity: [Int64: [Warning]] = [:]
        for (id, city) in cities { if let warning = warnings[id] { byCity[city, default: []].append(warning) } }
        for (city, list) in byCity {
            byCity[city] = list.sorted { ($0.severity, $1.onset, $1.id) > ($1.severity, $0.onset, $0.id) }
        }
        return byCity
    }
}
