import Foundation
import HTTPServer
import Synchronization

/// What people reported of a city's sky as open data (issue 43 #5): `GET
/// /city/{slug}/observations.csv` and `.json`, the last `days` of reports (time to the minute,
/// sky, feels; never who, never the text), one per person per hour as the page's tally counts
/// them, none from a hidden or removed post. Licensed CC BY 4.0 (docs/open-data.md). Each answer
/// is kept `keptFor` per city and format; an answer holds at most `maximumRows`.
final class ObservationDataController: Sendable {
    let database: AppDatabase
    let index: CityIndex
    let clock: @Sendable () -> Date
    private let kept = Mutex(LRUCache<Key, (until: Date, body: [UInt8])>(maximumCount: 500, maximumCost: 32 << 20))

    var keptBytes: Int { kept.withLock { $0.totalCost } }
    var byteBound: Int { kept.withLock { $0.maximumCost } }

    static let days = 30
    /// 30 days of a busy city's reports, one per person per hour, would be far less.
    static let maximumRows = 20_000
    static let keptFor: TimeInterval = 300
    static let licence = "https://creativecommons.org/licenses/by/4.0/"

    private struct Key: Hashable {
        var city: Int64
        var format: Format
    }

    enum Format: String {
        case csv, json
        var contentType: String { self == .csv ? "text/csv; charset=utf-8; header=present" : "application/json" }
    }

    init(database: AppDatabase, index: CityIndex, clock: @escaping @Sendable () -> Date) {
        self.database = database
        self.index = index
        self.clock = clock
    }

    func addRoutes(to router: Router<AppContext>) {
        router.get("/city/{slug}/observations.csv") { [self] request, _ in try answer(request, .csv) }
        router.get("/city/{slug}/observations.json") { [self] request, _ in try answer(request, .json) }
    }

    struct Row: Equatable {
        var minute: Double
        var sky: String?
        var feels: String?
    }

    private func answer(_ request: Request, _ format: Format) throws -> Response {
        let city = try index.city(named: request)
        let now = clock()
        let key = Key(city: city.id, format: format)
        let body: [UInt8]
        if let hit = kept.withLock({ $0.value(for: key) }), hit.until > now {
            body = hit.body
        } else {
            let rows = try database.readStatement { try Self.rows(cityID: city.id, now: now, $0) }
            body = format == .csv ? Self.csv(rows) : Self.json(rows, city: city, now: now)
            kept.withLock { $0.set((now.addingTimeInterval(Self.keptFor), body), for: key, cost: body.count) }
        }
        return Response(headers: HTTPHeaders([
            ("Content-Type", format.contentType), ("Cache-Control", "public, max-age=\(Int(Self.keptFor))"),
            ("Link", "<\(Self.licence)>; rel=\"license\""), ("Access-Control-Allow-Origin", "*"),
        ]), body: body)
    }

    /// The reports of the last `days`, oldest first: each person's latest in each hour.
    static func rows(cityID: Int64, now: Date, _ db: any SQLConnection) throws -> [Row] {
        let since = now.timeIntervalSince1970 - Double(days * 86_400)
        return try db.all("""
            SELECT minute, sky, feels FROM (
                SELECT CAST(p.created_at AS BIGINT) / 60 * 60 AS minute, p.sky, p.feels,
                       row_number() OVER (PARTITION BY p.user_id, CAST(p.created_at AS BIGINT) / 3600 ORDER BY p.id DESC) AS latest
                FROM posts p
                WHERE p.city_id = ? AND p.parent_id IS NULL AND p.created_at > ? AND p.removed_at IS NULL AND p.hidden_at IS NULL
                      AND (p.sky IS NOT NULL OR p.feels IS NOT NULL)
            ) ranked WHERE latest = 1 ORDER BY minute DESC LIMIT ?
            """, [cityID, since, maximumRows]) {
            // Only the site's own words go out (a value written around the site is left out).
            Row(minute: $0.double(0), sky: $0.optionalString(1).flatMap(Observation.Sky.init(rawValue:))?.rawValue,
                feels: $0.optionalString(2).flatMap(Observation.Feels.init(rawValue:))?.rawValue)
        }.reversed()
    }

    static func csv(_ rows: [Row]) -> [UInt8] {
        var out = "time,sky,feels\r\n"
        for row in rows {
            out += DateFormatting.iso8601(Date(timeIntervalSince1970: row.minute)) + "," + (row.sky ?? "") + "," + (row.feels ?? "") + "\r\n"
        }
        return Array(out.utf8)
    }

    static func json(_ rows: [Row], city: City, now: Date) -> [UInt8] {
        // The values are the site's own words (`Observation`) and the slug letters, digits and hyphens: nothing to escape.
        func value(_ text: String?) -> String { text.map { "\"\($0)\"" } ?? "null" }
        var out = "{\"city\":\"\(city.slug)\",\"generated\":\"\(DateFormatting.iso8601(now))\",\"days\":\(days),"
        out += "\"licence\":\"\(licence)\",\"attribution\":\"Weatherboard members\",\"observations\":["
        out += rows.map { "{\"time\":\"\(DateFormatting.iso8601(Date(timeIntervalSince1970: $0.minute)))\",\"sky\":\(value($0.sky)),\"feels\":\(value($0.feels))}" }
            .joined(separator: ",")
        out += "]}"
        return Array(out.utf8)
    }
}
