import Foundation
import HTTPServer
import Synchronization

/// The whole catalog in memory (about 34,000 cities, a few MB), for prefix search and nearest-city
/// look-ups without touching SQLite. Cities are ranked by population, so a city's position in
/// `cities` is its rank and the first matches are the best.
public final class CityIndex: Sendable {
    public let cities: [City]
    private let bySlug: [String: Int]
    private let byID: [Int64: Int]
    /// Folded names (English, Korean, slug words) as UTF-8, sorted bytewise, with the city's rank.
    private let keys: [(key: [UInt8], rank: Int32)]
    /// A district's rank → the rank of the city it is part of ("Paris 15 Vaugirard" → Paris).
    private let parentOf: [Int32: Int32]
    /// Korean 시/군/구 and 읍/면/동 by name (`District`), and their folded names, sorted, with
    /// each one's position in `districts` and whether only the whole name finds it (a 동's).
    public let districts: [District]
    private let districtKeys: [(key: [UInt8], district: Int32, wholeOnly: Bool)]
    /// Each district's city's rank.
    private let districtCity: [Int32]
    /// Korean 시/군/구 outlines, smallest first, and their cities' ranks.
    private let outlines: [(outline: DistrictOutline, rank: Int)]

    /// The catalog this index was built from, as read (what `CityIndexCache` compares).
    fileprivate let source: [City]

    public init(cities unsorted: [City], districts: [District] = District.all, outlines: [DistrictOutline] = DistrictOutline.all) {
        source = unsorted
        cities = unsorted.sorted { ($0.population, $1.id) > ($1.population, $0.id) }
        var bySlug: [String: Int] = [:]
        var byID: [Int64: Int] = [:]
        var keys: [(key: [UInt8], rank: Int32)] = []
        keys.reserveCapacity(cities.count * 2)
        for (rank, city) in cities.enumerated() {
            bySlug[city.slug] = rank
            byID[city.id] = rank
            var names = Set([CityIndex.fold(city.nameEn), CityIndex.fold(city.slug.replacingOccurrences(of: "-", with: " "))])
            if let korean = city.nameKo { names.insert(CityIndex.fold(korean)) }
            for name in names where !name.isEmpty { keys.append((Array(name.utf8), Int32(rank))) }
        }
        keys.sort { $0.key.lexicographicallyPrecedes($1.key) }
        parentOf = CityIndex.districts(of: cities)
        // Districts of cities the catalog has (a test's small catalog has few), with their city's rank.
        let kept = districts.compactMap { district in byID[district.cityID].map { (district, Int32($0)) } }
        var districtKeys: [(key: [UInt8], district: Int32, wholeOnly: Bool)] = []
        for (position, (district, _)) in kept.enumerated() {
            for name in Set(district.names.map(CityIndex.fold)) where !name.isEmpty {
                districtKeys.append((Array(name.utf8), Int32(position), district.level == .emd))
            }
        }
        districtKeys.sort { $0.key.lexicographicallyPrecedes($1.key) }
        self.districts = kept.map(\.0)
        self.districtKeys = districtKeys
        districtCity = kept.map(\.1)
        self.outlines = outlines.compactMap { outline in byID[outline.cityID].map { (outline, $0) } }.sorted { $0.outline.area < $1.outline.area }
        self.bySlug = bySlug
        self.byID = byID
        self.keys = keys
    }

    public func city(slug: String) -> City? { bySlug[slug].map { cities[$0] } }

    public func city(id: Int64) -> City? { byID[id].map { cities[$0] } }

    /// The city a `/city/{slug}…` route names, or 404.
    func city(named request: Request) throws -> City {
        guard let city = city(slug: request.parameters["slug"] ?? "") else { throw HTTPError(.notFound) }
        return city
    }

    /// Case- and accent-insensitive form used for matching: "São Paulo" → "sao paulo".
    public static func fold(_ text: String) -> String {
        foldASCII(text) ?? foldUnicode(text)
    }

    /// `fold` for text that is all ASCII (most English names), by bytes: lower case, words
    /// split at white space, hyphens and commas and joined by one space, what Foundation's
    /// folding gives for such text at a small part of its cost (start-up folds about 70,000
    /// names). Nil for anything else.
    static func foldASCII(_ text: String) -> String? {
        var folded: [UInt8] = []
        folded.reserveCapacity(text.utf8.count)
        var separated = false
        for byte in text.utf8 {
            switch byte {
            case 0x80...: return nil
            // `Character.isWhitespace` in ASCII: tab, line feed, vertical tab, form feed, carriage return, space.
            case 0x09...0x0D, 0x20, UInt8(ascii: "-"), UInt8(ascii: ","):
                separated = !folded.isEmpty
            default:
                if separated { folded.append(0x20) }
                separated = false
                folded.append(byte >= 65 && byte <= 90 ? byte | 0x20 : byte)
            }
        }
        return String(decoding: folded, as: UTF8.self)
    }

