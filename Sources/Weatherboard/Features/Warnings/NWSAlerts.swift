import Foundation
import Synchronization

/// The US National Weather Service's active alerts (`/alerts/active`, GeoJSON features with CAP
/// properties). An alert with a polygon is matched by it; one without (most zone-wide alerts) by
/// its affected zones' own polygons, asked from the same service once each and kept.
final class NWSAlerts: WarningProvider {
    let source = "nws"
    let baseURL: String
    let timeout: TimeInterval
    /// The answer of every alert in the country is a few MB on a busy day.
    static let maximumBytes = 16 << 20
    /// Zones asked for in one poll, at most: the rest wait for the next (a storm of zone-wide
    /// alerts must not become hundreds of requests at once).
    static let zonesPerPoll = 40
    /// Zone polygons kept (a zone's shape does not change); past this many, the cache starts over.
    static let zonesKept = 5_000
    private let zones = Mutex<[String: WarningArea]>([:])
    /// Where the service warns: the United States and its territories (an alert drawn elsewhere
    /// matches nothing).
    static let countries: Set<String> = ["US", "PR", "GU", "VI", "AS", "MP", "UM"]
    /// Vertices matched in one poll, at most (a warning holds at most `WarningArea.maximumVertices`):
    /// the rest of the alerts wait for the next poll.
    static let verticesPerPoll = 200_000
    /// Alerts taken from one answer, at most: cancellations and updates first, then the most
    /// severe. An answer of 5,000 small alerts once took a node to 1.8 GB and most of a core each
    /// poll; the country rarely has more than a few hundred in force.
    static let alertsPerPoll = 500

    init(baseURL: String, timeout: TimeInterval = 10) {
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.timeout = timeout
    }

    func warnings(now: Date, cities: [City]) throws -> WarningFeed {
        guard let url = URL(string: baseURL + "/alerts/active?status=actual") else { throw UpstreamError("nws: bad base URL") }
        let (status, body) = try HTTPFetch.get(url, timeout: timeout, maximumBytes: Self.maximumBytes)
        guard status == 200 else { throw UpstreamError("nws: HTTP \(status)") }
        let parsed = try Self.parse(body, now: now)
        var feed = WarningFeed(warnings: [], refused: parsed.refused)
        let taken = Self.mostSevere(parsed.alerts, count: Self.alertsPerPoll)
        if taken.count < parsed.alerts.count {
            feed.refused.append("nws: \(parsed.alerts.count) alerts in one answer, the \(taken.count) most severe taken")
        }
        var zoneBudget = Self.zonesPerPoll, vertexBudget = Self.verticesPerPoll
        let here = cities.filter { Self.countries.contains($0.country) }
        for (incoming, zoneIDs) in taken {
            var area = incoming.area
            if area.polygons.isEmpty {
                for zone in zoneIDs {
                    guard let polygons = zoneArea(zone, budget: &zoneBudget, refused: &feed.refused)?.polygons else { continue }
                    area.polygons += polygons
                }
            }
            feed.take(incoming, area: area, among: here, vertices: &vertexBudget, perPoll: Self.verticesPerPoll)
        }
        return feed
    }

    /// A zone's polygons: kept, or asked for while `budget` lasts (nil past it, or when the
    /// service has no shape for it: the alert shows nowhere until a later poll finds one, and
    /// the poll's refusals say so).
    private func zoneArea(_ zone: ZoneID, budget: inout Int, refused: inout [String]) -> WarningArea? {
        if let kept = zones.withLock({ $0[zone.path] }) { return kept }
        guard budget > 0, let url = URL(string: baseURL + zone.path) else { return nil }
        budget -= 1
        let object: [String: Any]
        do {
            let (status, body) = try HTTPFetch.get(url, timeout: timeout, maximumBytes: Self.maximumBytes)
            guard status == 200, let parsed = try JSONSerialization.jsonObject(with: body) as? [String: Any] else {
                refused.append("zone \(zone.path): HTTP \(status), or not a feature")
                return nil
            }
            object = parsed
        } catch {
            refused.append("zone \(zone.path): \(error)")
            return nil // asked again at the next poll
        }
        let area = WarningArea(geoJSON: object["geometry"])
        zones.withLock {
            if $0.count >= Self.zonesKept { $0.removeAll() }
            $0[zone.path] = area
        }
        return area
    }

    /// A zone named by an alert: only its path is used, on our own base URL (an answer never
    /// makes us ask another host), and only a path of the zones' form.
    struct ZoneID: Hashable, Sendable {
        var path: String

