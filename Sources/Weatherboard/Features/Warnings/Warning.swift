import Foundation

/// An official weather warning as a source issued it (issue 43 #1): what, how bad, when, its
/// words in the languages the source wrote them in, and (while it is in force) the cities its
/// area covers.
struct Warning: Sendable, Hashable {
    /// The source's name, `:`, the source's own identifier (`nws:urn:oid:…`).
    var id: String
    var source: String
    var event: String
    var severity: Severity
    var urgency: String
    var sent: Date
    var onset: Date
    var expires: Date
    var texts: [Text]
    /// In force until its source lifts it (KMA's): `expires` is then only how long it is kept
    /// unheard, and pages say "until lifted", not a time.
    var endsWhenLifted = false

    /// CAP's severities (`Unknown` counts as minor: a warning is shown, not ranked above others).
    enum Severity: String, Sendable, CaseIterable, Comparable {
        case minor, moderate, severe, extreme

        init(cap: String) {
            self = Severity(rawValue: cap.lowercased()) ?? .minor
        }

        private var rank: Int { Self.allCases.firstIndex(of: self)! }
        static func < (a: Severity, b: Severity) -> Bool { a.rank < b.rank }
    }

    struct Text: Sendable, Hashable {
        /// The language's code as the source gave it, lower-cased (`en`, `ko`, `de-de`…).
        var language: String
        var headline: String
        var description: String
    }

    /// The text to show in `language`: its own, else English, else the first the source gave.
    func text(_ language: Language) -> Text? {
        func matches(_ text: Text, _ code: String) -> Bool { text.language == code || text.language.hasPrefix(code + "-") }
        return texts.first { matches($0, language.rawValue) } ?? texts.first { matches($0, "en") } ?? texts.first
    }

    /// What a source may say, at most: longer words are cut (a 10 MB description is a few
    /// screens, not 10 MB in every page), more languages are dropped.
    static let maximumEvent = 120
    static let maximumHeadline = 400
    static let maximumDescription = 4_000
    static let maximumLanguages = 8
    /// A warning whose end is further away than this is taken to end then: no source issues one
    /// for longer, and an absurd date must not keep one on a page for years.
    static let maximumLength: TimeInterval = 14 * 86_400
    /// How long a warning in force until lifted is kept while its source is not heard (each poll
    /// that finds it renews it when half is gone: `WarningStore.apply`).
    static let keptUnheard: TimeInterval = 6 * 3600

    /// `text` without control characters or bidi controls (which would reorder the page's text
    /// around it), runs of white space as one space (or, with `keepingLines`, line breaks as up to
    /// one blank line), trimmed and cut to `limit` characters on a character boundary.
    static func cleaned(_ text: String, limit: Int, keepingLines: Bool = false) -> String {
        var out = ""
        out.reserveCapacity(min(text.utf8.count, limit * 4))
        var count = 0
        var lastWasSpace = true
        var newlines = 0
        for scalar in text.unicodeScalars {
            guard count < limit else { break }
            if isBidiControl(scalar) { continue }
            if keepingLines && scalar == "\n" {
                if newlines < 2 && count > 0 {
                    while out.unicodeScalars.last == " " { out.unicodeScalars.removeLast(); count -= 1 }
                    out.unicodeScalars.append("\n"); count += 1
                }
                newlines += 1
                lastWasSpace = true
                continue
            }
            let isSpace = scalar.properties.isWhitespace || scalar.properties.generalCategory == .control
            if isSpace {
                if !lastWasSpace { out.unicodeScalars.append(" "); count += 1 }
                lastWasSpace = true
            } else {
                out.unicodeScalars.append(scalar)
                count += 1
                lastWasSpace = false
                newlines = 0
            }
        }
        while out.last == " " || out.last == "\n" { out.removeLast() }
        return out
    }

    /// The marks and embeddings that reorder text (LRM, RLM, ALM, LRE…RLO, LRI…PDI).
    static func isBidiControl(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x200E, 0x200F, 0x061C, 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }
}

/// A warning as a feed gives it, before it is matched to cities and kept: the warning, what it
/// does to earlier ones, and its area.
struct IncomingWarning: Sendable {
    var warning: Warning
    var kind: Kind
    /// The ids (with the source's prefix) of the earlier warnings it updates or cancels.
    var replaces: [String]
    var area: WarningArea

    enum Kind: String, Sendable {
        case alert, update, cancel
    }

    /// Why a feed's warning is not taken.
    struct Refused: Error, CustomStringConvertible {
        var description: String
    }

