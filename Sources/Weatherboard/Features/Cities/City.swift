import Foundation

/// A city from the GeoNames catalog.
public struct City: Codable, Sendable, Equatable {
    public var id: Int64
    public var slug: String
    public var nameEn: String
    public var nameKo: String?
    public var country: String
    public var admin1: String
    public var latitude: Double
    public var longitude: Double
    public var timezone: String
    public var population: Int
    public var kmaNx: Int?
    public var kmaNy: Int?

    enum CodingKeys: String, CodingKey {
        case id, slug, country, admin1, latitude, longitude, timezone, population
        case nameEn = "name_en", nameKo = "name_ko", kmaNx = "kma_nx", kmaNy = "kma_ny"
    }

    /// The name in `language`, falling back to English.
    public func name(_ language: Language) -> String {
        language == .ko ? (nameKo ?? nameEn) : nameEn
    }

    public var timeZone: TimeZone { TimeZone(identifier: timezone) ?? .gmt }
}

extension City {
    /// The columns `init(row:)` reads, in its order (and `CityCatalog` writes).
    static let columns = "id, slug, name_en, name_ko, country, admin1, latitude, longitude, timezone, population, kma_nx, kma_ny"

    init(row: any SQLRow) {
        self.init(id: row.int64(0), slug: row.string(1), nameEn: row.string(2), nameKo: row.optionalString(3), country: row.string(4),
                  admin1: row.string(5), latitude: row.double(6), longitude: row.double(7), timezone: row.string(8),
                  population: row.int(9), kmaNx: row.optionalInt(10), kmaNy: row.optionalInt(11))
    }

    static func all(_ db: any SQLConnection) throws -> [City] {
        try db.all("SELECT \(columns) FROM cities ORDER BY id", [], City.init(row:))
    }

    static func count(_ db: any SQLConnection) throws -> Int { try db.integer("SELECT count(*) FROM cities") }
}

extension City {
    /// Where a city is, to tell same-named ones apart: its region's name and the country's name
    /// in the reader's language ("Illinois, United States"). The region is left out when it is
    /// the city itself (Seoul, Tokyo) or unnamed; an unnamed region whose code is a readable
    /// abbreviation is shown as that.
    func place(_ language: Language) -> String {
        let countryName = Locale(identifier: language.rawValue).localizedString(forRegionCode: country) ?? country
        let code = admin1
        let readableCode = (code.count == 2 || code.count == 3) && code.allSatisfy { $0.isASCII && $0.isUppercase }
        let region = RegionNames.name(country: country, code: code) ?? (readableCode ? code : nil)
        guard let region, !Self.sameName(region, nameEn) else { return countryName }
        return "\(region), \(countryName)"
    }

    /// "Seoul" and "Seoul", or "Tokyo" and "Tokyo-to", "Shanghai" and "Shanghai Shi": a region
    /// named after its city (compared as search compares names).
    private static func sameName(_ region: String, _ city: String) -> Bool {
        let (region, city) = (CityIndex.fold(region), CityIndex.fold(city))
        return region == city || region.hasPrefix(city + " ")
    }
}
