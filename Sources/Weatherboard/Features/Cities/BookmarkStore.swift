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

    /// Bookmarks the city; false (and nothing added) when the person already has `limit` others.
    /// Twice is once.
    func add(cityID: Int64, userID: Int64, limit: Int, now: Date) throws -> Bool {
        try database.write(.subject(.member(userID))) { db in  // the member's bookmarks are counted under their lock
            if try db.exists("SELECT 1 FROM bookmarks WHERE user_id = ? AND city_id = ?", userID, cityID) { return true }
            guard try db.integer("SELECT count(*) FROM bookmarks WHERE user_id = ?", userID) < limit else { return false }
            try db.execute("INSERT INTO bookmarks (user_id, city_id, created_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING", userID, cityID, now)
            return true
        }
    }

    /// Adds the cities a guest bookmarked to the account's, in their order after the account's
    /// own, until it holds `limit`, in one transaction; how many did not fit.
    func merge(cityIDs: [Int64], userID: Int64, limit: Int, now: Date) throws -> Int {
        guard !cityIDs.isEmpty else { return 0 }
        return try database.write(.subject(.member(userID))) { db in  // the member's bookmarks are counted under their lock
            var held = Set(try db.all("SELECT city_id FROM bookmarks WHERE user_id = ?", [userID]) { $0.int64(0) })
            var left = 0
            // Each a moment after the last, so that "oldest first" keeps the guest's order.
            for (offset, cityID) in cityIDs.enumerated() where !held.contains(cityID) {
                guard held.count < limit else {
                    left += 1
                    continue
                }
                try db.execute("INSERT INTO bookmarks (user_id, city_id, created_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
                               userID, cityID, now.addingTimeInterval(Double(offset) / 1000))
                held.insert(cityID)
            }
            return left
        }
    }

    func remove(cityID: Int64, userID: Int64) throws {
        // Locks: one row of the member's.
        try database.write(.subjects) { try $0.execute("DELETE FROM bookmarks WHERE user_id = ? AND city_id = ?", userID, cityID) }
    }
}
