import Foundation

/// Loads the shipped city catalog (`cities.tsv`, derived from GeoNames by
/// `scripts/derive-cities.py`) into the database. No network needed.
public enum CityCatalog {
    /// The catalog file shipped with the application (`InstalledFiles`).
    public static var bundledFile: URL? { InstalledFiles.catalog("cities.tsv") }

    /// Imports every city when the table is empty, in one transaction; returns the number added.
    @discardableResult
    public static func importIfEmpty(into database: AppDatabase, from file: URL? = bundledFile) throws -> Int {
        guard try database.readStatement(City.count) == 0 else { return 0 }
        return try importCities(into: database, from: file)
    }

    /// Replaces nothing: inserts cities that are not there yet (by GeoNames id).
    @discardableResult
    public static func importCities(into database: AppDatabase, from file: URL? = bundledFile) throws -> Int {
        guard let file, let text = try? String(contentsOf: file, encoding: .utf8) else {
            throw StartupError("the city catalog cities.tsv is not installed: it belongs in share/weatherboard/ beside the binary's bin/ folder (docs/operations.md, \"Installing\")")
        }
        let cities = try parse(text)
        return try database.write(.cluster) { db in  // the catalog, once, at start
            // Many rows a statement: one round trip per batch rather than per city (PostgreSQL
            // is over a socket), and one prepared statement for every full batch.
            var added = 0
            var start = 0
            while start < cities.count {
                let batch = cities[start..<min(start + Self.batchSize, cities.count)]
                let rows = Array(repeating: "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", count: batch.count).joined(separator: ", ")
                var values: [SQLValue] = []
                values.reserveCapacity(batch.count * 12)
                for c in batch {
                    let row: [any SQLArgument] = [c.id, c.slug, c.nameEn, c.nameKo, c.country, c.admin1, c.latitude, c.longitude,
                                                  c.timezone, c.population, c.kmaNx, c.kmaNy]
                    values += row.map { $0.sqlValue }
                }
                added += try db.execute("INSERT INTO cities (\(City.columns)) VALUES \(rows) ON CONFLICT DO NOTHING", values)
                start += Self.batchSize
            }
            return added
        }
    }

    /// Rows per INSERT: 12 values each, well under both engines' limits on placeholders.
    private static let batchSize = 200

    static func parse(_ text: String) throws -> [City] {
        var cities: [City] = []
        cities.reserveCapacity(34_100)
        for (number, line) in text.split(separator: "\n").enumerated() {
            let f = line.split(separator: "\t", omittingEmptySubsequences: false)
            guard f.count == 10, let id = Int64(f[0]), let latitude = Double(f[6]), let longitude = Double(f[7]),
                  let population = Int(f[9]) else {
                throw StartupError("cities.tsv line \(number + 1) is malformed")
            }
            let country = String(f[4])
            let grid = country == "KR" ? KMAGrid.cell(latitude: latitude, longitude: longitude) : nil
            cities.append(City(id: id, slug: String(f[1]), nameEn: String(f[2]), nameKo: f[3].isEmpty ? nil : String(f[3]),
                               country: country, admin1: String(f[5]), latitude: latitude, longitude: longitude,
                               timezone: String(f[8]), population: population, kmaNx: grid?.nx, kmaNy: grid?.ny))
        }
        return cities
    }
}
