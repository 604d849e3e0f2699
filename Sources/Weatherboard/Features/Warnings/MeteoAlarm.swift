import Foundation
import Synchronization

/// MeteoAlarm (EUMETNET): the warnings of Europe's national weather services. Each country's
/// Atom feed (`/feeds/meteoalarm-legacy-atom-{country}`) lists what is in force, an entry per
/// warning, language and area, each linking its CAP document; the CAP document (read once per
/// warning and kept: a CAP message never changes, an update is a new one) gives the words in
/// every language and the area. An area is a polygon (Norway) or geocodes (EMMA_ID, NUTS),
/// whose shapes come from the operator's geocodes file (`WarningGeocodes`).
final class MeteoAlarm: WarningProvider {
    let source = "meteoalarm"
    let baseURL: String
    let geocodes: WarningGeocodes
    let timeout: TimeInterval

    /// The feeds by the ISO code of the country they cover (only countries with cities in the
    /// catalog are asked).
    static let feeds: [String: String] = [
        "AT": "austria", "BA": "bosnia-herzegovina", "BE": "belgium", "BG": "bulgaria", "CH": "switzerland", "CY": "cyprus",
        "CZ": "czechia", "DE": "germany", "DK": "denmark", "EE": "estonia", "ES": "spain", "FI": "finland", "FR": "france",
        "GB": "united-kingdom", "GR": "greece", "HR": "croatia", "HU": "hungary", "IE": "ireland", "IL": "israel", "IS": "iceland",
        "IT": "italy", "LT": "lithuania", "LU": "luxembourg", "LV": "latvia", "MD": "moldova", "ME": "montenegro",
        "MK": "north-macedonia", "MT": "malta", "NL": "netherlands", "NO": "norway", "PL": "poland", "PT": "portugal",
        "RO": "romania", "RS": "serbia", "SE": "sweden", "SI": "slovenia", "SK": "slovakia",
    ]
    /// A country's feed is a few MB on a stormy day.
    static let maximumFeedBytes = 16 << 20
    static let maximumDocumentBytes = 1 << 20
    /// CAP documents asked for in one poll, at most: the rest wait for the next (a country's new
    /// warnings must not become hundreds of requests at once), and until then the poll is
    /// incomplete (nothing of the source is taken away).
    static let documentsPerPoll = 200
    /// CAP documents kept, read; past this many, the store starts over.
    static let documentsKept = 20_000
    /// Vertices matched in one poll, at most (as `NWSAlerts.verticesPerPoll`): a document's
    /// cities are matched once, so only new ones count.
    static let verticesPerPoll = 400_000

    /// Each CAP document as read, by its path: the alert (nil: not for real), or why it was refused.
    private let documents = Mutex<[String: Result<CAP.Alert?, IncomingWarning.Refused>]>([:])
    /// The cities each document's area covers, by its path, once matched.
    private let placed = Mutex<[String: [Int64]]>([:])

    init(baseURL: String, geocodes: WarningGeocodes, timeout: TimeInterval = 10) {
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.geocodes = geocodes
        self.timeout = timeout
    }

