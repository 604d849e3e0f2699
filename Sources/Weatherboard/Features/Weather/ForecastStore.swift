import Foundation

/// The forecast cache every node shares (the newest answer per city and provider, as JSON), and
/// the leases that let one node fetch a city while the others wait for its answer.
struct ForecastStore: Sendable {
    let database: AppDatabase

    /// The newest cached forecast's JSON for the city, of any provider.
    func newest(cityID: Int64) throws -> (provider: String, payload: String)? {
        try database.readStatement { db in
            try db.one("SELECT provider, payload FROM weather_cache WHERE city_id = ? ORDER BY fetched_at DESC LIMIT 1", [cityID]) {
                ($0.string(0), $0.string(1))
            }
        }
    }

    /// Which provider's forecast is the newest cached for the city, and when it was fetched:
    /// what a refresh checks first (another node may have stored a newer one), without reading
    /// and decoding the JSON when it is the one in memory.
    func newestStamp(cityID: Int64) throws -> (provider: String, fetchedAt: Date)? {
        try database.readStatement { db in
            try db.one("SELECT provider, fetched_at FROM weather_cache WHERE city_id = ? ORDER BY fetched_at DESC LIMIT 1", [cityID]) {
                ($0.string(0), $0.date(1))
            }
        }
    }

    /// Deletes a provider's cached forecast for the city (one that cannot be shown).
    func discard(cityID: Int64, provider: String) throws {
        try database.write(.subjects) { try $0.execute("DELETE FROM weather_cache WHERE city_id = ? AND provider = ?", cityID, provider) }
    }

    /// Keeps the newest forecast; pages showing the old one (on every node) give way on commit.
    /// Its history (`ForecastHistory.record`) is written in the same transaction.
    func save(_ forecast: Forecast, for city: City, payload: String) throws {
        // Upserts that check nothing: they wait for no other write but one on every subject.
        try database.write(.subjects) { db, changes in
            try changes.emit(.weather(city.id))
            try db.execute("""
                INSERT INTO weather_cache (city_id, provider, fetched_at, payload) VALUES (?, ?, ?, ?)
                ON CONFLICT (city_id, provider) DO UPDATE SET fetched_at = excluded.fetched_at, payload = excluded.payload
                """, city.id, forecast.source, forecast.fetchedAt, payload)
            try ForecastHistory.record(forecast, city: city, db)
        }
    }

    /// Takes the city's lease for `holder` until `until`, unless another holder's is unexpired at `now`.
    func claimLease(cityID: Int64, holder: String, until: Double, now: Double) throws -> Bool {
        try database.write(.subjects) { db in
            try db.one("""
                INSERT INTO weather_refresh_leases (city_id, holder, until) VALUES (?1, ?2, ?3)
                ON CONFLICT (city_id) DO UPDATE SET holder = excluded.holder, until = excluded.until
                WHERE weather_refresh_leases.until <= ?4
                RETURNING holder
                """, [cityID, holder, until, now]) { _ in true } ?? false
        }
    }

    func releaseLease(cityID: Int64, holder: String) throws {
        try database.write(.subjects) { try $0.execute("DELETE FROM weather_refresh_leases WHERE city_id = ? AND holder = ?", cityID, holder) }
    }

    func isLeased(cityID: Int64) throws -> Bool {
        try database.readStatement { try $0.exists("SELECT 1 FROM weather_refresh_leases WHERE city_id = ?", cityID) }
    }
}
