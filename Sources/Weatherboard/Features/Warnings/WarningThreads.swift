import Foundation

/// One pinned thread per warning (issue 43 #2, issue 65 #10): while a warning is in force, the
/// board of the most populous city it covers (its home) has the site's post asking what people
/// see, pinned until the warning's end, and every other city it covers links to it from the
/// warning on its page (`Warnings.thread(of:)`): the people under one storm talk in one place
/// (one warning over Los Angeles had opened 271 threads, one per city in its polygon). An update
/// carries the thread on; its end (or cancellation) unpins it. Kept in the transaction that
/// keeps the warnings, so however many nodes take a feed, a warning gets one thread
/// (`posts_warning_thread` makes a second on a board impossible).
enum WarningThreads {
    /// The opening words of a thread in a city.
    typealias Words = (Warning, City) -> String
    /// Threads opened in one poll, at most (the rest open at the next): a feed cannot write
    /// thousands of posts at once.
    static let openedPerPoll = 100

    /// Brings the threads of `source`'s warnings in line with what is kept now: `replaced` are
    /// the (earlier id, later id) pairs of this poll's updates.
    static func keep(source: String, replaced: [(from: String, to: String)], now: Date, cities: CityIndex, words: Words,
                     _ db: any SQLConnection, _ changes: ChangeLog) throws {
        for (from, to) in replaced {
            _ = try db.execute("""
                UPDATE posts SET warning_id = ? WHERE warning_id = ?
                AND NOT EXISTS (SELECT 1 FROM posts q WHERE q.city_id = posts.city_id AND q.warning_id = ?)
                """, [.text(to), .text(from), .text(to)])
        }
        // Each warning's home: the most populous city it covers (the smaller id on a tie).
        var homes: [String: (Warning, City)] = [:]
        for (cityID, warnings) in try WarningStore.inForce(source: source, now: now, db) {
            guard let city = cities.city(id: cityID) else { continue }
            for warning in warnings {
                if let (_, home) = homes[warning.id], (home.population, -home.id) >= (city.population, -city.id) { continue }
                homes[warning.id] = (warning, city)
            }
        }
        var wanted: [String: (Warning, City)] = [:]
        for (id, (warning, home)) in homes { wanted["\(id) \(home.id)"] = (warning, home) }
        // A board pins at most `BoardQueries.pinsPerBoard` posts, a moderator's first: the most
        // severe warnings' threads take what is left, the others stay on the board unpinned.
        var pinnedKeys = Set<String>()
        for (cityID, threads) in Dictionary(grouping: wanted, by: { $0.value.1.id }) {
            let taken = try db.integer("SELECT count(*) FROM posts WHERE city_id = ? AND warning_id IS NULL AND pinned_until > ?",
                                       cityID, now.timeIntervalSince1970)
            let ranked = threads.sorted { ($0.value.0.severity, $1.value.0.onset, $1.key) > ($1.value.0.severity, $0.value.0.onset, $0.key) }
            pinnedKeys.formUnion(ranked.prefix(max(0, BoardQueries.pinsPerBoard - taken)).map(\.key))
        }
        let threads = try db.all("SELECT id, city_id, warning_id, pinned_until, removed_at IS NOT NULL FROM posts WHERE warning_id LIKE ?",
                                 [source + ":%"]) {
            (id: $0.int64(0), city: $0.int64(1), key: "\($0.string(2)) \($0.int64(1))", pinnedUntil: $0.optionalDouble(3), removed: $0.int(4) != 0)
        }
        let existing = Set(threads.map(\.key))
        for thread in threads {
            // A thread a moderator removed stays removed; any other is pinned exactly while its warning is in force.
            let until = thread.removed || !pinnedKeys.contains(thread.key) ? nil : wanted[thread.key]?.0.expires.timeIntervalSince1970
            guard thread.pinnedUntil != until, until != nil || (thread.pinnedUntil ?? 0) > now.timeIntervalSince1970 else { continue }
            try db.execute("UPDATE posts SET pinned_until = ? WHERE id = ?", until, thread.id)
            try changes.emit(.city(thread.city))
        }
        let opening = wanted.filter { !existing.contains($0.key) }.sorted(by: { $0.key < $1.key }).prefix(openedPerPoll)
        guard !opening.isEmpty else { return }
        let author = try SiteAccount.id(now: now, db)
        for (key, (warning, city)) in opening {
            guard let id = try db.one("""
                INSERT INTO posts (city_id, user_id, body, created_at, pinned_until, warning_id) VALUES (?, ?, ?, ?, ?, ?)
                ON CONFLICT DO NOTHING RETURNING id
                """, [city.id, author, words(warning, city), now.timeIntervalSince1970,
                      pinnedKeys.contains(key) ? warning.expires.timeIntervalSince1970 : nil, warning.id],
                { $0.int64(0) }) else { continue }
            try changes.emit(.post(PostEvent(.posted, id: id, city: city.id, parent: nil, author: author)))
        }
    }
}

/// The site's own account: the author of warnings' threads. Made when first needed; nobody can
/// sign in as it (`AccountStore.credentials` never finds it, and its password hash is random
/// bytes no password derives), block it, mute it or report its posts.
enum SiteAccount {
    static let username = "weatherboard"

    struct Taken: Error, CustomStringConvertible {
        var description: String { "the username \(SiteAccount.username) belongs to a member: the site's own account cannot be made" }
    }

    static func id(now: Date, _ db: any SQLConnection) throws -> Int64 {
        if let id = try db.one("SELECT id FROM users WHERE is_system = 1 ORDER BY id LIMIT 1", [], { $0.int64(0) }) { return id }
        func random(_ count: Int) -> String { Data((0..<count).map { _ in UInt8.random(in: 0...255) }).base64EncodedString() }
        let hash = "scrypt$32768$8$1$\(random(16))$\(random(64))"
        guard let id = try db.one("""
            INSERT INTO users (username, username_key, display_name, password_hash, role, created_at, is_system, level, level_set)
            VALUES (?, ?, 'Weatherboard', ?, 'user', ?, 1, 2, 2) ON CONFLICT DO NOTHING RETURNING id
            """, [username, username, hash, now.timeIntervalSince1970], { $0.int64(0) }) else { throw Taken() }
        return id
    }
}