    func warnings(now: Date, cities: [City]) throws -> WarningFeed {
        var feed = WarningFeed(warnings: [], refused: [])
        var documentBudget = Self.documentsPerPoll, vertexBudget = Self.verticesPerPoll
        let byCountry = Dictionary(grouping: cities.filter { Self.feeds[$0.country] != nil }, by: \.country)
        var answered = 0
        for (country, here) in byCountry.sorted(by: { $0.key < $1.key }) {
            let name = Self.feeds[country]!
            let paths: [String]
            do {
                paths = try documentPaths(country: name)
                answered += 1
            } catch {
                // One country's feed failing keeps what was kept of it; the others' go on. What was
                // kept of it is known from its documents read before: none (a node just started, or
                // the store started over), and nothing of the source ends by its absence this poll.
                feed.refused.append("\(name): \(error)")
                let prefix = "/api/v1/warnings/feeds-\(name)/"
                let known = documents.withLock { documents in
                    documents.filter { $0.key.hasPrefix(prefix) }.compactMap { _, read in try? read.get()?.incoming.warning.id }
                }
                if known.isEmpty { feed.complete = false } else { feed.retained.formUnion(known) }
                continue
            }
            for path in paths {
                guard let read = document(path, now: now, budget: &documentBudget, refused: &feed.refused) else {
                    feed.complete = false
                    continue
                }
                let alert: CAP.Alert
                switch read {
                case .success(nil): continue
                case .success(let taken?):
                    // Read when it was new; still listed past its end, it is not in force.
                    guard taken.incoming.kind == .cancel || taken.incoming.warning.expires > now else { continue }
                    alert = taken
                case .failure(let refusal):
                    feed.refused.append(refusal.description)
                    continue
                }
                guard alert.incoming.kind != .cancel else {
                    feed.take(alert.incoming, area: WarningArea(), among: [], vertices: &vertexBudget, perPoll: Self.verticesPerPoll)
                    continue
                }
                if let covered = placed.withLock({ $0[path] }) {
                    feed.warnings.append((alert.incoming, covered))
                    continue
                }
                var area = alert.incoming.area
                var unknown: [String] = []
                for code in alert.geocodes {
                    guard let shape = geocodes.area(code) else { unknown.append(code); continue }
                    // The same bound on a warning's vertices as a drawn one's.
                    guard area.vertexCount + shape.vertexCount <= WarningArea.maximumVertices else { break }
                    area.polygons += shape.polygons
                }
                if area.polygons.isEmpty {
                    feed.refused.append("\(alert.incoming.warning.id.prefix(80)): no shape for \(unknown.prefix(3).joined(separator: ", "))"
                                        + (geocodes.isEmpty ? " (no --warnings-meteoalarm-geocodes)" : ""))
                    continue
                }
                let before = feed.warnings.count
                feed.take(alert.incoming, area: area, among: here, vertices: &vertexBudget, perPoll: Self.verticesPerPoll)
                // A document and the shapes never change: its cities are matched once.
                if feed.warnings.count > before, let covered = feed.warnings.last?.cities {
                    placed.withLock {
                        if $0.count >= Self.documentsKept { $0.removeAll() }
                        $0[path] = covered
                    }
                }
            }
        }
        // Every feed failing is the source failing (its breaker opens); some failing is a partial poll.
        if answered == 0 && !byCountry.isEmpty { throw UpstreamError("meteoalarm: no feed answered (\(feed.refused.first ?? ""))") }
        return feed
    }

    /// The CAP documents a country's feed lists, in its order, once each (a warning has an
    /// entry per language and area); entries that are not for real are left out.
    private func documentPaths(country: String) throws -> [String] {
        guard let url = URL(string: baseURL + "/feeds/meteoalarm-legacy-atom-" + country) else { throw UpstreamError("meteoalarm: bad base URL") }
        let (status, body) = try HTTPFetch.get(url, timeout: timeout, maximumBytes: Self.maximumFeedBytes)
        guard status == 200 else { throw UpstreamError("HTTP \(status)") }
        return try Self.documentPaths([UInt8](body))
    }

    /// An Atom feed's CAP documents, as paths on our own base URL (an entry never makes us ask
    /// another host). A document that is not an Atom feed (an error page with status 200) throws.
    static func documentPaths(_ bytes: [UInt8]) throws -> [String] {
        guard let document = try? MarkupDocument(bytes, as: .xml), let root = document.elements("/*").first, root.name == "feed" else {
            throw UpstreamError("not an Atom feed (\(bytes.count) bytes starting \(LogText.oneLine(String(decoding: bytes.prefix(40), as: UTF8.self), limit: 40)))")
        }
        var paths: [String] = [], seen = Set<String>()
        for entry in root.all("entry") where (entry.value("status") ?? "Actual") == "Actual" {
            guard let link = entry.all("link").first(where: { $0["type"] == "application/cap+xml" })?["href"],
                  let path = documentPath(link), seen.insert(path).inserted else { continue }
            paths.append(path)
        }
        return paths
    }

