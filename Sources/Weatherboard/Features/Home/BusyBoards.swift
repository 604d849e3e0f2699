import Foundation

/// The boards busy now, for the home page (issue 67 #4): cities whose people reported the sky or
/// how it feels in the last `window`, surging ones first, then by their latest report, each with
/// how many people reported and what the latest said, as the boards show it. Visible posts only,
/// and for a member without the people they blocked or muted.
enum BusyBoards {
    static let window: TimeInterval = 3 * 3600
    static let shown = 6
    /// The reports read at most: the newest, enough for the few boards shown.
    static let readAtMost = 500

    struct Board: Equatable {
        var cityID: Int64
        var people: Int
        var latestAt: Double
        var sky: Observation.Sky?
        var feels: Observation.Feels?
    }

    static func read(viewer: Int64?, now: Date, surging: (Int64) -> Bool, _ db: any SQLConnection) throws -> [Board] {
        var boards: [Int64: Board] = [:]
        var people: [Int64: Set<Int64>] = [:]
        try db.forEachRow("""
            SELECT p.city_id, p.user_id, p.created_at, p.sky, p.feels FROM posts p
            WHERE \(Observation.reportsCounted(feels: true))
            ORDER BY p.created_at DESC, p.id DESC LIMIT ?4
            """, [.real(now.timeIntervalSince1970 - window), .real(now.timeIntervalSince1970), .integer(viewer ?? 0), .integer(Int64(readAtMost))]) { row in
            let city = row.int64(0)
            people[city, default: []].insert(row.int64(1))
            if boards[city] == nil {
                boards[city] = Board(cityID: city, people: 0, latestAt: row.double(2), sky: row.optionalString(3).flatMap(Observation.Sky.init),
                                     feels: row.optionalString(4).flatMap(Observation.Feels.init))
            }
        }
        for (city, seen) in people { boards[city]?.people = seen.count }
        return boards.values.sorted { a, b in
            (surging(a.cityID) ? 1 : 0, a.latestAt, -a.cityID) > (surging(b.cityID) ? 1 : 0, b.latestAt, -b.cityID)
        }.prefix(shown).map { $0 }
    }
}
