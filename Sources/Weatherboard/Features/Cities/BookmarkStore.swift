import Foundation

/// Signed-in people's bookmarked cities (guests keep theirs in a cookie).
struct BookmarkStore: Sendable {
    let database: AppDatabase

    /// Oldest first.
    func cityIDs(of userID: Int64) throws -> [Int64] {
        try database.readStatement { db in
            try db.all("SELECT city_id FROM bookmarks WHERE user_id = ? ORDER BY created_at, city_id", [userID]) { $0.int64(0) }
        }
    }

    /// Inside the caller's read, with whatever else its page needs.
    static func contains(cityID: Int64, userID: Int64, _ db: any SQLConnection) throws -> Bool {
        try db.exists("SELECT 1 FROM bookmarks WHERE user_id = ? AND city_id = ?", userID, cityID)
    }

    /// Adds the city unless the person has `limit` already; twice is once.
    /// Bookmarks the city; false (and nothing added) when the person already has `limit` others.
    func add(cityID: Int64, userID: Int64, limit: Int, now: Date) throws -> Bool {
        try database.write { db in
            if try db.exists("SELECT 1 FROM bookmarks WHERE user_id = ? AND city_id = ?", userID, cityID) { return true }
            guard try db.integer("SELECT count(*) FROM bookmarks WHERE user_id = ?", userID) < limit else { return false }
            try db.execute("INSERT INTO bookmarks (user_id, city_id, created_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING", userID, cityID, now)
            return true
        }
    }

    func remove(cityID: Int64, userID: Int64) throws {
        try database.write { try $0.execute("DELETE FROM bookmarks WHERE user_id = ? AND city_id = ?", userID, cityID) }
    }
}