    /// `warning` checked and trimmed: an end after its start and not past `maximumLength` from
    /// `now`, words cut to their limits. Refused when it has ended already (an expiry in 1970) or
    /// has no words at all.
    static func checked(_ warning: Warning, kind: Kind, replaces: [String], area: WarningArea, now: Date) throws -> IncomingWarning {
        var warning = warning
        warning.event = Warning.cleaned(warning.event, limit: Warning.maximumEvent)
        warning.texts = warning.texts.prefix(Warning.maximumLanguages).map {
            Warning.Text(language: Warning.cleaned($0.language, limit: 16).lowercased(),
                         headline: Warning.cleaned($0.headline, limit: Warning.maximumHeadline),
                         description: Warning.cleaned($0.description, limit: Warning.maximumDescription, keepingLines: true))
        }
        guard !warning.event.isEmpty else { throw Refused(description: "\(warning.id.prefix(80)): no event") }
        if kind != .cancel {
            guard warning.expires > now else {
                throw Refused(description: "\(warning.id.prefix(80)): ended \(Int(clampedSeconds: now.timeIntervalSince(warning.expires))) s ago")
            }
            warning.expires = min(warning.expires, now.addingTimeInterval(Warning.maximumLength))
            if warning.onset > warning.expires { warning.onset = warning.sent }
        }
        return IncomingWarning(warning: warning, kind: kind, replaces: replaces, area: area)
    }
}

/// Where a warning is in force: polygons (each a list of rings, longitude–latitude pairs, the
/// first ring the outside and the rest holes) and, where the source names places instead, the
/// names of its zones or regions, to be looked up.
struct WarningArea: Sendable {
    var polygons: [[[Point]]] = []

    struct Point: Sendable, Hashable {
        var longitude: Double
        var latitude: Double
    }

    /// Vertices a warning may have in all (the US weather service's biggest run to a few
    /// thousand): past this the rest is dropped, so no feed makes matching grow without bound.
    static let maximumVertices = 20_000
    /// Cities one warning may cover: no weather service warns a whole continent at once, and each
    /// covered city gets a thread (`WarningThreads`).
    static let maximumCities = 300

    var vertexCount: Int { polygons.reduce(0) { $0 + $1.reduce(0) { $0 + $1.count } } }

    /// The cities among `cities` inside the area: a bounding box first, then the even–odd rule
    /// over the polygon's rings (a point in a hole is outside). Work grows with cities times
    /// vertices of the polygons whose box holds the city.
    func cities(among cities: [City]) -> [Int64] {
        var found: [Int64] = []
        for polygon in polygons {
            guard let outside = polygon.first, outside.count >= 3 else { continue }
            var box = (minLon: Double.infinity, maxLon: -Double.infinity, minLat: Double.infinity, maxLat: -Double.infinity)
            for point in outside {
                box.minLon = min(box.minLon, point.longitude); box.maxLon = max(box.maxLon, point.longitude)
                box.minLat = min(box.minLat, point.latitude); box.maxLat = max(box.maxLat, point.latitude)
            }
            for city in cities
            where city.latitude >= box.minLat && city.latitude <= box.maxLat && city.longitude >= box.minLon && city.longitude <= box.maxLon {
                let point = Point(longitude: city.longitude, latitude: city.latitude)
                var inside = false
                for ring in polygon where Self.ring(ring, holds: point) { inside.toggle() }
                if inside { found.append(city.id) }
            }
        }
        return Array(Set(found)).sorted()
    }

    /// Ray casting: whether `point` is inside `ring` (closed or not).
    static func ring(_ ring: [Point], holds point: Point) -> Bool {
        guard ring.count >= 3 else { return false }
        var inside = false
        var j = ring.count - 1
        for i in 0..<ring.count {
            let a = ring[i], b = ring[j]
            if (a.latitude > point.latitude) != (b.latitude > point.latitude) {
                let crossing = (b.longitude - a.longitude) * (point.latitude - a.latitude) / (b.latitude - a.latitude) + a.longitude
                if point.longitude < crossing { inside.toggle() }
            }
            j = i
        }
        return inside
    }

    /// GeoJSON's `Polygon` or `MultiPolygon` geometry; anything else, none. Stops taking
    /// vertices past `maximumVertices`; a coordinate that is not a finite longitude–latitude is
    /// skipped.
    init(geoJSON geometry: Any?) {
        guard let geometry = geometry as? [String: Any], let type = geometry["type"] as? String,
              let coordinates = geometry["coordinates"] as? [Any] else { return }
        var budget = Self.maximumVertices
        func ring(_ value: Any) -> [Point] {
            guard let pairs = value as? [Any] else { return [] }
            var ring: [Point] = []
            ring.reserveCapacity(min(pairs.count, budget))
            for pair in pairs {
                guard budget > 0 else { break }
                guard let pair = pair as? [Any], pair.count >= 2, let lon = Self.number(pair[0]), let lat = Self.number(pair[1]),
                      (-180...180).contains(lon), (-90...90).contains(lat) else { continue }
                ring.append(Point(longitude: lon, latitude: lat))
                budget -= 1
            }
            return ring
        }
        func polygon(_ value: Any) -> [[Point]] {
            ((value as? [Any]) ?? []).map(ring).filter { $0.count >= 3 }
        }
        switch type {
        case "Polygon": polygons = [polygon(coordinates)].filter { !$0.isEmpty }
        case "MultiPolygon": polygons = coordinates.map(polygon).filter { !$0.isEmpty }
        default: break
        }
    }

    init(polygons: [[[Point]]] = []) { self.polygons = polygons }

    private static func number(_ value: Any) -> Double? {
        let number = (value as? NSNumber)?.doubleValue ?? (value as? Double)
        return number.flatMap { $0.isFinite ? $0 : nil }
    }
}
