import Foundation
import GRDB

/// A city from the GeoNames catalog.
public struct City: Codable, Sendable, Equatable, FetchableRecord, PersistableRecord {
    public static let databaseTableName = "cities"

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

    public enum Columns {
        static let slug = Column(CodingKeys.slug)
        static let population = Column(CodingKeys.population)
    }

    /// The name in `language`, falling back to English.
    public func name(_ language: Language) -> String {
        language == .ko ? (nameKo ?? nameEn) : nameEn
    }

    public var timeZone: TimeZone { TimeZone(identifier: timezone) ?? .gmt }
}

extension City {
    static func find(slug: String, _ db: Database) throws -> City? {
        try City.filter(Columns.slug == slug).fetchOne(db)
    }

    static func count(_ db: Database) throws -> Int { try City.fetchCount(db) }
}