        init?(_ url: String) {
            guard let range = url.range(of: "/zones/") else { return nil }
            let parts = url[range.upperBound...].split(separator: "/")
            guard parts.count == 2, parts[0].count <= 16, parts[1].count <= 16,
                  parts[0].allSatisfy({ $0.isASCII && $0.isLetter }), parts[1].allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) })
            else { return nil }
            path = "/zones/\(parts[0])/\(parts[1])"
        }
    }

    /// The answer's alerts, checked (`IncomingWarning.checked`), with the zones of each; alerts
    /// that are not for real (tests, exercises) are left out, and any other that cannot be
    /// taken is refused with its reason. An answer that is not a collection of features (an
    /// error document, XML with status 200) throws.
    /// At most `count` of `alerts`, in the answer's order: cancellations and updates (which end or
    /// change what is shown) before new alerts, then the most severe; ties by their place in the answer.
    static func mostSevere<Area>(_ alerts: [(IncomingWarning, Area)], count: Int) -> [(IncomingWarning, Area)] {
        guard alerts.count > count else { return alerts }
        let ranked = alerts.indices.sorted { a, b in
            let (x, y) = (alerts[a].0, alerts[b].0)
            if (x.kind == .alert) != (y.kind == .alert) { return x.kind != .alert }
            if x.warning.severity != y.warning.severity { return x.warning.severity > y.warning.severity }
            return a < b
        }
        return ranked.prefix(count).sorted().map { alerts[$0] }
    }

    static func parse(_ body: Data, now: Date) throws -> (alerts: [(IncomingWarning, [ZoneID])], refused: [String]) {
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: body)
        } catch {
            throw UpstreamError("nws: the answer is not JSON (\(body.count) bytes starting \(LogText.oneLine(String(decoding: body.prefix(40), as: UTF8.self), limit: 40)))")
        }
        guard let collection = object as? [String: Any], let features = collection["features"] as? [Any] else {
            throw UpstreamError("nws: the answer holds no features")
        }
        var alerts: [(IncomingWarning, [ZoneID])] = [], refused: [String] = []
        for feature in features {
            guard let feature = feature as? [String: Any], let properties = feature["properties"] as? [String: Any] else {
                refused.append("a feature without properties")
                continue
            }
            guard (properties["status"] as? String) ?? "Actual" == "Actual" else { continue }
            do {
                alerts.append(try alert(properties, geometry: feature["geometry"], now: now))
            } catch {
                refused.append(String(describing: error))
            }
        }
        return (alerts, refused)
    }

    private static func alert(_ properties: [String: Any], geometry: Any?, now: Date) throws -> (IncomingWarning, [ZoneID]) {
        func field(_ key: String) -> String? { properties[key] as? String }
        guard let identifier = field("id"), !identifier.isEmpty, identifier.utf8.count <= 200 else {
            throw IncomingWarning.Refused(description: "an alert without a usable id")
        }
        let id = "nws:" + identifier
        func date(_ key: String) -> Date? { field(key).flatMap(CAP.time) }
        guard let sent = date("sent") else { throw IncomingWarning.Refused(description: "\(id.prefix(80)): no time sent") }
        // `ends` is the hazard's end; `expires` the message's, often sooner: the later one shown.
        guard let expires = [date("ends"), date("expires")].compactMap({ $0 }).max() else {
            throw IncomingWarning.Refused(description: "\(id.prefix(80)): no end")
        }
        let kind = IncomingWarning.Kind(capMessageType: field("messageType") ?? "Alert")
        let replaces = ((properties["references"] as? [Any]) ?? []).prefix(50).compactMap { reference -> String? in
            guard let identifier = (reference as? [String: Any])?["identifier"] as? String, identifier.utf8.count <= 200 else { return nil }
            return "nws:" + identifier
        }
        let warning = Warning(
            id: id, source: "nws", event: field("event") ?? "", severity: Warning.Severity(cap: field("severity") ?? ""),
            urgency: Warning.cleaned(field("urgency") ?? "Unknown", limit: 20).lowercased(),
            sent: sent, onset: date("onset") ?? date("effective") ?? sent, expires: expires,
            texts: [Warning.Text(language: "en", headline: field("headline") ?? field("event") ?? "",
                                 description: [field("description"), field("instruction")].compactMap { $0 }.joined(separator: "\n\n"))])
        let zones = ((properties["affectedZones"] as? [Any]) ?? []).prefix(200).compactMap { ($0 as? String).flatMap(ZoneID.init) }
        return (try IncomingWarning.checked(warning, kind: kind, replaces: replaces, area: WarningArea(geoJSON: geometry), now: now), zones)
    }
}
