import Foundation

/// Loads the shipped city catalog (`cities.tsv`, derived from GeoNames by
/// `scripts/derive-cities.py`) into the database. No network needed.
public enum CityCatalog {
    /// The catalog file shipped with the application.
    public static var bundledFile: URL? { Bundle.module.url(forResource: "cities", withExtension: "tsv") }

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
            throw StartupError("the city catalog cities.tsv is missing from the build")
        }
        let cities = try parse(text)
        return try database.write { db in
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

/// The Korea Meteorological Administration's 5 km forecast grid: a Lambert conformal conic
/// projection (Earth radius 6371.00877 km, standard parallels 30° and 60°, origin 126° E 38° N
/// at grid cell 43, 136).
public enum KMAGrid {
    public static func cell(latitude: Double, longitude: Double) -> (nx: Int, ny: Int) {
        let radiansPerDegree = Double.pi / 180
        let re = 6371.00877 / 5.0 // Earth radius in grid units
        let slat1 = 30 * radiansPerDegree, slat2 = 60 * radiansPerDegree
        let olon = 126 * radiansPerDegree, olat = 38 * radiansPerDegree
        let xo = 43.0, yo = 136.0
        var sn = tan(Double.pi * 0.25 + slat2 * 0.5) / tan(Double.pi * 0.25 + slat1 * 0.5)
        sn = log(cos(slat1) / cos(slat2)) / log(sn)
        var sf = tan(Double.pi * 0.25 + slat1 * 0.5)
        sf = pow(sf, sn) * cos(slat1) / sn
        var ro = tan(Double.pi * 0.25 + olat * 0.5)
        ro = re * sf / pow(ro, sn)
        var ra = tan(Double.pi * 0.25 + latitude * radiansPerDegree * 0.5)
        ra = re * sf / pow(ra, sn)
        var theta = longitude * radiansPerDegree - olon
        if theta > Double.pi { theta -= 2 * Double.pi }
        if theta < -Double.pi { theta += 2 * Double.pi }
        theta *= sn
        let x = ra * sin(theta) + xo
        let y = ro - ra * cos(theta) + yo
        return (Int((x + 0.5).rounded(.down)), Int((y + 0.5).rounded(.down)))
    }
}