    /// `fold` for any text, through Foundation.
    static func foldUnicode(_ text: String) -> String {
        text.folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil)
            .precomposedStringWithCanonicalMapping
            .split(whereSeparator: { $0.isWhitespace || $0 == "-" || $0 == "," })
            .joined(separator: " ")
    }

    /// A part of a bigger city: its English name is the bigger city's name and more words
    /// ("Paris 15 Vaugirard", "Paris 13e Arrondissement"), and it lies within 15 km of it.
    private static func districts(of cities: [City]) -> [Int32: Int32] {
        var byName: [String: [Int]] = [:]
        for (rank, city) in cities.enumerated() { byName[fold(city.nameEn), default: []].append(rank) }
        var parents: [Int32: Int32] = [:]
        for (rank, city) in cities.enumerated() {
            let words = fold(city.nameEn).split(separator: " ")
            guard words.count > 1 else { continue }
            search: for length in (1..<words.count).reversed() {
                for candidate in byName[words.prefix(length).joined(separator: " ")] ?? [] where candidate < rank {
                    let parent = cities[candidate]
                    if parent.country == city.country,
                       haversine(parent.latitude, parent.longitude, city.latitude, city.longitude) < 15 {
                        parents[Int32(rank)] = Int32(candidate)
                        break search
                    }
                }
            }
        }
        return parents
    }

    /// A page of search results and how many cities matched in all.
    public struct Results {
        public let cities: [City]
        public let total: Int
        /// For each of `cities`, the Korean district it was found by, if it was ("강남구 → 서울").
        public var via: [District?]

        public init(cities: [City], total: Int, via: [District?]? = nil) {
            self.cities = cities
            self.total = total
            self.via = via ?? cities.map { _ in nil }
        }
    }

    /// Cities whose English or Korean name starts with `query`: exact names first, then by
    /// population; districts of a city that matches too are folded into it. Then the cities of
    /// Korean districts so named (a 시/군/구 by the start of a name, a 동 by its whole name), each
    /// city once: exact names first, 시/군/구 before 동, then by the city's size.
    public func search(_ query: String, limit: Int = 20) -> Results {
        let folded = CityIndex.fold(query)
        let ranks = search(folded: Array(folded.utf8), limit: Int.max)
        let matched = Set(ranks)
        let shown = ranks.filter { rank in parentOf[Int32(rank)].map { !matched.contains(Int($0)) } ?? true }
        let exact = shown.filter { CityIndex.fold(cities[$0].nameEn) == folded || cities[$0].nameKo.map(CityIndex.fold) == folded }
        let ordered = exact + shown.filter { !exact.contains($0) }
        var listed = Set(ordered)
        var viaDistricts: [(rank: Int, district: Int)] = []
        for position in districtsNamed(folded) where listed.insert(Int(districtCity[position])).inserted {
            viaDistricts.append((Int(districtCity[position]), position))
        }
        let rows = ordered.map { ($0, nil as District?) } + viaDistricts.map { ($0.rank, districts[$0.district] as District?) }
        return Results(cities: rows.prefix(limit).map { cities[$0.0] }, total: rows.count, via: rows.prefix(limit).map(\.1))
    }

    /// Districts named `folded` (a 시/군/구 by a name's start, a 동 by a whole name), best first.
    private func districtsNamed(_ folded: String) -> [Int] {
        let prefix = Array(folded.utf8)
        guard !prefix.isEmpty else { return [] }
        var low = 0, high = districtKeys.count
        while low < high {
            let middle = (low + high) / 2
            if districtKeys[middle].key.lexicographicallyPrecedes(prefix) { low = middle + 1 } else { high = middle }
        }
        var found: [Int: Bool] = [:] // position → whether a name is the query exactly
        var i = low
        while i < districtKeys.count, districtKeys[i].key.starts(with: prefix) {
            let whole = districtKeys[i].key.count == prefix.count, position = Int(districtKeys[i].district)
            if whole || !districtKeys[i].wholeOnly { found[position] = (found[position] ?? false) || whole }
            i += 1
        }
        return found.keys.sorted { a, b in
            (found[a] == true ? 0 : 1, districts[a].level == .sigungu ? 0 : 1, districtCity[a], a)
                < (found[b] == true ? 0 : 1, districts[b].level == .sigungu ? 0 : 1, districtCity[b], b)
        }
    }

    /// The one city whose name is exactly `query`, when only one is and it is also the largest
    /// of all the names it begins ("san" is San, Mali, exactly, but people typing it mean one of
    /// the San Franciscos and San Diegos: a list, not a jump).
    public func exactMatch(_ query: String) -> City? {
        let folded = CityIndex.fold(query)
        let matches = search(query, limit: 50).cities.filter { CityIndex.fold($0.nameEn) == folded || $0.nameKo.map(CityIndex.fold) == folded }
        guard matches.count == 1, let largest = search(folded: Array(folded.utf8), limit: 1).first,
              cities[largest].id == matches[0].id else { return nil }
        return matches[0]
    }

    private func search(folded prefix: [UInt8], limit: Int) -> [Int] {
        guard !prefix.isEmpty else { return [] }
        var low = 0, high = keys.count
        while low < high {
            let middle = (low + high) / 2
            if keys[middle].key.lexicographicallyPrecedes(prefix) { low = middle + 1 } else { high = middle }
        }
        var ranks: [Int32] = []
        var i = low
        while i < keys.count, keys[i].key.starts(with: prefix) {
            ranks.append(keys[i].rank)
            i += 1
        }
        ranks.sort()
        var result: [Int] = []
        var last: Int32 = -1
        for rank in ranks where rank != last {
            result.append(Int(rank))
            last = rank
            if result.count == limit { break }
        }
        return result
    }

    /// The city whose area a point is in: of the cities whose `reach` covers it, the one it is
    /// deepest within (its distance over the reach), so that a big city's outskirts go to it
    /// rather than to a small town a little nearer (Haeundae beach → Busan, not Gijang); a point
    /// in no city's reach goes to the nearest city, by great-circle distance.
    /// A point inside a Korean 시/군/구's outline goes to that district's city.
    public func nearest(latitude: Double, longitude: Double) -> City? {
        let (x, y) = (Int32((longitude * 1e4).rounded()), Int32((latitude * 1e4).rounded()))
        if let inside = outlines.first(where: { $0.outline.contains(x: x, y: y) }) { return cities[inside.rank] }
        var nearest: (index: Int, distance: Double)?
        var within: (index: Int, depth: Double)?
        for (index, city) in cities.enumerated() {
            let d = CityIndex.haversine(latitude, longitude, city.latitude, city.longitude)
            if nearest == nil || d < nearest!.distance { nearest = (index, d) }
            let reach = CityIndex.reach(population: city.population)
            if d <= reach, within == nil || d / reach < within!.depth { within = (index, d / reach) }
        }
        return (within?.index ?? nearest?.index).map { cities[$0] }
    }

    /// How far a city's area reaches from its point, in kilometres: the radius of a disc as
    /// dense as a city, growing with the square root of the population (Busan's 3.4 million:
    /// 17 km; Seoul's 10 million: 28 km), and never under 2 km.
    static func reach(population: Int) -> Double {
        max(2, 0.009 * Double(max(0, population)).squareRoot())
    }

    /// Great-circle distance in kilometres.
    static func haversine(_ lat1: Double, _ lon1: Double, _ lat2: Double, _ lon2: Double) -> Double {
        let r = Double.pi / 180
        let dLat = (lat2 - lat1) * r, dLon = (lon2 - lon1) * r
        let a = sin(dLat / 2) * sin(dLat / 2) + cos(lat1 * r) * cos(lat2 * r) * sin(dLon / 2) * sin(dLon / 2)
        return 2 * 6371.0088 * asin(min(1, sqrt(a)))
    }
}

/// The index built last, handed out again for the same catalog. A process that opens several
/// applications on one catalog (the tests open hundreds) folds and sorts 34,000 cities once;
/// comparing two catalogs costs a small part of indexing one.
final class CityIndexCache: Sendable {
    static let shared = CityIndexCache()
    private let last = Mutex<CityIndex?>(nil)

    func index(of cities: [City]) -> CityIndex {
        if let last = last.withLock({ $0 }), last.source == cities { return last }
        let index = CityIndex(cities: cities)
        last.withLock { $0 = index }
        return index
    }
}