    /// The path of a CAP document's link, when it is one of the feeds' (`/api/v1/warnings/feeds-{country}/{id}`).
    static func documentPath(_ link: String) -> String? {
        guard let range = link.range(of: "/api/v1/warnings/feeds-") else { return nil }
        let path = String(link[range.lowerBound...])
        let parts = path.dropFirst("/api/v1/warnings/".count).split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, path.utf8.count <= 200,
              parts.allSatisfy({ !$0.isEmpty && $0 != "." && $0 != ".." && $0.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == ".") } })
        else { return nil }
        return path
    }

    /// A CAP document, kept or asked for while `budget` lasts (nil past it, or when the source
    /// failed to answer: it is asked again at the next poll). An answer that cannot be taken
    /// (4xx, too large, not CAP, refused) is kept as refused: the same path answers the same.
    private func document(_ path: String, now: Date, budget: inout Int, refused: inout [String]) -> Result<CAP.Alert?, IncomingWarning.Refused>? {
        if let kept = documents.withLock({ $0[path] }) { return kept }
        guard budget > 0, let url = URL(string: baseURL + path) else { return nil }
        budget -= 1
        let read: Result<CAP.Alert?, IncomingWarning.Refused>
        do {
            let (status, body) = try HTTPFetch.get(url, timeout: timeout, maximumBytes: Self.maximumDocumentBytes)
            if status >= 500 || status == 429 {
                refused.append("\(path): HTTP \(status)")
                return nil
            }
            read = status == 200 ? .success(try CAP.read([UInt8](body), source: source, now: now))
                : .failure(IncomingWarning.Refused(description: "\(path): HTTP \(status)"))
        } catch let refusal as IncomingWarning.Refused {
            read = .failure(refusal)
        } catch let error as UpstreamError where error.isAboutTheAnswer {
            read = .failure(IncomingWarning.Refused(description: "\(path): \(error)"))
        } catch {
            refused.append("\(path): \(error)")
            return nil
        }
        documents.withLock {
            if $0.count >= Self.documentsKept { $0.removeAll() }
            $0[path] = read
        }
        return read
    }
}

/// Shapes of the places warnings name by code, from a GeoJSON feature collection: each
/// feature's `properties.type` (`EMMA_ID`, `NUTS3`…) and `properties.code`, and its polygon
/// or multipolygon (MeteoAlarm's geocodes file has this form). Read once, at start.
struct WarningGeocodes: Sendable {
    private var shapes: [String: WarningArea] = [:]
    var isEmpty: Bool { shapes.isEmpty }
    var count: Int { shapes.count }

    /// Larger is not a geocodes file (MeteoAlarm's is about 20 MB).
    static let maximumBytes = 256 << 20

    init() {}

    init(file path: String) throws {
        guard let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? nil else {
            throw StartupError("--warnings-meteoalarm-geocodes: cannot read \(path)")
        }
        guard size <= Self.maximumBytes else { throw StartupError("--warnings-meteoalarm-geocodes: \(path) is over \(Self.maximumBytes >> 20) MB") }
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        guard let collection = try? JSONSerialization.jsonObject(with: data) as? [String: Any], let features = collection["features"] as? [Any] else {
            throw StartupError("--warnings-meteoalarm-geocodes: \(path) is not a GeoJSON feature collection")
        }
        for case let feature as [String: Any] in features {
            guard let properties = feature["properties"] as? [String: Any], let type = properties["type"] as? String,
                  let code = properties["code"] as? String else { continue }
            let area = WarningArea(geoJSON: feature["geometry"])
            guard !area.polygons.isEmpty else { continue }
            shapes[type + ":" + code, default: WarningArea()].polygons += area.polygons
        }
        guard !shapes.isEmpty else { throw StartupError("--warnings-meteoalarm-geocodes: \(path) has no feature with a type, a code and a polygon") }
    }

    /// The shape of `code` (`EMMA_ID:DE271`).
    func area(_ code: String) -> WarningArea? { shapes[code] }
}
