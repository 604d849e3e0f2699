import Foundation

/// What a person types into the search box, read the way they meant it (issue 26 #9): "서울특별시"
/// and "서울시" are 서울, "Seoul, KR" and "seoul korea" are Seoul in South Korea, "bombay" is
/// Mumbai, and "seol" or "sao paolo" are one slip from Seoul and São Paulo (offered as "did you
/// mean", not taken silently). Each step is tried only when the plain prefix search finds
/// nothing, so a real name always wins over a reading of it.
struct ForgivingSearch: Sendable {
    let index: CityIndex
    /// The 5,000 largest cities' English names, folded once, for typo matching.
    private let candidates: [(name: [Unicode.Scalar], rank: Int)]

    init(index: CityIndex) {
        self.index = index
        candidates = index.cities.prefix(5_000).enumerated().map { (Array(CityIndex.fold($1.nameEn).unicodeScalars), $0) }
    }

    /// How the query was understood.
    struct Reading {
        var results: CityIndex.Results
        /// Set when the results are for a corrected spelling ("Did you mean Seoul?").
        var correction: City?
        /// Whether the results come from a reading of the query (an ending, a country, another
        /// name), not from the query as typed.
        var reread = false
    }

    /// Queries longer than this are cut before any of the work below (it is linear in the length).
    static let longestQuery = 64

    /// Well-known former names, other languages' names and abbreviations that are not in the
    /// catalog (GeoNames' alternate names, trimmed to the ones people type in practice): folded
    /// form → the catalog's slug.
    static let otherNames: [String: String] = [
        "nyc": "new-york-city", "new york": "new-york-city", "la": "los-angeles", "sf": "san-francisco",
        "bombay": "mumbai", "calcutta": "kolkata", "madras": "chennai", "bangalore": "bengaluru",
        "peking": "beijing", "canton": "guangzhou", "saigon": "ho-chi-minh-city", "rangoon": "yangon",
        "munchen": "munich", "muenchen": "munich", "koln": "cologne", "wien": "vienna", "roma": "rome",
        "praha": "prague", "lisboa": "lisbon", "moskva": "moscow", "warszawa": "warsaw", "kobenhavn": "copenhagen",
        "firenze": "florence", "venezia": "venice", "milano": "milan", "napoli": "naples", "bruxelles": "brussels",
        "den haag": "the-hague", "constantinople": "istanbul", "edo": "tokyo", "keijo": "seoul", "hanseong": "seoul",
    ]

    /// Korean administrative endings, longest first: 서울특별시, 부산광역시, 세종특별자치시, 수원시, 강남구.
    static let koreanEndings = ["특별자치시", "특별자치도", "특별시", "광역시", "시", "군", "구", "도"]

    func read(_ query: String) -> Reading {
        let typed = String(query.prefix(Self.longestQuery))
        let plain = index.search(typed)
        if plain.total > 0 { return Reading(results: plain) }
        var folded = CityIndex.fold(typed)
        // "Seoul, KR", "seoul korea", "Springfield, Illinois": a trailing country narrows the list.
        var country: String?
        if let (name, code) = splitCountry(typed) {
            folded = name
            country = code
        }
        if let slug = Self.otherNames[folded], let city = index.city(slug: slug) {
            return Reading(results: CityIndex.Results(cities: [city], total: 1), reread: true)
        }
        for ending in Self.koreanEndings where folded.hasSuffix(ending) && folded.count > ending.count {
            let stem = String(folded.dropLast(ending.count))
            let found = narrowed(index.search(stem), to: country)
            if found.total > 0 { return Reading(results: found, reread: true) }
        }
        let named = narrowed(index.search(folded), to: country)
        if named.total > 0 { return Reading(results: named, reread: true) }
        if let corrected = closestName(to: folded, in: country) {
            return Reading(results: narrowed(index.search(CityIndex.fold(corrected.nameEn)), to: country), correction: corrected, reread: true)
        }
        return Reading(results: plain)
    }

    private func narrowed(_ results: CityIndex.Results, to country: String?) -> CityIndex.Results {
        guard let country else { return results }
        let kept = results.cities.indices.filter { results.cities[$0].country == country }
        return CityIndex.Results(cities: kept.map { results.cities[$0] }, total: kept.count, via: kept.map { results.via[$0] })
    }

    /// "seoul, kr" → ("seoul", "KR"); "seoul korea" → ("seoul", "KR"): the last part when it is a
    /// country's code or its name in English or Korean.
    private func splitCountry(_ typed: String) -> (String, String)? {
        let folded = CityIndex.fold(typed)
        let words = folded.split(separator: " ")
        guard words.count >= 2 else { return nil }
        for length in [2, 1] where words.count > length {
            let tail = words.suffix(length).joined(separator: " ")
            if let code = Self.countries[tail] {
                return (words.dropLast(length).joined(separator: " "), code)
            }
        }
        return nil
    }

    /// Folded country codes and names (English and Korean, with the short forms people use) → code.
    static let countries: [String: String] = {
        var names: [String: String] = [:]
        let english = Locale(identifier: "en"), korean = Locale(identifier: "ko")
        for code in Locale.Region.isoRegions.map(\.identifier) where code.count == 2 {
            names[code.lowercased()] = code
            for locale in [english, korean] {
                if let name = locale.localizedString(forRegionCode: code) { names[CityIndex.fold(name)] = code }
            }
        }
        for (short, code) in [("korea", "KR"), ("한국", "KR"), ("usa", "US"), ("us", "US"), ("uk", "GB"), ("england", "GB"), ("미국", "US")] {
            names[short] = code
        }
        return names
    }()

    /// The most populous city whose English name is within one typo (two for names of eight
    /// letters or more) of `query`, for names of five letters or more. Bounded: the query is cut
    /// to `longestQuery`, only the 5,000 largest cities are compared, and only names whose length
    /// is within two of the query's; each comparison stops as soon as it passes the allowance.
    private func closestName(to query: String, in country: String?) -> City? {
        let typed = Array(query.unicodeScalars)
        guard typed.count >= 4 else { return nil }
        var best: (city: City, distance: Int)?
        for (name, rank) in candidates where name.count >= 5 && abs(name.count - typed.count) <= 2 {
            let city = index.cities[rank]
            guard country == nil || city.country == country else { continue }
            let allowance = name.count >= 8 ? 2 : 1
            guard let distance = Self.distance(typed, name, atMost: allowance) else { continue }
            if best == nil || distance < best!.distance { best = (city, distance) } // ties: the larger city, seen first
        }
        return best?.city
    }

    /// Levenshtein distance when it is at most `limit`, else nil (one row at a time, stopping as
    /// soon as every cell of a row passes the limit).
    static func distance(_ a: [Unicode.Scalar], _ b: [Unicode.Scalar], atMost limit: Int) -> Int? {
        guard !a.isEmpty, !b.isEmpty else { return max(a.count, b.count) <= limit ? max(a.count, b.count) : nil }
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            var rowMinimum = current[0]
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                rowMinimum = min(rowMinimum, current[j])
            }
            if rowMinimum > limit { return nil }
            swap(&previous, &current)
        }
        let result = previous[b.count]
        return result <= limit ? result : nil
    }
}
